"""Contract tests: every implementation of a protocol the methods depend on keeps the same promises.

One parametrized test per promise, run over each implementation we ship (and the test doubles the
other tests rely on, so a double cannot drift from the real thing):

* LLM: ScriptedLLM, LiteLLMClient against the loopback OpenAI-compatible server, the same client
  answering from its response cache.
* Reasoner: LLMReasoner over a scripted LLM, the offline reasoner, the test suite's scripted reasoner.
* Embedder: the bundled sentence-transformers model, LiteLLMEmbedder against the loopback server.
* Reranker: embedding cosine, LiteLLMReranker over a stand-in for litellm's rerank call.
* Corpus (`CorpusView`, what the methods may ask): the SQLite corpus and the suite's in-memory one.

The vector-store contract (FAISS exact, FAISS HNSW, milvus-lite) lives in tests/engine/store/test_vector_backends.py.
"""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from engine.embed.base import Embedder
from engine.embed.rerank import Reranker
from engine.llm.base import LLM, Completion, LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, Reasoner, SolveResult
from tests.loopback import LoopbackServer

KEY = "sk-contract-test-0000"
MSG = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Who directed Alien?"}]


@pytest.fixture(scope="module")
def server():
    srv = LoopbackServer().start()
    srv.reply = lambda messages, body: "Ridley Scott"
    yield srv
    srv.stop()


# --- LLM ------------------------------------------------------------------------------------------


def _scripted_llm(_server, _tmp):
    from engine.llm.scripted import ScriptedLLM

    return ScriptedLLM(["Ridley Scott"], repeat_last=True)


def _litellm(server, _tmp):
    from engine.llm.litellm_client import LiteLLMClient

    return LiteLLMClient("openai/gpt-4o-mini", api_base=server.base_url, api_key=KEY, backoff=0.01, timeout=5)


def _litellm_cached(server, tmp):
    from engine.llm.litellm_client import LiteLLMClient

    llm = LiteLLMClient(
        "openai/gpt-4o-mini", api_base=server.base_url, api_key=KEY, backoff=0.01, timeout=5, cache=tmp / "cache.sqlite"
    )
    llm.complete(MSG)
    llm.complete(MSG, json_mode=True)  # warm: the contract calls below are answered from the cache
    return llm


LLMS = {"scripted": _scripted_llm, "litellm": _litellm, "litellm-cached": _litellm_cached}


@pytest.fixture(params=list(LLMS))
def llm(request, server, tmp_path):
    return LLMS[request.param](server, tmp_path)


def test_llm_is_an_llm_and_reports_usage(llm):
    assert isinstance(llm, LLM) and llm.model
    for json_mode in (False, True):
        c = llm.complete(MSG, json_mode=json_mode)
        assert isinstance(c, Completion) and c.text.strip() == "Ridley Scott"
        # tokens are what the prompt and reply needed, whether or not they were paid for
        assert c.prompt_tokens > 0 and c.completion_tokens > 0
        assert c.cost is None or c.cost >= 0
        assert c.latency >= 0 and c.attempts >= 0 and isinstance(c.cached, bool)
        if c.cached:
            assert c.attempts == 0 and c.latency == 0 and (c.cost or 0) == 0


def test_llm_never_mutates_the_messages(llm):
    messages = [dict(m) for m in MSG]
    llm.complete(messages)
    assert messages == MSG


# --- Reasoner ------------------------------------------------------------------------------------


def _llm_reasoner(embedder):
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    def reply(messages):
        system = messages[0]["content"]
        if "named entities" in system:
            return json.dumps({"named_entities": ["Alien", "Ridley Scott"]})
        if "unknowns" in system and "bindings" in system:
            return json.dumps({"bindings": {"?director": "Ridley Scott"}, "sources": {"?director": "P1"}})
        if "placeholders" in system or "decompose" in system.lower() or "query triplets" in system:
            return json.dumps({"triplets": [["Alien", "directed by", "?director"]]})
        if "triples" in system or "triplets" in system:
            return json.dumps({"triples": [["Alien", "directed by", "Ridley Scott"]]})
        return "Ridley Scott"

    return LLMReasoner(ScriptedLLM(reply))


