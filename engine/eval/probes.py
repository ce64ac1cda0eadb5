"""Robustness probes: evaluate a method on a perturbed *copy* of a corpus, never the original.

* `drop_triplets(ws, corpus, 0.05)`: the same corpus with a random, seeded share of its triplets
  removed, as if extraction had missed them. T2RAG and KG2RAG lean on triplets differently
  (propositions are T2RAG's only retrieval key; KG2RAG only expands with them), so the drop
  shows which one degrades more gracefully.
* `shuffle_entities(ws, corpus)` (engine/eval/shuffle.py): KG2RAG's Shuffle-HotpotQA idea, every
  entity consistently renamed, so an LLM cannot answer from memory and must read the evidence.

The drop copy is made with SQLite's online backup of the source database (a consistent snapshot
even while another process writes), so documents, chunk ids and every stored vector stay
identical and nothing is re-embedded; only the dropped triplets' links are then removed.
"""

from __future__ import annotations

import random
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from engine.core.types import ExtractionStatus
from engine.eval.shuffle import shuffle_corpus
from engine.store import Corpus, CorpusError, Workspace


@dataclass(frozen=True)
class DropReport:
    corpus: str  # name of the copy
    triplets_before: int
    triplets_dropped: int
    triplets_after: int
    seed: int


def probe_name(base: str, suffix: str) -> str:
    """`hotpot` + `drop5` -> `hotpot-drop5`, kept within the 64-character corpus-name rule."""
    return f"{base[: 63 - len(suffix)]}-{suffix}"


def drop_copy_name(base: str, fraction: float, seed: int) -> str:
    return probe_name(base, f"drop{fraction * 100:g}-s{seed}")


def shuffle_copy_name(base: str, seed: int) -> str:
    return probe_name(base, f"shuffled-s{seed}")


def copy_corpus(ws: Workspace, corpus: Corpus, name: str, *, replace: bool = False) -> Corpus:
    """A byte-exact copy of `corpus` named `name` in `ws` (documents, chunks, vectors, triplets,
    questions, extraction statuses). The FAISS files are rebuilt from the copied vectors."""
    if ws.exists(name):
        if not replace:
            raise CorpusError(f"corpus {name!r} already exists; drop it or pass replace=True")
        ws.drop(name)
    dest_dir = ws.path_of(name)
    dest_dir.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{corpus.path / 'corpus.sqlite'}?mode=ro", uri=True)
    dst = sqlite3.connect(dest_dir / "corpus.sqlite")
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return ws.open(name)


def drop_triplets(
    ws: Workspace, corpus: Corpus, fraction: float, *, seed: int = 0, name: str | None = None, replace: bool = True
) -> tuple[Corpus, DropReport]:
    """A copy of `corpus` without a random `fraction` of its triplets (all their source links).

    The same seed on the same corpus drops the same triplets. The original is untouched."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    name = name or drop_copy_name(corpus.name, fraction, seed)
    # propositions are embedded lazily; embedding them once in the source (what its first search
    # would do anyway) spares every copy from embedding them again
    corpus.refresh_indexes()
    copy = copy_corpus(ws, corpus, name, replace=replace)
    triplets = copy.triplets()
    n_drop = round(fraction * len(triplets))
    # sort first: the draw depends on the seed and the corpus, never on query order
    ids = sorted(t.triplet_id for t in triplets if t.triplet_id is not None)
    dropped = set(random.Random(seed).sample(ids, n_drop))
    by_chunk: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    touched: set[str] = set()
    for t in triplets:
        for cid in t.chunk_ids:
            if t.triplet_id in dropped:
                touched.add(cid)
            else:
                by_chunk[cid].append(t.key)
    statuses = copy.extraction_statuses()
    for cid in sorted(touched):
        # store_extraction replaces a chunk's triplet links; kept triplets keep their ids and vectors
        status = statuses.get(cid) or ExtractionStatus(cid, "done", model="import")
        copy.store_extraction(cid, by_chunk.get(cid, []), status)
    copy.refresh_indexes()
    after = copy.counts().triplets
    return copy, DropReport(copy.name, len(triplets), len(triplets) - after, after, seed)


def shuffle_entities(
    ws: Workspace,
    corpus: Corpus,
    *,
    seed: int = 0,
    name: str | None = None,
    replace: bool = True,
    on_progress: Any = None,
):
    """See engine/eval/shuffle.py; here so every probe is in one place, and named like the others."""
    return shuffle_corpus(
        ws, corpus, name or shuffle_copy_name(corpus.name, seed), seed=seed, replace=replace, on_progress=on_progress
    )
