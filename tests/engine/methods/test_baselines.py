"""The baselines and the rerankers on a small hand-made corpus (bundled embedder, scripted reasoner)."""

from __future__ import annotations

import sys
import types

import pytest

from engine.embed.rerank import (
    CrossEncoderReranker,
    EmbeddingCosineReranker,
    LiteLLMReranker,
    RerankerError,
    make_reranker,
)
from engine.methods import build_method
from engine.methods.base import result_from_json, result_to_json
from engine.methods.baselines import (
    BM25RAG,
    BM25Settings,
    HybridRAG,
    HybridSettings,
    NoRetrieval,
    SemanticRAG,
    SemanticRerankRAG,
    SemanticRerankSettings,
    StandardRAG,
    bm25_index,
    rrf,
)
from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner, chunk

TOPICS = [
    "apple orchards",
    "river deltas",
    "jazz trumpet",
    "glacier ice",
    "desert cacti",
    "steam engines",
    "coral reefs",
    "medieval castles",
    "honey bees",
    "volcanic islands",
    "chess openings",
    "paper kites",
]
CHUNKS = [chunk(f"c{i}", t.title(), f"This paragraph is about {t} and nothing else.") for i, t in enumerate(TOPICS)]
# a paragraph whose only match to the question below is a rare code word: BM25 finds it, dense may not
CHUNKS.append(chunk("code", "Registry", "Form XQ-7731 must be filed with the county clerk."))
Q = "Which office receives form XQ-7731?"


@pytest.fixture(scope="module")
def corpus(embedder):
    return MemoryCorpus(embedder, CHUNKS)


def test_no_retrieval_sends_an_empty_context(corpus):
    r = ScriptedReasoner({Q: "the county clerk"})
    res = NoRetrieval(r).answer(Q, corpus)
    assert res.answer == "the county clerk" and res.evidence_chunk_ids == [] and r.contexts == [""]


def test_standard_and_semantic_send_top_k_in_score_order(corpus):
    r = ScriptedReasoner()
    std = StandardRAG(r).answer("Tell me about honey bees", corpus)
    sem = SemanticRAG(r).answer("Tell me about honey bees", corpus)
    assert len(std.evidence_chunk_ids) == 5 and len(sem.evidence_chunk_ids) == 10
    assert std.evidence_chunk_ids[0] == "c8"  # honey bees
    assert sem.evidence_chunk_ids[:5] == std.evidence_chunk_ids
    scores = [c.score for c in sem.trace.stages[0].chunks]
    assert scores == sorted(scores, reverse=True)
    assert r.contexts[0].startswith("Honey Bees\nThis paragraph is about honey bees")


class _ReverseReranker:
    name = "reverse-test-reranker"

    def score(self, query, texts):
        return [float(-i) if "castles" not in t else 100.0 for i, t in enumerate(texts)]


def test_semantic_rerank_reorders_candidates_and_keeps_k(corpus):
    res = SemanticRerankRAG(ScriptedReasoner(), reranker=_ReverseReranker()).answer(
        "apple orchards", corpus, SemanticRerankSettings(candidates=13, k=3)
    )
    dense, rerank = res.trace.stages
    assert len(dense.chunks) == 13
    assert res.evidence_chunk_ids[0] == "c7"  # the castle paragraph the fake reranker loves
    assert len(res.evidence_chunk_ids) == 3 and rerank.note == "reverse-test-reranker"


def test_hybrid_fuses_bm25_and_dense_and_finds_the_rare_code_word(corpus):
    res = HybridRAG(ScriptedReasoner()).answer(Q, corpus, HybridSettings(candidates=5, k=3))
    names = [s.name for s in res.trace.stages]
    assert names == ["dense", "bm25", "fusion"]  # no reranker configured: the fused order stands
    bm25, fusion = res.trace.stages[1], res.trace.stages[2]
    assert bm25.chunks[0].chunk_id == "code"
    assert "code" in res.evidence_chunk_ids
    assert res.evidence_chunk_ids == [c.chunk_id for c in fusion.chunks[:3]]
    assert "no reranker configured" in fusion.note


def test_hybrid_reranks_the_fused_candidates_when_a_reranker_is_set(corpus):
    res = HybridRAG(ScriptedReasoner(), reranker=_ReverseReranker()).answer(
        "apple orchards", corpus, HybridSettings(candidates=13, k=2)
    )
    assert [s.name for s in res.trace.stages] == ["dense", "bm25", "fusion", "rerank"]
    assert res.evidence_chunk_ids[0] == "c7"
    cos = HybridRAG(ScriptedReasoner()).answer(Q, corpus, HybridSettings(candidates=5, k=3, reranker="cosine"))
    assert "stored chunk vectors" in cos.trace.stages[3].note


