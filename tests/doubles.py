"""The test suite's in-memory corpus: every call of `CorpusView` (engine/store/protocol.py) over
chunks and triplets held in memory, with exact inner-product search.

The entity graph and its neighbourhoods are built by the engine's own functions
(engine.store.graph.entity_graph_of / neighbourhood_of), so a method tested here sees the graph the
SQLite corpus gives it. `tests/test_contracts.py` runs this corpus and the SQLite one through the
same contract. It counts its embed and search calls, for tests about how often a method asks.

    corpus = MemoryCorpus(embedder, [chunk("a#0", "A", "...")], [("A", "born in", "B", ("a#0",))])
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from engine.store.graph import entity_graph_of, neighbourhood_of
from engine.types import Chunk, Triplet

_WORD = re.compile(r"\w+")


def hash_embed(texts: list[str], dim: int = 256) -> np.ndarray:
    """Bag-of-words hashing: deterministic, instant, good enough to drive a method's state machine."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in _WORD.findall(t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


class HashEmbedder:
    spec = "test:hash-256"
    dim = 256

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return hash_embed(list(texts), self.dim)


@dataclass(frozen=True)
class MemoryCounts:
    documents: int
    chunks: int
    triplets: int
    questions: int = 0
    extracted: int = 0
    pending: int = 0
    failed: int = 0


def chunk(cid: str, title: str, text: str, doc_id: str | None = None, position: int = 0) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=doc_id or title, position=position, title=title, text=text)


class MemoryCorpus:
    """chunks: `Chunk`s; triplets: (subject, predicate, object, chunk_ids) rows, ids from `first_tid`.
    `embed_title`: chunk vectors from "title\\ntext" (as the store does) or from the text alone."""

    def __init__(self, embedder: Any, chunks: Sequence[Chunk],
                 triplets: Iterable[tuple[str, str, str, tuple[str, ...]]] = (), *, first_tid: int = 0,
                 embed_title: bool = True):
        self.embedder = embedder
        self.name = "memory"
        self.path = f"memory-{id(self)}"
        self._chunks = list(chunks)
        self._by_id = {c.chunk_id: c for c in self._chunks}
        self._cids = [c.chunk_id for c in self._chunks]
        self._cvec = embedder.encode([f"{c.title}\n{c.text}" if embed_title else c.text for c in self._chunks])
        self._triplets = {i: Triplet(s, p, o, tuple(cids), i)
                          for i, (s, p, o, cids) in enumerate(triplets, first_tid)}
        self._tids = list(self._triplets)
        self._tvec = embedder.encode([t.proposition for t in self._triplets.values()]) if self._triplets else \
            np.zeros((0, getattr(embedder, "dim", 1)), dtype=np.float32)
        self.embed_calls = 0
        self.search_calls = 0
        self.searched_k: list[int] = []
        self._graph = None

    # --- vectors -------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embed_calls += 1
        return self.embedder.encode(list(texts))

    @staticmethod
    def _search(vecs: np.ndarray, mat: np.ndarray, ids: list, k: int) -> list[list[tuple[Any, float]]]:
        if not len(ids):
            return [[] for _ in range(len(vecs))]
        scores = np.asarray(vecs) @ mat.T
        return [[(ids[j], float(row[j])) for j in np.argsort(-row, kind="stable")[:k]] for row in scores]

    def search_chunks(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        return self._search(query_vecs, self._cvec, self._cids, k)

    def search_propositions(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        self.search_calls += 1
        self.searched_k.append(k)
        return self._search(query_vecs, self._tvec, self._tids, k)

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        idx = {c: i for i, c in enumerate(self._cids)}
        return self._cvec[[idx[c] for c in chunk_ids]]

    def proposition_vectors(self, triplet_ids: Sequence[int]) -> np.ndarray:
        idx = {t: i for i, t in enumerate(self._tids)}
        return self._tvec[[idx[t] for t in triplet_ids]]

    # --- reading -------------------------------------------------------------------------------
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self._by_id[c] for c in chunk_ids if c in self._by_id]

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        return [c for c in self._chunks if doc_id is None or c.doc_id == doc_id]

    def get_triplets(self, triplet_ids: Sequence[int]) -> list[Triplet]:
        return [self._triplets[i] for i in triplet_ids if i in self._triplets]

    def triplets(self, chunk_ids: Sequence[str] | None = None) -> list[Triplet]:
        if chunk_ids is None:
            return list(self._triplets.values())
        want = set(chunk_ids)
        return [t for t in self._triplets.values() if want.intersection(t.chunk_ids)]

    def entity_graph(self):
        if self._graph is None:
            self._graph = entity_graph_of(self._triplets.values())
        return self._graph

    def entity_neighbourhood(self, entities: Iterable[str], hops: int, per_entity: int = -1):
        return neighbourhood_of(self.entity_graph(), entities, hops, per_entity)

    def counts(self) -> MemoryCounts:
        return MemoryCounts(documents=len({c.doc_id for c in self._chunks}), chunks=len(self._chunks),
                            triplets=len(self._triplets), extracted=len(self._chunks))
