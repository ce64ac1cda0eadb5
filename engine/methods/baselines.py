"""The simple baselines the comparison needs (SPEC.md section 3), one small class each.

* `NoRetrieval` - the reasoner alone, no context.
* `StandardRAG` - top-5 chunks by cosine, one answer call (T2RAG's baseline).
* `SemanticRAG` - top-10 chunks by cosine (KG2RAG's baseline).
* `SemanticRerankRAG` - top-N by cosine, reranked, best k kept.
* `HybridRAG` - BM25 and dense lists fused by reciprocal rank, then reranked.
* `BM25RAG` - top-5 chunks by BM25 alone (the corpus's full-text index), as in T2RAG's tables.

Each records a `RetrievalTrace` subclass: the chunks and scores of every stage, the context
exactly as sent, and the answer call.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from engine.core.types import Chunk
from engine.embed.rerank import Reranker, is_cosine
from engine.llm.base import LLMCall
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.common import answer_step, cached_reranker, format_context
from engine.reasoners.base import Reasoner
from engine.store.protocol import CorpusView

# --- settings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoRetrievalSettings:
    """No knobs: the question goes to the reasoner with an empty context."""


@dataclass(frozen=True)
class StandardRAGSettings:
    k: int = 5
    """Chunks retrieved by cosine similarity and sent to the reasoner (T2RAG's baseline uses 5)."""


@dataclass(frozen=True)
class SemanticRAGSettings:
    k: int = 10
    """Chunks retrieved by cosine similarity and sent to the reasoner (KG2RAG's baseline uses 10)."""


@dataclass(frozen=True)
class SemanticRerankSettings:
    candidates: int = 30
    """Chunks retrieved by cosine similarity before reranking."""

    k: int = 10
    """Chunks kept after reranking and sent to the reasoner."""

    reranker: str = ""
    """"" = embedding cosine (then the rerank equals the dense order); `ce:/local/cross-encoder`
    or `litellm:<rerank model>` for a real reranker."""


@dataclass(frozen=True)
class HybridSettings:
    candidates: int = 30
    """Chunks taken from each retriever (BM25 and dense) before fusion."""

    k: int = 10
    """Chunks kept after fusion and reranking, sent to the reasoner."""

    rrf_k: int = 60
    """The constant of reciprocal-rank fusion: score = sum over lists of 1 / (rrf_k + rank)."""

    reranker: str = ""
    """"" = no reranker: keep the fused order (a cosine rerank would only restore the dense order
    and erase what BM25 added); `cosine`, `ce:/local/cross-encoder` or `litellm:<model>` rerank."""


@dataclass(frozen=True)
class BM25Settings:
    k: int = 5
    """Chunks retrieved by BM25 (the corpus's full-text index) and sent to the reasoner (T2RAG's
    baselines read 5)."""


# --- traces ----------------------------------------------------------------------------------


@dataclass
class RetrievedChunk:
    chunk_id: str
    title: str
    score: float


@dataclass
class Stage:
    """One retrieval stage: `dense`, `bm25`, `fusion` or `rerank`, with its chunks best first."""

    name: str
    chunks: list[RetrievedChunk] = field(default_factory=list)
    note: str = ""


@dataclass
class RetrievalTrace:
    question: str = ""
    stages: list[Stage] = field(default_factory=list)
    context: str = ""  # exactly as sent
    call: LLMCall | None = None
    answer: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def chunk_ids(self) -> list[str]:
        """Every chunk id a stage listed, each once, in order."""
        return list(dict.fromkeys(c.chunk_id for s in self.stages for c in s.chunks))


def _trace_of(name: str, settings_cls: type) -> type[RetrievalTrace]:
    """A baseline's trace: `RetrievalTrace` with its own settings type, so a saved run's settings
    load back as that dataclass (the traces differ in nothing else)."""
    cls = dataclasses.make_dataclass(
        name, [("settings", settings_cls, field(default_factory=settings_cls))], bases=(RetrievalTrace,)
    )
    cls.__module__ = __name__
    return cls


NoRetrievalTrace = _trace_of("NoRetrievalTrace", NoRetrievalSettings)
StandardRAGTrace = _trace_of("StandardRAGTrace", StandardRAGSettings)
SemanticRAGTrace = _trace_of("SemanticRAGTrace", SemanticRAGSettings)
SemanticRerankTrace = _trace_of("SemanticRerankTrace", SemanticRerankSettings)
HybridTrace = _trace_of("HybridTrace", HybridSettings)
BM25Trace = _trace_of("BM25Trace", BM25Settings)


# --- shared machinery ------------------------------------------------------------------------


class _Baseline(MethodDefaults):
    name = ""
    settings_cls: type[Any] = NoRetrievalSettings
    trace_cls: ClassVar[type[Any]] = RetrievalTrace
    whatif_knobs = {"k": (1, 30)}

    def __init__(self, reasoner: Reasoner, reranker: Reranker | None = None):
        self.reasoner = reasoner
        self.reranker = reranker  # overrides settings.reranker when given
        self._rerankers: dict[str, Reranker] = {}

    def answer(self, question: str, corpus: CorpusView, settings=None, on_step: StepCallback | None = None) -> Result:
        s = settings or self.settings_cls()
        step = on_step or (lambda label, payload: None)
        t0 = time.perf_counter()
        tr = self.trace_cls(question=question, settings=s)
        ids = self._retrieve(question, corpus, s, tr)
        tr.timings["retrieve"] = time.perf_counter() - t0
        step(f"retrieve: {len(ids)} chunks", tr)
        tr.context = format_context(corpus.get_chunks(ids)) if ids else ""
        t1 = time.perf_counter()
        tr.answer, tr.call, error = answer_step(self.reasoner, question, tr.context)
        tr.timings["generate"] = time.perf_counter() - t1
        total = time.perf_counter() - t0
        tr.timings["total"] = total
        step("answer", tr)
        return Result(
            method=self.name,
            question=question,
            answer=tr.answer,
            usage=Usage.from_calls([tr.call] if tr.call else [], total),
            evidence_chunk_ids=ids,
            stop_reason="answered" if not error else "llm error",
            error=error,
            reasoner=getattr(self.reasoner, "name", ""),
            trace=tr,
        )

    def _retrieve(self, question: str, corpus: CorpusView, s, tr: RetrievalTrace) -> list[str]:
        return []

    # helpers

    def _dense(
        self, question: str, corpus: CorpusView, k: int, tr: RetrievalTrace
    ) -> tuple[np.ndarray, list[tuple[str, float]]]:
        qvec = np.asarray(corpus.embed([question]), dtype=np.float32)[0]
        hits = [(cid, float(sc)) for cid, sc in corpus.search_chunks(qvec[None, :], k)[0]]
        tr.stages.append(Stage("dense", _named(corpus, hits)))
        return qvec, hits

    def _rerank(
        self, question: str, qvec: np.ndarray, corpus: CorpusView, ids: list[str], k: int, spec: str, tr: RetrievalTrace
    ) -> list[str]:
        reranker = self.reranker or (self._reranker(spec, corpus) if spec else None)
        if not ids:
            tr.stages.append(Stage("rerank", [], note="nothing to rerank"))
            return []
        if is_cosine(reranker):
            # The stored chunk vectors already hold what the cosine reranker would compute.
            scores = [float(x) for x in np.asarray(corpus.chunk_vectors(ids), dtype=np.float32) @ qvec]
            note = (
                "embedding cosine from stored chunk vectors (no cross-encoder configured; "
                "over dense candidates this keeps the dense order)"
            )
        else:
            assert reranker is not None  # is_cosine(None) is True
            chunks = {c.chunk_id: c for c in corpus.get_chunks(ids)}
            scores = reranker.score(question, [format_context([chunks[i]]) if i in chunks else "" for i in ids])
            note = reranker.name
        ranked = sorted(zip(ids, scores), key=lambda p: (-p[1], ids.index(p[0])))[:k]
        tr.stages.append(Stage("rerank", _named(corpus, ranked), note=note))
        return [cid for cid, _ in ranked]

    def _reranker(self, spec: str, corpus: CorpusView) -> Reranker:
        return cached_reranker(self._rerankers, spec, corpus)

    @staticmethod
    def summarize(result: Result) -> list[str]:
        tr: RetrievalTrace = result.trace
        lines = []
        if tr is not None:
            for st in tr.stages:
                lines.append(f"{st.name}: {len(st.chunks)} chunks" + (f" ({st.note})" if st.note else ""))
        lines.append(f"context: {len(result.evidence_chunk_ids)} chunks")
        lines.append(
            f"tokens: {result.usage.prompt_tokens} prompt + {result.usage.completion_tokens} completion"
            f" in {result.usage.calls} call(s)"
        )
        lines.append(f"answer: {result.answer}")
        return lines


def _named(corpus: CorpusView, pairs: list[tuple[str, float]]) -> list[RetrievedChunk]:
    titles = {c.chunk_id: c.title for c in corpus.get_chunks([cid for cid, _ in pairs])} if pairs else {}
    return [RetrievedChunk(cid, titles.get(cid, ""), float(sc)) for cid, sc in pairs]


# --- the baselines ---------------------------------------------------------------------------


class NoRetrieval(_Baseline):
    name = "none"
    settings_cls = NoRetrievalSettings
    trace_cls = NoRetrievalTrace
    whatif_knobs = {}  # nothing retrieved: nothing to vary


class StandardRAG(_Baseline):
    name = "standard"
    settings_cls: type[Any] = StandardRAGSettings
    trace_cls: ClassVar[type[Any]] = StandardRAGTrace

    def _retrieve(self, question, corpus: CorpusView, s, tr):
        _, hits = self._dense(question, corpus, s.k, tr)
        return [cid for cid, _ in hits]


class SemanticRAG(StandardRAG):
    name = "semantic"
    settings_cls = SemanticRAGSettings
    trace_cls = SemanticRAGTrace


class SemanticRerankRAG(_Baseline):
    name = "semantic-rerank"
    settings_cls = SemanticRerankSettings
    trace_cls = SemanticRerankTrace

    def _retrieve(self, question, corpus: CorpusView, s, tr):
        qvec, hits = self._dense(question, corpus, max(s.candidates, s.k), tr)
        return self._rerank(question, qvec, corpus, [cid for cid, _ in hits], s.k, s.reranker, tr)


class HybridRAG(_Baseline):
    name = "hybrid"
    settings_cls = HybridSettings
    trace_cls = HybridTrace

    def _retrieve(self, question, corpus: CorpusView, s, tr):
        n = max(s.candidates, s.k)
        qvec, dense = self._dense(question, corpus, n, tr)
        sparse = bm25_index(corpus).search(question, n)
        tr.stages.append(Stage("bm25", _named(corpus, sparse)))
        fused = rrf([[cid for cid, _ in dense], [cid for cid, _ in sparse]], s.rrf_k)
        tr.stages.append(Stage("fusion", _named(corpus, fused), note=f"reciprocal rank, k={s.rrf_k}"))
        if self.reranker is None and not s.reranker:
            tr.stages[-1].note += f"; no reranker configured: the fused top {s.k} are used"
            return [cid for cid, _ in fused[: s.k]]
        return self._rerank(question, qvec, corpus, [cid for cid, _ in fused], s.k, s.reranker, tr)


class BM25RAG(_Baseline):
    name = "bm25"
    settings_cls = BM25Settings
    trace_cls = BM25Trace

    def _retrieve(self, question, corpus: CorpusView, s, tr):
        index = bm25_index(corpus)
        hits = index.search(question, s.k)
        note = "the corpus's full-text index (SQLite FTS5)" if isinstance(index, StoredTextIndex) else "bm25s in memory"
        tr.stages.append(Stage("bm25", _named(corpus, hits), note=note if hits else note + "; no query term matched"))
        return [cid for cid, _ in hits]


def rrf(rankings: list[list[str]], k: int = 60) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: sum of 1 / (k + rank) over lists (rank from 1), best first.
    Ties keep the order of first appearance, so the result is deterministic."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking, start=1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    first = {cid: i for i, cid in enumerate(dict.fromkeys(c for r in rankings for c in r))}
    return sorted(scores.items(), key=lambda p: (-p[1], first[p[0]]))


# --- BM25: the corpus's full-text table, or an index cached per corpus in memory --------------


class StoredTextIndex:
    """BM25 from the corpus's own full-text table (SQLite FTS5, engine/store/fts.py): on disk,
    kept in step by the store, a question costs the postings of its terms."""

    def __init__(self, corpus):
        self._corpus = corpus

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return self._corpus.search_text(query, k)


class BM25Index:
    """bm25s over the corpus's chunk texts (lower-cased, English stop words removed)."""

    def __init__(self, chunks: list[Chunk]):
        import bm25s

        self._bm25s = bm25s
        self.ids = [c.chunk_id for c in chunks]
        self._retriever = bm25s.BM25()
        if chunks:
            tokens = bm25s.tokenize([f"{c.title} {c.text}" for c in chunks], stopwords="en", show_progress=False)
            self._retriever.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        if not self.ids or k <= 0:
            return []
        q = self._bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        if not q or not q[0]:
            return []
        docs, scores = self._retriever.retrieve(q, k=min(k, len(self.ids)), show_progress=False, n_threads=1)
        # A zero score means no query term occurs in the chunk: not a BM25 hit.
        return [(self.ids[int(d)], float(sc)) for d, sc in zip(docs[0], scores[0]) if sc > 0]


_BM25_CACHE: OrderedDict[tuple[Any, int], BM25Index] = OrderedDict()
_BM25_LOCK = threading.Lock()
_BM25_MAX = 4


def bm25_index(corpus: CorpusView) -> BM25Index | StoredTextIndex:
    """The corpus's BM25 index: its full-text table when it has one (a stored corpus), else one
    built in memory on first use and kept while the corpus's path and chunk count stay the same
    (adding or deleting documents changes the count, so it is rebuilt): in-memory views, and a
    read-only corpus from before the table."""
    if getattr(corpus, "text_search_ready", False):
        return StoredTextIndex(corpus)
    where = getattr(corpus, "path", None) or getattr(corpus, "root", None) or id(corpus)
    key = (str(where), int(corpus.counts().chunks))
    with _BM25_LOCK:
        if key in _BM25_CACHE:
            _BM25_CACHE.move_to_end(key)
            return _BM25_CACHE[key]
    index = BM25Index(corpus.chunks())
    with _BM25_LOCK:
        _BM25_CACHE[key] = index
        while len(_BM25_CACHE) > _BM25_MAX:
            _BM25_CACHE.popitem(last=False)
    return index


for _cls in (NoRetrieval, StandardRAG, SemanticRAG, SemanticRerankRAG, HybridRAG, BM25RAG):
    register_trace(_cls.name, _cls.trace_cls)