def test_bm25_index_is_cached_per_corpus_and_rebuilt_when_chunks_change(embedder, corpus):
    assert bm25_index(corpus) is bm25_index(corpus)
    bigger = MemoryCorpus(embedder, CHUNKS[:3])
    bigger.path = corpus.path
    assert bm25_index(bigger) is not bm25_index(corpus)


def test_rrf_by_hand():
    fused = rrf([["a", "b", "c"], ["c", "a"]], k=1)
    # a: 1/2 + 1/3, c: 1/4 + 1/2, b: 1/3
    assert [cid for cid, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 2 + 1 / 3)


def test_bm25_alone_ranks_by_terms_and_sends_its_top_k(corpus):
    reasoner = ScriptedReasoner({Q: "the county clerk"})
    res = BM25RAG(reasoner).answer(Q, corpus, BM25Settings(k=2))
    (stage,) = res.trace.stages
    assert stage.name == "bm25" and stage.chunks[0].chunk_id == "code"  # the rare code word, by terms alone
    assert res.evidence_chunk_ids == [c.chunk_id for c in stage.chunks][:2] and res.evidence_chunk_ids[0] == "code"
    assert "XQ-7731" in reasoner.contexts[0] and res.answer == "the county clerk"
    none = BM25RAG(ScriptedReasoner()).answer("zzzz qqqq", corpus)
    assert none.evidence_chunk_ids == [] and "no query term matched" in none.trace.stages[0].note


def test_bm25_reads_a_stored_corpus_through_its_full_text_index(tmp_path):
    from engine.core.types import Document
    from engine.store import Workspace
    from tests.doubles import HashEmbedder

    c = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("bm25")
    c.add_documents([Document(ch.chunk_id, ch.title, ch.text, f"{ch.chunk_id}.txt") for ch in CHUNKS])
    res = build_method("bm25", ScriptedReasoner()).answer(Q, c)
    assert "FTS5" in res.trace.stages[0].note
    assert [x.title for x in res.trace.stages[0].chunks][:1] == ["Registry"]


@pytest.mark.parametrize("name", ["none", "standard", "semantic", "semantic-rerank", "hybrid", "bm25"])
def test_every_baseline_trace_round_trips_and_summarizes(corpus, name):
    m = build_method(name, ScriptedReasoner({Q: "clerk"}))
    res = m.answer(Q, corpus)
    back = result_from_json(result_to_json(res))
    assert back == res and type(back.trace) is type(res.trace)
    lines = m.summarize(res)
    assert lines[-1] == "answer: clerk" and any(line.startswith("context:") for line in lines)


# --- rerankers -------------------------------------------------------------------------------


def test_cosine_reranker_prefers_the_relevant_text(embedder):
    rr = make_reranker("", embedder)
    assert isinstance(rr, EmbeddingCosineReranker) and "cosine" in rr.name
    a, b = rr.score("Where do honey bees live?", ["Honey bees live in hives.", "Steam engines burn coal."])
    assert a > b


def test_make_reranker_specs_and_readable_errors(tmp_path):
    assert isinstance(make_reranker("litellm:cohere/rerank-english-v3.0"), LiteLLMReranker)
    with pytest.raises(RerankerError, match="does not exist"):
        make_reranker("ce:/no/such/folder")
    assert isinstance(make_reranker(str(tmp_path)), CrossEncoderReranker)  # an existing folder: lazy load
    with pytest.raises(RerankerError, match="unknown reranker"):
        make_reranker("bm42")


def _operator_lists(monkeypatch, base: str) -> None:
    """As if the operator had listed `base` in TRIPLET_LENS_API_BASES."""
    from engine.llm import endpoints

    monkeypatch.setattr(endpoints, "_policy", endpoints.EndpointPolicy.strict([base]))


def test_litellm_reranker_puts_scores_back_in_input_order(monkeypatch):
    sent = {}

    def fake_rerank(**kw):
        sent.update(kw)
        # providers return results sorted by relevance, not in input order
        return types.SimpleNamespace(
            results=[{"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.5}]
        )

    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(rerank=fake_rerank))
    _operator_lists(monkeypatch, "http://127.0.0.1:9")
    rr = LiteLLMReranker("cohere/rerank-english-v3.0", api_base="http://127.0.0.1:9")
    scores = rr.score("q", ["a", "b", "c"])
    assert scores[2] == 0.9 and scores[0] == 0.5 and scores[1] < 0.5  # left out -> below every returned one
    assert sent["api_base"] == "http://127.0.0.1:9" and sent["documents"] == ["a", "b", "c"]


def test_litellm_reranker_failure_names_model_and_endpoint(monkeypatch):
    def boom(**kw):
        raise ConnectionError("connection refused")

    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(rerank=boom))
    _operator_lists(monkeypatch, "http://127.0.0.1:9")
    with pytest.raises(RerankerError, match=r"cohere/rerank.*127\.0\.0\.1:9.*refused"):
        LiteLLMReranker("cohere/rerank-english-v3.0", api_base="http://127.0.0.1:9").score("q", ["a"])
