"""LightRAG's storage for one corpus: built from the corpus's chunks and triplets through the
library's custom-KG insertion, kept in the corpus folder, rebuilt when the corpus changes.

    store, note = open_store(corpus, on_progress) # built, loaded or reused; "built in 3.1 s"
    store.rag                                     # the library's `LightRAG` instance over it
    store.chunk_ids("chunk-3f2a...")              # LightRAG's chunk id -> the corpus's chunk ids

It lives in `<corpus>/lightrag/` (manifest.py: the layout, the stamp of the corpus state it was
built from, the hashes that tell a damaged or missing file); a corpus without a folder of its own,
such as the tests' in-memory view, or one on read-only storage that needs a build, gets a temporary
folder instead. A build embeds every entity and relation text with the corpus's embedder (chunk
texts reuse the vectors the corpus stored for them) and reports its progress through `on_progress`.
A store is loaded once per process and corpus state, then reused.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.core.progress import ProgressCallback, no_progress
from engine.methods.lightrag import runner
from engine.methods.lightrag.kg import CustomKG, chunk_content, custom_kg
from engine.methods.lightrag.library import cl100k_tokenizer, import_lightrag
from engine.methods.lightrag.manifest import (
    FOLDER,
    StorageError,
    check,
    corpus_folder,
    corpus_stamp,
    process_lock,
    read_manifest,
    stamp_key,
    why_not_usable,
    write_manifest,
)

__all__ = ["Store", "StorageError", "check", "corpus_stamp", "open_store", "why_not_usable"]

#: LightRAG's defaults for how many chunks an entity or relation lists (`max_source_ids_per_*`).
MAX_SOURCE_IDS = 200


@dataclass
class Store:
    """One built LightRAG storage, loaded and ready for questions."""

    rag: Any  # lightrag.LightRAG
    folder: Path
    workspace: str
    stamp: dict[str, Any]
    chunk_map: dict[str, list[str]]  # LightRAG chunk id -> the corpus's chunk ids (same text: several)
    counts: dict[str, int] = field(default_factory=dict)  # chunks, entities, relations
    skipped: dict[str, int] = field(default_factory=dict)  # triplets left out of the graph, by reason
    how: str = ""  # "built" (from the corpus) or "loaded" (from the folder)
    seconds: float = 0.0  # building or loading it took

    def chunk_ids(self, lightrag_chunk_id: str) -> list[str]:
        return self.chunk_map.get(lightrag_chunk_id, [])


# --- where -----------------------------------------------------------------------------------


_temp_root: tempfile.TemporaryDirectory | None = None


def _temp_folder(corpus: Any) -> Path:
    global _temp_root
    if _temp_root is None:
        _temp_root = tempfile.TemporaryDirectory(prefix="triplet-lens-lightrag-")
    return Path(_temp_root.name) / f"view-{id(corpus)}"


def _writable(folder: Path, corpus: Any) -> bool:
    return not getattr(corpus, "read_only", False) and os.access(folder, os.W_OK)


# --- the library instance ---------------------------------------------------------------------


async def _embed(texts: list[str], **_: Any) -> np.ndarray:
    """LightRAG's embedding function: the corpus's embedder (through the current hooks)."""
    hooks = runner.current()
    vecs = await runner.run_blocking(hooks.embed, list(texts))
    hooks.count_embedded(len(texts))
    return np.asarray(vecs, dtype=np.float32)


async def _llm(prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any) -> str:
    """LightRAG's model function: the question's reasoner (the one litellm door), each call recorded.
    A failure every later call would share (bad key, deadline) ends the question."""
    from engine.llm.base import LLMError

    hooks = runner.current()
    if hooks.chat is None:
        raise StorageError("LightRAG asked its model, but this run has none (the offline reasoner)")
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages += [
        {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))} for m in history_messages or []
    ]
    messages.append({"role": "user", "content": prompt})
    job = "keywords" if kwargs.get("keyword_extraction") or kwargs.get("response_format") else "answer"
    try:
        text, call = await runner.run_blocking(hooks.chat, job, messages)
    except LLMError as exc:
        hooks.errors.append(exc)
        raise
    hooks.calls.append(call)
    return text or ""


def _make_rag(folder: Path, ws: str, embedder: Any) -> Any:
    lib = import_lightrag()
    utils = lib["utils"]
    dim = int(getattr(embedder, "dim", 0) or 0)
    if dim <= 0:
        raise StorageError("the corpus's embedder does not say its dimension")
    return lib["core"].LightRAG(
        working_dir=str(folder),
        workspace=ws,
        kv_storage="JsonKVStorage",
        vector_storage="NanoVectorDBStorage",
        graph_storage="NetworkXStorage",
        doc_status_storage="JsonDocStatusStorage",
        tokenizer=cl100k_tokenizer(),
        embedding_func=utils.EmbeddingFunc(
            embedding_dim=dim, func=_embed, model_name=str(getattr(embedder, "spec", "") or "corpus-embedder")
        ),
        llm_model_func=_llm,
        llm_model_name="triplet-lens-reasoner",
        # every call goes through the reasoner, whose cache is the one cache; nothing is written
        # to the corpus folder at question time
        enable_llm_cache=False,
        enable_llm_cache_for_entity_extract=False,
        vector_db_storage_cls_kwargs={"cosine_better_than_threshold": COSINE_THRESHOLD},
        max_source_ids_per_entity=MAX_SOURCE_IDS,
        max_source_ids_per_relation=MAX_SOURCE_IDS,
    )


#: LightRAG's default cosine threshold for its vector stores (`COSINE_THRESHOLD`).
COSINE_THRESHOLD = 0.2


# --- building -----------------------------------------------------------------------------------


def _chunk_memo(corpus: Any, chunks: list) -> dict[str, np.ndarray]:
    """Chunk text as LightRAG will embed it -> the vector the corpus stored for that chunk."""
    sanitize = import_lightrag()["utils"].sanitize_text_for_encoding
    try:
        vecs = np.asarray(corpus.chunk_vectors([c.chunk_id for c in chunks]), dtype=np.float32)
    except Exception:  # noqa: BLE001 - a view without stored vectors: the texts are embedded
        return {}
    return {sanitize(chunk_content(c)): v for c, v in zip(chunks, vecs, strict=False)}


def _embedder_for(corpus: Any, memo: dict[str, np.ndarray]) -> Callable[[list[str]], np.ndarray]:
    def embed(texts: list[str]) -> np.ndarray:
        todo = [t for t in texts if t not in memo]
        fresh = dict(zip(todo, np.asarray(corpus.embed(todo), dtype=np.float32), strict=True)) if todo else {}
        return np.stack([memo[t] if t in memo else fresh[t] for t in texts])

    return embed


def _build(corpus: Any, folder: Path, stamp: dict[str, Any], on_progress: ProgressCallback) -> Store:
    t0 = time.perf_counter()
    lib = import_lightrag()
    utils = lib["utils"]
    chunks = corpus.chunks()
    clean = utils.sanitize_text_for_encoding
    kg = custom_kg(chunks, corpus.triplets(), utils.normalize_entity_name)
    for e in kg.entities:
        e["description"] = clean(e["description"])
    for r in kg.relationships:
        r["description"], r["keywords"] = clean(r["description"]), clean(r["keywords"])
    chunk_map: dict[str, list[str]] = {}
    for c in kg.chunks:
        chunk_map.setdefault(utils.compute_mdhash_id(clean(c["content"]), prefix="chunk-"), []).append(c["source_id"])
    total = len(kg.entities) + len(kg.relationships) + len(chunk_map)
    label = f"building LightRAG's storage: {len(kg.entities)} entities, {len(kg.relationships)} relations"
    on_progress(0, total, label)
    ws = f"w{stamp_key(stamp)[:8]}-{secrets.token_hex(3)}"
    (folder / ws).mkdir(parents=True, exist_ok=False)
    hooks = runner.Hooks(
        embed=_embedder_for(corpus, _chunk_memo(corpus, chunks)),
        on_embedded=lambda n: on_progress(min(n, total), total, label),
    )
    rag = _make_rag(folder, ws, corpus.embedder)
    try:
        runner.run(hooks, lambda: _insert(rag, kg, chunk_map))
    except BaseException:
        shutil.rmtree(folder / ws, ignore_errors=True)
        raise
    counts = {"chunks": len(chunk_map), "entities": len(kg.entities), "relations": len(kg.relationships)}
    write_manifest(folder, ws, stamp, counts, kg.skipped, chunk_map)
    for old in folder.iterdir():  # earlier builds (this one is the manifest's now)
        if old.is_dir() and old.name != ws:
            shutil.rmtree(old, ignore_errors=True)
    on_progress(total, total, label)
    return Store(rag, folder, ws, stamp, chunk_map, counts, kg.skipped, "built", time.perf_counter() - t0)


async def _insert(rag: Any, kg: CustomKG, chunk_map: dict[str, list[str]]) -> None:
    """The custom KG into the library's storages, then every source chunk written back onto the
    graph's nodes and edges (the custom-KG call records one; LightRAG's own merge lists them all,
    separated by its GRAPH_FIELD_SEP), then the graph saved."""
    sep = import_lightrag()["constants"].GRAPH_FIELD_SEP
    await rag.initialize_storages()
    await rag.ainsert_custom_kg(kg.payload())
    ours = {cid: lr for lr, cids in chunk_map.items() for cid in cids}

    def joined(sources: list[str]) -> str:
        return sep.join(list(dict.fromkeys(ours[c] for c in sources if c in ours))[:MAX_SOURCE_IDS])

    graph = rag.chunk_entity_relation_graph
    nodes = [(name, {"source_id": joined(srcs)}) for name, srcs in kg.entity_sources.items() if len(srcs) > 1]
    edges = [(s, o, {"source_id": joined(srcs)}) for (s, o), srcs in kg.relation_sources.items() if len(srcs) > 1]
    if nodes:
        await graph.upsert_nodes_batch(nodes)
    if edges:
        await graph.upsert_edges_batch(edges)
    await graph.index_done_callback()


async def _load(rag: Any) -> None:
    await rag.initialize_storages()


# --- the cache of loaded stores --------------------------------------------------------------------

_stores: dict[tuple[str, str], Store] = {}
_stores_lock = threading.Lock()
_build_locks: dict[str, threading.Lock] = {}


def open_store(corpus: Any, on_progress: ProgressCallback = no_progress) -> tuple[Store, str]:
    """The corpus's LightRAG storage for its current state, and what this call did for it: reused
    from this process, loaded from the corpus folder when a complete build of this state is there,
    else built (and saved there). The note reads "built in 3.1 s", "loaded from lightrag/ in 0.4 s"
    or "reused (built in 3.1 s earlier in this process)"."""
    stamp = corpus_stamp(corpus)
    home = corpus_folder(corpus)
    folder = home / FOLDER if home is not None else _temp_folder(corpus)
    key = (str(folder), stamp_key(stamp))
    with _stores_lock:
        if key in _stores:
            return _stores[key], _reused(_stores[key])
        thread_lock = _build_locks.setdefault(str(folder), threading.Lock())
    with thread_lock:
        with _stores_lock:
            if key in _stores:
                return _stores[key], _reused(_stores[key])
        t0 = time.perf_counter()
        store = _open(corpus, folder, stamp, home, on_progress)
        store.seconds = time.perf_counter() - t0
        with _stores_lock:
            for old in [k for k in _stores if k[0] == key[0]]:
                del _stores[old]  # an older state of the same corpus
            _stores[key] = store
        return store, _note(store)


def _note(store: Store) -> str:
    where = "" if store.how == "built" else f" from {store.folder.name}/"
    return f"{store.how}{where} in {store.seconds:.1f} s"


def _reused(store: Store) -> str:
    return f"reused ({_note(store)} earlier in this process)"


def _open(corpus: Any, folder: Path, stamp: dict, home: Path | None, on_progress: ProgressCallback) -> Store:
    if not why_not_usable(folder, stamp):
        store = _try_load(corpus, folder, stamp)
        if store is not None:
            return store
    if home is not None and not _writable(home, corpus):
        folder = _temp_folder(corpus)  # a read-only corpus: build beside, in a temporary folder
    folder.mkdir(parents=True, exist_ok=True)
    with process_lock(folder):
        # another process may have built it while this one waited
        if not why_not_usable(folder, stamp):
            store = _try_load(corpus, folder, stamp)
            if store is not None:
                return store
        return _build(corpus, folder, stamp, on_progress)


def _try_load(corpus: Any, folder: Path, stamp: dict) -> Store | None:
    data = read_manifest(folder)
    if data is None:
        return None
    rag = _make_rag(folder, data["workspace"], corpus.embedder)
    try:
        runner.run(runner.Hooks(embed=corpus.embed), lambda: _load(rag))
    except Exception:  # noqa: BLE001 - a folder LightRAG cannot read is rebuilt
        return None
    chunk_map = {str(k): [str(x) for x in v] for k, v in data["chunk_map"].items() if isinstance(v, list)}
    counts = {k: int(v) for k, v in (data.get("counts") or {}).items() if isinstance(v, int)}
    skipped = {k: int(v) for k, v in (data.get("skipped") or {}).items() if isinstance(v, int)}
    return Store(rag, folder, data["workspace"], stamp, chunk_map, counts, skipped, "loaded")