def _offline(embedder):
    from engine.reasoners.offline import OfflineReasoner

    return OfflineReasoner(embedder)


def _scripted_reasoner(_embedder):
    from tests._t2rag_helpers import Q, ScriptedReasoner

    return ScriptedReasoner(
        decomposition=[Q("Alien", "directed by", "?director")],
        solves=[SolveResult(bindings={"?director": "Ridley Scott"})] * 4,
        answers=["Ridley Scott"] * 4,
        chats=["So the answer is: Ridley Scott."] * 4,
    )


REASONERS = {"llm": _llm_reasoner, "offline": _offline, "scripted": _scripted_reasoner}
QUESTION = "Who directed the film Alien?"
TEXT = "Alien is a 1979 science fiction horror film directed by Ridley Scott."
EVIDENCE = Evidence(propositions=("Alien directed by Ridley Scott",), chunks=(("alien#0", "Alien\n" + TEXT),))


@pytest.fixture(params=list(REASONERS))
def reasoner(request, embedder):
    return REASONERS[request.param](embedder)


def test_reasoner_is_a_reasoner_with_a_name(reasoner):
    assert isinstance(reasoner, Reasoner) and reasoner.name and isinstance(reasoner.supports_free_text, bool)


def _check_call(call, job: str) -> None:
    assert isinstance(call, LLMCall) and call.job == job and call.model
    assert isinstance(call.error, str) and call.prompt_tokens >= 0 and call.completion_tokens >= 0


def test_reasoner_jobs_return_typed_values_and_a_call(reasoner):
    if hasattr(reasoner, "extract") and not type(reasoner).__name__ == "ScriptedReasoner":
        triplets, call = reasoner.extract("Alien", TEXT)
        _check_call(call, "extract")
        assert all(isinstance(t, tuple) and len(t) == 3 and all(isinstance(p, str) and p for p in t) for t in triplets)
    query, call = reasoner.decompose(QUESTION)
    _check_call(call, "decompose")
    assert all(isinstance(t, QueryTriplet) for t in query) and query, call.error
    open_triplets = [t for t in query if t.placeholders]
    solved, call = reasoner.solve(QUESTION, [], open_triplets, EVIDENCE)
    _check_call(call, "solve")
    assert isinstance(solved, SolveResult)
    assert all(k.startswith("?") and isinstance(v, str) for k, v in solved.bindings.items())
    assert set(solved.sources) <= set(solved.bindings)
    answer, call = reasoner.answer(QUESTION, TEXT)
    _check_call(call, "answer")
    assert isinstance(answer, str) and "\n" not in answer.strip()


@pytest.mark.parametrize("kind", ["llm", "offline"])  # the scripted reasoner replays its script, whatever it gets
def test_reasoner_answers_nothing_from_nothing_without_raising(kind, embedder):
    reasoner = REASONERS[kind](embedder)
    answer, call = reasoner.answer(QUESTION, "", facts=[])
    _check_call(call, "answer")
    solved, call = reasoner.solve(
        QUESTION, [], [QueryTriplet("Alien", "directed by", "?d")], Evidence(propositions=(), chunks=())
    )
    assert isinstance(solved, SolveResult)


def test_reasoner_free_text_is_supported_or_refused_clearly(reasoner):
    messages = [{"role": "user", "content": "Think step by step: " + QUESTION}]
    if reasoner.supports_free_text:
        text, call = reasoner.chat("cot_step", messages)
        assert isinstance(text, str) and text
        _check_call(call, "cot_step")
    else:
        with pytest.raises(NotImplementedError, match="needs a real LLM"):
            reasoner.chat("cot_step", messages)


