"""Recall@10 against exact search on real text, with the store's own index code and parameters
(`bench/scale_bench.py --real-recall N`; issue 30).

The vectors are the bundled MiniLM's, of distinct real texts: the shared HotpotQA and MuSiQue
paragraphs (title line + text, as chunks are embedded), their sentences, and the MuSiQue set's GPT-3.5
OpenIE propositions ("s p o", as propositions are embedded): up to N of them, embedded once and kept
in bench/out/real_vectors.npz; or (`--real-source DIR`) the vectors the bench corpora in DIR already
store (chunks, propositions, sentences), when embedding tens of thousands of texts does not fit the
machine's load. The queries are the sets' questions (300) and 200 texts held out of
the base, one at a time. For each size n (subsets of the base) it builds what the store builds at
that many vectors - `FaissVectorStore(kind, expected=n)`: IVF with `ivf_cells(n)` cells and
`ivf_probes` of them scanned (the same share at every size, a million included), HNSW with the
store's M and efSearch - and compares its top 10 with exact search's.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "bench" / "out" / "real_vectors_v2.npz"
_SPLIT = r"(?<=[.!?])\s+(?=[A-Z])"


def real_texts() -> tuple[list[str], list[str]]:
    """(base texts, questions) from ../shared/data."""
    texts: list[str] = []
    hp = json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for title, sents in hp.items():
        texts.append(title + "\n" + "".join(sents))
        texts += [s.strip() for s in sents if s.strip()]
    mq = json.loads((DATA / "musique_hipporag_train100" / "musique_train_corpus.json").read_text("utf-8"))
    for d in mq:
        texts.append(d["title"] + "\n" + d["text"])
        texts += [s for s in re.split(_SPLIT, d["text"]) if s]
    kag = json.loads((DATA / "musique_kag_100" / "musique_qa_100.json").read_text("utf-8"))
    for r in kag:  # its paragraphs are a Python literal, not JSON
        paras = ast.literal_eval(r["paragraphs"]) if isinstance(r["paragraphs"], str) else r["paragraphs"]
        for p in paras:
            texts.append(p["title"] + "\n" + p["paragraph_text"])
            texts += [s for s in re.split(_SPLIT, p["paragraph_text"]) if s]
    # pairs of consecutive sentences: more distinct real text, as a chunker cutting mid-paragraph makes
    paragraphs = [t.split("\n", 1)[1] for t in texts if "\n" in t]
    for para in paragraphs:
        sents = [s for s in re.split(_SPLIT, para) if s]
        texts += [a + " " + b for a, b in zip(sents, sents[1:])]
    openie = json.loads((DATA / "musique_hipporag_train100" / "openie_gpt-3.5-turbo-1106.json").read_text("utf-8"))
    for doc in openie["docs"]:
        texts += [" ".join(map(str, t)) for t in doc.get("extracted_triples", []) if isinstance(t, list) and len(t) == 3]
    questions = [r["question"] for r in json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text("utf-8"))]
    questions += [r["question"] for r in json.loads((DATA / "musique_hipporag_train100" / "musique_train.json").read_text("utf-8"))]
    questions += [r["question"] for r in json.loads((DATA / "musique_kag_100" / "musique_qa_100.json").read_text("utf-8"))]
    return list(dict.fromkeys(t for t in texts if len(t) > 10)), list(dict.fromkeys(questions))


def stored_vectors(workspace: Path) -> np.ndarray:
    """The real MiniLM vectors the bench corpora in `workspace` already hold (chunks, propositions,
    sentences: bench/answer_step_bench.py and bench/retrieval_quality.py build them), deduplicated."""
    import sqlite3

    parts = []
    for db_path in sorted(workspace.glob("*/corpus.sqlite")):
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        parts += [np.frombuffer(v, np.float32) for (v,) in db.execute("SELECT vec FROM chunks")]
        parts += [np.frombuffer(v, np.float32) for (v,) in db.execute("SELECT vec FROM triplets WHERE vec IS NOT NULL")]
        if db.execute("SELECT 1 FROM sqlite_master WHERE name='sentence_vecs'").fetchone():
            parts += [np.frombuffer(v, np.float16).astype(np.float32) for (v,) in db.execute("SELECT vec FROM sentence_vecs")]
        db.close()
    x = np.unique(np.stack(parts), axis=0) if parts else np.zeros((0, 384), np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def real_vectors(limit: int, source: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(base vectors, query vectors): the texts above embedded once and cached, or (`source`, a
    workspace folder) the vectors its corpora store, with the questions embedded now."""
    if source:
        from engine.embed import get_bundled_embedder

        return stored_vectors(Path(source))[:limit], get_bundled_embedder().encode(real_texts()[1])
    if CACHE.is_file():
        got = np.load(CACHE)
        if len(got["x"]) >= limit or got["complete"]:
            return got["x"][:limit], got["q"]
    import torch

    from engine.embed import get_bundled_embedder

    torch.set_num_threads(1)
    texts, questions = real_texts()
    emb = get_bundled_embedder()
    t0 = time.perf_counter()
    q = emb.encode(questions)
    x = emb.encode(texts[:limit], batch_size=128)
    print(f"embedded {len(x)} texts and {len(q)} questions in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(CACHE, x=x, q=q, complete=len(x) == len(texts))
    return x, q


def _store(kind: str, part: np.ndarray, n: int):
    """What the store builds for `kind` at n vectors; `ivf-1M-ratios`: IVF with the cells per
    sqrt(n) and the probed share the store uses at a million vectors, without the floor of 39
    vectors a cell that cuts the cells of a small index (it applies from ~24k vectors up only)."""
    from engine.vectors import FaissVectorStore
    from engine.vectors import faiss_store as fs

    if kind != "ivf-1M-ratios":
        store = FaissVectorStore(part.shape[1], kind, expected=n)
        store.train(part)
        return store
    import faiss

    cells = max(1, int(round(fs.IVF_CELLS_PER_ROOT * np.sqrt(n))))  # as _new_ivf, without the floor
    index = faiss.index_factory(part.shape[1], f"IVF{cells},Flat", faiss.METRIC_INNER_PRODUCT)
    index.cp.max_points_per_centroid = 64
    index.cp.min_points_per_centroid = 1
    index.train(np.ascontiguousarray(part))
    index.nprobe = fs.ivf_probes(cells)
    store = FaissVectorStore(part.shape[1], "ivf", index=index)
    return store


def measure(limit: int, source: str = "", kinds: tuple[str, ...] = ("ivf", "hnsw"), log=print) -> list[dict]:
    """Recall@10 of each kind against exact search at sizes up to `limit` real vectors."""
    from engine.vectors import FaissVectorStore

    x, q = real_vectors(limit, source)
    log(f"{len(x):,} real vectors ({source or CACHE.name}), {len(q)} questions + 200 held-out texts as queries")
    rng = np.random.default_rng(1)
    held = rng.choice(len(x), 200, replace=False)
    keep = np.setdiff1d(np.arange(len(x)), held)
    queries = np.concatenate([q, x[held]]).astype(np.float32)
    base = x[keep].astype(np.float32)
    sizes = sorted({s for s in (5_000, 10_000, 20_000, len(base)) if s <= len(base)})
    out = []
    log("| real vectors | kind | cells | probed | recall@10 | recall@1 | exact ms/q | approx ms/q | build s |")
    log("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        part = base[rng.permutation(len(base))[:n]] if n < len(base) else base
        ids = np.arange(n, dtype=np.int64)
        exact = FaissVectorStore(part.shape[1], "flat")
        exact.add(ids, part)
        t0 = time.perf_counter()
        want = np.concatenate([exact.search(v[None], 10)[1] for v in queries])
        exact_ms = (time.perf_counter() - t0) / len(queries) * 1000
        for kind in kinds + ("ivf-1M-ratios",):
            t0 = time.perf_counter()
            store = _store(kind, part, n)
            store.add(ids, part)
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            got = np.concatenate([store.search(v[None], 10)[1] for v in queries])
            ms = (time.perf_counter() - t0) / len(queries) * 1000
            r10 = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want.tolist(), got.tolist())]))
            r1 = float(np.mean(want[:, 0] == got[:, 0]))
            inner = store._index
            cells = int(inner.nlist) if kind.startswith("ivf") else 0
            probed = int(inner.nprobe) if kind.startswith("ivf") else 0
            row = {"n": n, "kind": kind, "cells": cells, "probed": probed, "recall10": r10, "recall1": r1,
                   "exact_ms": exact_ms, "ms": ms, "build_s": build}
            out.append(row)
            log(f"| {n:,} | {kind} | {cells or '-'} | {probed or '-'} | {r10:.3f} | {r1:.3f} | {exact_ms:.2f} | "
                f"{ms:.2f} | {build:.1f} |")
    return out


