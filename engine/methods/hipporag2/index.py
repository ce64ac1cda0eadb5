"""HippoRAG 2's per-corpus index: facts (deduplicated processed triplets) with their stored
proposition vectors, passage vectors (the stored chunk vectors) and the graph (graph.py) over the
phrase nodes and synonym edges the corpus keeps (`CorpusView.phrase_graph`: the SQLite corpus
stores them, engine/store/phrase_graph.py, and builds them after extraction or import).

Nothing here embeds a phrase once the corpus keeps its graph: assembling the index reads the
triplets and the stored vectors, and is kept in memory per corpus state (a question then costs two
matrix-vector products and one PPR).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.core.phrases import PhraseGraph
from engine.core.progress import ProgressCallback, no_progress
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
    how: str = ""  # how the phrase graph was had (read, updated or computed) and what assembling took
    _lexical: Any = field(default=None, repr=False)  # BM25 over the facts, built on first use
    _lexical_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def lexical_scores(self, question: str) -> np.ndarray:
        """Every fact's BM25 score against `question` (its words lower-cased, English stop words
        out, as the BM25 baseline's), in `facts` order; all zeros when no word of the question is in
        a fact. The index over the facts is built on the first call (a few thousand short strings)."""
        import bm25s

        with self._lexical_lock:
            if self._lexical is None:
                retriever = bm25s.BM25()
                if self.facts:
                    tokens = bm25s.tokenize([" ".join(f) for f in self.facts], stopwords="en", show_progress=False)
                    retriever.index(tokens, show_progress=False)
                self._lexical = retriever
        words = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)
        if not self.facts or not words or not words[0]:
            return np.zeros(len(self.facts))
        return np.asarray(self._lexical.get_scores(words[0]), dtype=np.float64)

    def predicates(self) -> dict[tuple[str, str], list[str]]:
        """(subject, object) -> the predicates of the facts joining them (for the PPR graph's edges)."""
        out: dict[tuple[str, str], list[str]] = {}
        for s, p, o in self.facts:
            out.setdefault((s, o), []).append(p)
        return out


def build_index(corpus: CorpusView, phrases: PhraseGraph) -> HippoIndex:
    """The index of `corpus` over its phrase graph `phrases` (`corpus.phrase_graph(...)`)."""
    t0 = time.perf_counter()
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
    graph = build_graph(chunk_triples, phrases.synonyms)
    ids = [first[f] for f in facts]
    vectors = np.asarray(corpus.proposition_vectors([i for i in ids if i is not None]), dtype=np.float32)
    if any(i is None for i in ids):  # an in-memory view without ids: embed the propositions
        vectors = np.asarray(corpus.embed([" ".join(f) for f in facts]), dtype=np.float32)
    passage_vectors = np.asarray(corpus.chunk_vectors(passages), dtype=np.float32) if passages else np.zeros((0, 1))
    took = time.perf_counter() - t0
    how = f"phrase graph {phrases.how or 'read'} ({phrases.seconds:.1f} s); index assembled in {took:.2f} s"
    return HippoIndex(graph, facts, ids, [chunks_of.get(f, []) for f in facts], vectors, passage_vectors, how)


_CACHE: OrderedDict[tuple[Any, ...], HippoIndex] = OrderedDict()
_LOCK = threading.Lock()
_MAX = 2


def corpus_index(
    corpus: CorpusView, topk: int, threshold: float, on_progress: ProgressCallback = no_progress
) -> tuple[HippoIndex, bool]:
    """The corpus's index and whether it came from this process's memory. Rebuilt when the phrase
    graph's stamp (the corpus's triplets), the chunk or triplet counts or the synonym settings
    change; a view that keeps no stamp (in memory) is keyed by identity and counts."""
    where = getattr(corpus, "path", None) or getattr(corpus, "root", None) or id(corpus)
    c = corpus.counts()
    phrases = corpus.phrase_graph(topk, threshold, on_progress)  # brought in step here, on first use
    key = (str(where), phrases.stamp, int(c.chunks), int(c.triplets), topk, threshold)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key], True
    index = build_index(corpus, phrases)
    with _LOCK:
        _CACHE[key] = index
        while len(_CACHE) > _MAX:
            _CACHE.popitem(last=False)
    return index, False


def warm(corpus: CorpusView, topk: int, threshold: float) -> None:
    """Load the corpus's index now (app start-up), so its first HippoRAG 2 question does not."""
    corpus_index(corpus, topk, threshold)