# --- Embedder ------------------------------------------------------------------------------------


def _bundled(embedder, _server):
    return embedder


def _litellm_embedder(_embedder, server):
    from engine.embed.litellm_embed import LiteLLMEmbedder

    return LiteLLMEmbedder("openai/text-embedding-3-small", api_base=server.base_url, api_key=KEY)


EMBEDDERS = {"bundled": _bundled, "litellm": _litellm_embedder}


@pytest.fixture(params=list(EMBEDDERS))
def any_embedder(request, embedder, server):
    return EMBEDDERS[request.param](embedder, server)


def test_embedder_gives_unit_float32_rows_in_order(any_embedder):
    e = any_embedder
    assert isinstance(e, Embedder) and e.spec and e.dim > 0 and KEY not in e.spec
    texts = ["Alien is a film.", "Ridley Scott directed it.", "Alien is a film."]
    vecs = e.encode(texts)
    assert vecs.shape == (3, e.dim) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert np.allclose(vecs[0], vecs[2], atol=1e-5) and not np.allclose(vecs[0], vecs[1])
    # batching does not change the vectors, and nothing in gives nothing out
    assert np.allclose(e.encode(texts, batch_size=1), vecs, atol=1e-5)
    assert e.encode([]).shape[0] == 0


# --- Reranker ------------------------------------------------------------------------------------


def _cosine(embedder, _monkeypatch):
    from engine.embed.rerank import EmbeddingCosineReranker

    return EmbeddingCosineReranker(embedder)


def _litellm_reranker(embedder, monkeypatch):
    """litellm's rerank stood in by a function that scores like the cosine reranker and returns the
    results sorted by relevance, as providers do; the contract is about our side of the call."""
    from engine.embed.rerank import EmbeddingCosineReranker, LiteLLMReranker
    from engine.llm import endpoints

    cosine = EmbeddingCosineReranker(embedder)

    def fake_rerank(**kw):
        scores = cosine.score(kw["query"], list(kw["documents"]))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return types.SimpleNamespace(results=[{"index": i, "relevance_score": scores[i]} for i in order])

    monkeypatch.setitem(sys.modules, "litellm", types.SimpleNamespace(rerank=fake_rerank))
    monkeypatch.setattr(endpoints, "_policy", endpoints.EndpointPolicy.strict(["http://127.0.0.1:9"]))
    return LiteLLMReranker("cohere/rerank-english-v3.0", api_base="http://127.0.0.1:9")


RERANKERS = {"cosine": _cosine, "litellm": _litellm_reranker}


@pytest.fixture(params=list(RERANKERS))
def reranker(request, embedder, monkeypatch):
    return RERANKERS[request.param](embedder, monkeypatch)


def test_reranker_scores_every_text_in_the_order_given(reranker):
    assert isinstance(reranker, Reranker) and reranker.name
    texts = ["Bees make honey.", "Alien was directed by Ridley Scott.", "Glaciers are ice."]
    scores = reranker.score(QUESTION, texts)
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert max(range(3), key=lambda i: scores[i]) == 1  # the relevant text, wherever it stands
    rev = reranker.score(QUESTION, texts[::-1])
    assert np.allclose(rev, scores[::-1], atol=1e-5)
    assert reranker.score(QUESTION, []) == []


# --- Corpus (CorpusView) --------------------------------------------------------------------------

CORPUS_DOCS = [
    ("Me and Bobby McGee", "Me and Bobby McGee is a song written and performed by Kris Kristofferson."),
    ("Kris Kristofferson", "Kris Kristofferson is an American singer. His child is Tracy Kristofferson."),
    ("Roger Miller", "Roger Miller recorded Me and Bobby McGee first. His child is Dean Miller."),
    ("Alice Smith", "Alice Smith was born in Canada."),
]
CORPUS_TRIPLETS = [
    ("Me and Bobby McGee", "performer", "Kris Kristofferson", 0),
    ("Kris Kristofferson", "child", "Tracy Kristofferson", 1),
    ("Roger Miller", "recorded", "Me and Bobby McGee", 2),
    ("Roger Miller", "child", "Dean Miller", 2),
    ("Alice Smith", "born in", "Canada", 3),
]