def search_floor(sizes: list[int], rounds: int = 5, queries: int = 100, log=print) -> None:
    """Per-query search time of the index `auto` gives at each size (exact below AUTO_IVF_AT, IVF
    with the store's cells and probes above), on random unit vectors, the sizes timed in turn for
    `rounds` rounds (medians: the machine's load hits every size alike). The part of a question
    that grows with the corpus; the rest of a method's work does not (docs/scaling.md)."""
    from engine.store.settings import AUTO_IVF_AT
    from engine.vectors import FaissVectorStore

    rng = np.random.default_rng(0)
    stores = {}
    for n in sizes:
        x = rng.standard_normal((n, 384)).astype(np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        kind = "ivf" if n >= AUTO_IVF_AT else "flat"
        t0 = time.perf_counter()
        store = FaissVectorStore(384, kind, expected=n)
        store.train(x[rng.choice(n, min(n, 64 * fs_cells(n)), replace=False)] if kind == "ivf" else x[:0])
        store.add(np.arange(n, dtype=np.int64), x)
        stores[n] = (store, time.perf_counter() - t0)
        del x
    q = rng.standard_normal((queries, 384)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(rounds):
        for n, (store, _) in stores.items():
            t0 = time.perf_counter()
            for v in q:
                store.search(v[None], 10)
            times[n].append((time.perf_counter() - t0) / queries * 1000)
    base = float(np.median(times[sizes[0]]))
    log("| vectors | kind | cells | probed | build s | search ms/q (median of rounds) | x first size |")
    log("|---|---|---|---|---|---|---|")
    for n, (store, build) in stores.items():
        med = float(np.median(times[n]))
        ivf = store.kind == "ivf"
        log(f"| {n:,} | {store.kind} | {int(store._index.nlist) if ivf else '-'} | "
            f"{int(store._index.nprobe) if ivf else '-'} | {build:.1f} | {med:.2f} | {med / base:.2f}x |")


def fs_cells(n: int) -> int:
    from engine.vectors.faiss_store import ivf_cells

    return ivf_cells(n)
