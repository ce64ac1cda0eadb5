"""HippoRAG 2's per-corpus index: facts (deduplicated processed triplets) with their stored
proposition vectors, passage vectors and the graph (graph.py), built once per corpus state and
kept in memory (a question then costs two matrix-vector products and one PPR)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.methods.hipporag2.graph import HippoGraph, build_graph, text_processing
from engine.store.protocol import CorpusView


@dataclass
class HippoIndex:
    graph: HippoGraph
    facts: list[tuple[str, str, str]]  # processed (s, p, o), each once
    fact_triplets: list[int | None]  # the stored triplet each fact's vector is read from
    fact_chunks: list[list[str]]
    fact_vectors: np.ndarray  # (facts, dim)
    passage_vectors: np.ndarray  # (passages, dim), in graph.passages order


def build_index(corpus: CorpusView, topk: int, threshold: float) -> HippoIndex:
    passages = [c.chunk_id for c in corpus.chunks()]
    chunk_triples: dict[str, list[tuple[str, str, str]]] = {cid: [] for cid in passages}
    first: dict[tuple[str, str, str], int | None] = {}
    chunks_of: dict[tuple[str, str, str], list[str]] = {}
    for t in corpus.triplets():
        key = (text_processing(t.subject), text_processing(t.predicate), text_processing(t.object))
        for cid in t.chunk_ids:
            if cid in chunk_triples:
                chunk_triples[cid].append(key)
                if cid not in chunks_of.setdefault(key, []):
                    chunks_of[key].append(cid)
        first.setdefault(key, t.triplet_id)
    facts = list(first)
    graph = build_graph(chunk_triples, corpus.embed, topk=topk, threshold=threshold)
    ids = [first[f] for f in facts]
    vectors = np.asarray(corpus.proposition_vectors([i for i in ids if i is not None]), dtype=np.float32)
    if any(i is None for i in ids):  # an in-memory view without ids: embed the propositions
        vectors = np.asarray(corpus.embed([" ".join(f) for f in facts]), dtype=np.float32)
    passage_vectors = np.asarray(corpus.chunk_vectors(passages), dtype=np.float32) if passages else np.zeros((0, 1))
    return HippoIndex(graph, facts, ids, [chunks_of.get(f, []) for f in facts], vectors, passage_vectors)


_CACHE: OrderedDict[tuple[Any, ...], HippoIndex] = OrderedDict()
_LOCK = threading.Lock()
_MAX = 2


def corpus_index(corpus: CorpusView, topk: int, threshold: float) -> HippoIndex:
    """The corpus's index, rebuilt when its chunks or triplets change (counts differ) or the
    synonym settings do; in-memory views are keyed by identity."""
    where = getattr(corpus, "path", None) or getattr(corpus, "root", None) or id(corpus)
    c = corpus.counts()
    key = (str(where), int(c.chunks), int(c.triplets), topk, threshold)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    index = build_index(corpus, topk, threshold)
    with _LOCK:
        _CACHE[key] = index
        while len(_CACHE) > _MAX:
            _CACHE.popitem(last=False)
    return index