def _sqlite_corpus(embedder, tmp_path):
    from engine.core.chunking import make_doc_id
    from engine.core.types import Document
    from engine.store import Workspace

    corpus = Workspace(tmp_path / "ws", embedder=embedder).create("contract")
    corpus.add_documents([Document(make_doc_id(t, x), t, x, "test", "text") for t, x in CORPUS_DOCS])
    by_title = {c.title: c.chunk_id for c in corpus.chunks()}
    corpus.import_triplets([(by_title[CORPUS_DOCS[i][0]], s, p, o) for s, p, o, i in CORPUS_TRIPLETS])
    return corpus


def _memory_corpus(embedder, _tmp_path):
    from tests.doubles import MemoryCorpus, chunk

    chunks = [chunk(f"c{i}#0", t, x) for i, (t, x) in enumerate(CORPUS_DOCS)]
    return MemoryCorpus(embedder, chunks, [(s, p, o, (f"c{i}#0",)) for s, p, o, i in CORPUS_TRIPLETS])


CORPORA = {"sqlite": _sqlite_corpus, "memory": _memory_corpus}


@pytest.fixture(params=list(CORPORA))
def corpus_view(request, embedder, tmp_path):
    return CORPORA[request.param](embedder, tmp_path)


def test_corpus_view_answers_the_methods_calls_alike(corpus_view):
    """The same documents and triplets give the same answers from the SQLite corpus and from the
    test suite's in-memory one, call by call (ids differ; titles, texts and triplets do not)."""
    from engine.store.protocol import CorpusView

    c = corpus_view
    assert isinstance(c, CorpusView)
    q = c.embed(["Who is the child of Kris Kristofferson?", "born in Canada"])
    assert q.dtype == np.float32 and np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-4)
    hits = c.search_chunks(q, 2)
    titles = [[x.title for x in c.get_chunks([cid for cid, _ in row])] for row in hits]
    assert titles[0][0] == "Kris Kristofferson" and titles[1][0] == "Alice Smith"
    assert all(a >= b for row in hits for (_, a), (_, b) in zip(row, row[1:]))
    ids = [cid for cid, _ in hits[0]]
    assert [x.chunk_id for x in c.get_chunks(ids[::-1] + ["no-such-chunk"])] == ids[::-1]
    assert np.allclose(c.chunk_vectors(ids) @ q[0], [s for _, s in hits[0]], atol=1e-4)
    props = c.search_propositions(q[1:], 1)[0]
    (best,) = c.get_triplets([props[0][0]])
    assert (best.subject, best.predicate, best.object) == ("Alice Smith", "born in", "Canada")
    assert np.allclose(c.proposition_vectors([best.triplet_id]) @ q[1], props[0][1], atol=1e-4)
    roger = next(x for x in c.chunks() if x.title == "Roger Miller")
    assert {(t.subject, t.predicate, t.object) for t in c.triplets([roger.chunk_id])} == {
        ("Roger Miller", "recorded", "Me and Bobby McGee"),
        ("Roger Miller", "child", "Dean Miller"),
    }
    one = c.entity_neighbourhood(["kris kristofferson"], 1)
    assert {d["predicate"] for _, _, d in one.edges(data=True)} == {"performer", "child"}
    two = c.entity_neighbourhood(["kris kristofferson"], 2)
    assert {d["predicate"] for _, _, d in two.edges(data=True)} == {"performer", "child", "recorded"}
    assert c.entity_graph().number_of_edges() == len(CORPUS_TRIPLETS)
    counts = c.counts()
    assert (counts.chunks, counts.triplets) == (len(CORPUS_DOCS), len(CORPUS_TRIPLETS))
