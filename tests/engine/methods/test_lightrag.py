"""LightRAG as a user runs it, through its own library (lightrag-hku): offline in all four modes with
the rule reasoner's keywords (and the screen saying so), with a model behind the loopback
OpenAI-compatible server (its keyword and answer calls recorded with their tokens), saved and
loaded, from the CLI, and its storage in the corpus folder rebuilt when the corpus changes or the
folder is missing or damaged. A small invented corpus; one model load (the `embedder` fixture)."""

from __future__ import annotations

import json
import shutil
import threading

import pytest

from components.methods.lightrag import STEP_TITLES, steps
from engine.core.types import Document
from engine.llm.base import OFFLINE_MODEL
from engine.methods.base import load_result, save_result
from engine.methods.lightrag import LightRAG, LightRAGSettings, LightRAGTrace, storage
from engine.methods.lightrag.method import KEYWORDS_OFFLINE
from engine.methods.lightrag.trace import KEYWORDS_LLM, KEYWORDS_RULES, MODES
from engine.methods.registry import build_method, method_info
from tests.doubles import MemoryCorpus, chunk
from tests.loopback import loopback_llm  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(300)

# An invented island: every name is made up, so no model could know the answers.
CHUNKS = [
    chunk("orla#0", "Orla Vennick", "Orla Vennick is a Danish sculptor. Orla Vennick was born in Tarnholm."),
    chunk(
        "tarn#0", "Tarnholm", "Tarnholm is a harbour town on the island of Ferø. The mayor of Tarnholm is Asger Brill."
    ),
    chunk("brill#0", "Asger Brill", "Asger Brill is a Danish politician who studied law in Aarhus."),
    chunk("fero#0", "Ferø", "Ferø is an island in the Baltic Sea known for its lighthouses."),
]
TRIPLETS = [
    ("Orla Vennick", "born in", "Tarnholm", ("orla#0",)),
    ("Orla Vennick", "is", "Danish sculptor", ("orla#0",)),
    ("Tarnholm", "located on", "Ferø", ("tarn#0",)),
    ("Tarnholm", "mayor", "Asger Brill", ("tarn#0",)),
    ("Asger Brill", "studied law in", "Aarhus", ("brill#0",)),
    ("Ferø", "located in", "Baltic Sea", ("fero#0",)),
]
QUESTION = "Who is the mayor of the town Orla Vennick was born in?"


@pytest.fixture(scope="module")
def corpus(embedder):
    return MemoryCorpus(embedder, CHUNKS, TRIPLETS)


@pytest.fixture(scope="module")
def offline(embedder):
    from engine.reasoners.offline import OfflineReasoner

    return OfflineReasoner(embedder)


def test_registered_as_a_baseline_the_app_offers_with_its_own_view():
    info = method_info("lightrag")
    assert info.title == "LightRAG" and info.baseline and info.in_app and not info.needs_model
    assert info.view == "components.methods.lightrag"


@pytest.mark.parametrize("mode", MODES)
def test_offline_every_mode_answers_with_the_rules_keywords_and_no_llm_call(corpus, offline, mode):
    res = build_method("lightrag", offline).answer(QUESTION, corpus, LightRAGSettings(mode=mode))
    tr = res.trace
    assert res.error == "" and res.answer == "Asger Brill"
    # the keyword step: the rules, handed to LightRAG's keyword fields; no LLM was asked
    assert tr.keywords_from == KEYWORDS_RULES and tr.keyword_call.model == OFFLINE_MODEL
    assert "Orla Vennick" in tr.low_level and "mayor" in tr.high_level
    assert res.usage.calls == 0 and res.usage.prompt_tokens == 0
    # the library's retrieval: entities and relations from the corpus's triplets, chunks mapped back
    assert {"Orla Vennick", "Tarnholm"} & {e.name for e in tr.entities} or mode == "global"
    assert any({r.source, r.target} == {"Tarnholm", "Asger Brill"} for r in tr.relations)
    assert res.evidence_chunk_ids == tr.chunk_ids() and {"orla#0", "tarn#0"} <= set(res.evidence_chunk_ids)
    assert tr.storage == {"chunks": 4, "entities": 7, "relations": 6}
    names = {d.name for d in tr.departures}
    assert {"keywords from rules", "triplets as stored", "answer prompt", "offline answer context"} <= names


def test_the_view_says_the_keywords_came_from_the_rules(corpus, offline):
    res = LightRAG(offline).answer(QUESTION, corpus)
    names = {c.chunk_id: f"{c.title} · 1" for c in corpus.chunks()}
    told = steps(res, names)
    assert [s.title for s in told] == STEP_TITLES
    keywords = {sec.heading: sec.lines for sec in told[0].sections}
    assert keywords["How they were found"] == [KEYWORDS_OFFLINE]
    assert any(line.startswith("keywords from rules:") for line in keywords["Departures from LightRAG"])
    assert told[2].graph is not None and told[2].graph["edges"]  # the retrieved relations, drawn
    assert told[3].sections[0].lines[0] == f"1. {names[res.evidence_chunk_ids[0]]}"
    assert any("Asger Brill" in line for sec in told[-1].sections for line in sec.lines)


def test_a_saved_run_loads_with_its_typed_trace_and_steps(corpus, offline, tmp_path):
    res = LightRAG(offline).answer(QUESTION, corpus, LightRAGSettings(mode="hybrid"))
    save_result(res, tmp_path / "run.json")
    back = load_result(tmp_path / "run.json")
    assert isinstance(back.trace, LightRAGTrace) and back == res
    assert back.trace.settings.mode == "hybrid" and back.trace.chunk_ids() == res.evidence_chunk_ids
    assert [s.title for s in steps(back)] == STEP_TITLES


def test_bad_settings_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="local, global, hybrid, mix"):
        LightRAGSettings(mode="naive")
    with pytest.raises(ValueError, match="top_k"):
        LightRAGSettings(top_k=0)


def _keywords_reply(messages, body) -> str:
    text = "\n".join(str(m.get("content", "")) for m in messages)
    if "high_level_keywords" in text:  # LightRAG's keyword-extraction prompt
        return json.dumps({"high_level_keywords": ["mayor", "birthplace"], "low_level_keywords": ["Orla Vennick"]})
    if "---Role---" in text:  # LightRAG's own answer prompt (rag_response)
        return "Asger Brill is the mayor of Tarnholm, where Orla Vennick was born."
    return "Asger Brill"


def test_with_a_model_lightrag_asks_it_for_keywords_and_every_call_is_recorded(corpus, loopback_llm):  # noqa: F811
    from engine.reasoners import make_reasoner

    loopback_llm.reply = _keywords_reply
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-lightrag")
    res = LightRAG(reasoner).answer(QUESTION, corpus)
    tr = res.trace
    assert res.error == "" and res.answer == "Asger Brill"
    assert tr.keywords_from == KEYWORDS_LLM and tr.high_level == ["mayor", "birthplace"]
    assert tr.low_level == ["Orla Vennick"]
    assert [c.job for c in tr.calls()] == ["keywords", "answer"] and len(loopback_llm.answered) == 2
    assert tr.other_calls == []  # every call LightRAG made is one of the two
    assert "high_level_keywords" in tr.keyword_call.messages[-1]["content"]  # LightRAG's prompt, as sent
    assert res.usage.calls == 2 and res.usage.prompt_tokens == sum(c.prompt_tokens for c in tr.calls()) > 0
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in tr.calls())
    assert "Knowledge Graph Data" in tr.context  # the shared answer step read LightRAG's context
    assert "keywords from rules" not in {d.name for d in tr.departures}
    assert "sk-test-lightrag" not in json.dumps([c.messages for c in tr.calls()])


def test_lightrags_own_answer_step_goes_through_the_same_door(corpus, loopback_llm):  # noqa: F811
    from engine.reasoners import make_reasoner

    loopback_llm.reply = _keywords_reply
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-lightrag")
    res = LightRAG(reasoner).answer(QUESTION, corpus, LightRAGSettings(answer_step="lightrag"))
    tr = res.trace
    assert res.answer.startswith("Asger Brill is the mayor") and res.error == ""
    assert [c.job for c in tr.calls()] == ["keywords", "answer"] and res.usage.calls == 2
    assert tr.call.messages[0]["role"] == "system" and "---Role---" in tr.call.messages[0]["content"]
    assert "answer prompt" not in {d.name for d in tr.departures}


def test_a_provider_that_refuses_the_key_ends_the_question_with_the_reason(corpus, loopback_llm):  # noqa: F811
    from engine.reasoners import make_reasoner

    loopback_llm.faults.extend(["401"] * 3)
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-bad", max_attempts=1)
    res = LightRAG(reasoner).answer(QUESTION, corpus)
    assert res.stop_reason == "llm error" and "keyword step failed" in res.error and res.answer == ""


# --- the storage in a real corpus folder ---------------------------------------------------------------


def _documents(*names: str) -> list[Document]:
    by_title = {c.title: c.text for c in CHUNKS}
    return [Document(doc_id=f"d-{t}", title=t, text=by_title[t], source="invented.txt") for t in names]


@pytest.fixture()
def real_corpus(workspace):
    from engine.reasoners import make_reasoner
    from engine.triplets.extraction import run_extraction

    corpus = workspace.create("island")
    corpus.add_documents(_documents("Orla Vennick", "Tarnholm"))
    run_extraction(corpus, make_reasoner("", embedder=corpus.embedder))
    corpus.refresh_indexes()
    return corpus


def _forget_loaded_stores() -> None:
    """As a new process would start: nothing loaded yet."""
    storage._stores.clear()


def test_the_storage_lives_in_the_corpus_folder_and_is_reused(real_corpus, offline):
    seen: list[tuple[str, int]] = []
    first = LightRAG(offline).answer(
        "Where was Orla Vennick born?",
        real_corpus,
        on_step=lambda label, _: seen.append((label, threading.get_ident())),
    )
    folder = real_corpus.path / "lightrag"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert first.trace.storage_note.startswith("built") and first.answer == "Tarnholm"
    # the build's progress reaches the asking thread (where a page draws it), from start to end
    built = [label for label, _ in seen if label.endswith("texts embedded")]
    total = sum(first.trace.storage.values())
    assert built[0].endswith(f": 0/{total} texts embedded") and built[-1].endswith(f": {total}/{total} texts embedded")
    assert {thread for _, thread in seen} == {threading.get_ident()}
    assert (folder / manifest["workspace"] / "graph_chunk_entity_relation.graphml").is_file()
    assert sorted(p.name for p in folder.iterdir()) == sorted(["build.lock", "manifest.json", manifest["workspace"]])
    _forget_loaded_stores()
    again = LightRAG(offline).answer("Where was Orla Vennick born?", real_corpus)
    assert again.trace.storage_note.startswith("loaded from lightrag/ in ")
    assert again.evidence_chunk_ids == first.evidence_chunk_ids
    third = LightRAG(offline).answer("Where was Orla Vennick born?", real_corpus).trace.storage_note
    assert third.startswith("reused (loaded from lightrag/ in ") and third.endswith(" earlier in this process)")


def test_the_storage_is_rebuilt_when_a_document_is_added(real_corpus, offline):
    from engine.reasoners import make_reasoner
    from engine.triplets.extraction import run_extraction

    before = LightRAG(offline).answer("What did Asger Brill study?", real_corpus).trace
    real_corpus.add_documents(_documents("Asger Brill"))
    run_extraction(real_corpus, make_reasoner("", embedder=real_corpus.embedder))
    after = LightRAG(offline).answer("What did Asger Brill study?", real_corpus).trace
    assert after.storage_note.startswith("built") and after.storage["chunks"] == before.storage["chunks"] + 1
    assert any(c.chunk_id.startswith("d-Asger Brill") for c in after.chunks)
    folder = real_corpus.path / "lightrag"
    assert len([p for p in folder.iterdir() if p.is_dir()]) == 1  # the earlier build is gone


@pytest.mark.parametrize("damage", ["missing folder", "damaged file", "missing file"])
def test_a_missing_or_damaged_storage_is_rebuilt(real_corpus, offline, damage):
    first = LightRAG(offline).answer("Where was Orla Vennick born?", real_corpus)
    folder = real_corpus.path / "lightrag"
    ws = folder / json.loads((folder / "manifest.json").read_text())["workspace"]
    if damage == "missing folder":  # a restore that left it out
        shutil.rmtree(folder)
        assert storage.check(real_corpus) == "no build"
    elif damage == "damaged file":
        (ws / "vdb_entities.json").write_text('{"embedding_dim": 384, "data": []}')
        assert storage.check(real_corpus).startswith("vdb_entities.json is damaged")
    else:
        (ws / "graph_chunk_entity_relation.graphml").unlink()
        assert storage.check(real_corpus) == "graph_chunk_entity_relation.graphml is missing"
    _forget_loaded_stores()
    again = LightRAG(offline).answer("Where was Orla Vennick born?", real_corpus)
    assert again.trace.storage_note.startswith("built") and again.answer == first.answer == "Tarnholm"
    assert storage.check(real_corpus) == ""


def test_the_cli_asks_lightrag_in_process(real_corpus, workspace, monkeypatch, capsys):
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace.root))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    real_corpus.close()
    assert main(["ask", "island", "Where was Orla Vennick born?", "--method", "lightrag", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Tarnholm" in out and "keywords from the offline rules" in out and "storage:" in out


def test_the_questions_deadline_reaches_lightrags_own_model_calls(corpus, loopback_llm):  # noqa: F811
    """The deadline lives in the asking thread's context; LightRAG calls the model from its own
    event loop and queue workers, and the deadline must still bound that call."""
    from engine.llm.deadline import within
    from engine.reasoners import make_reasoner

    loopback_llm.reply = _keywords_reply
    loopback_llm.latency = 3.0
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-lightrag")
    with within(0.5, "question"):
        res = LightRAG(reasoner).answer(QUESTION, corpus)
    assert res.error.startswith("LightRAG's keyword step failed") and "question's deadline" in res.error
    assert res.stop_reason == "llm error" and res.answer == ""


def test_questions_from_several_threads_share_the_one_loop(corpus, offline):
    from concurrent.futures import ThreadPoolExecutor

    method = LightRAG(offline)
    asks = [("Where was Orla Vennick born?", "Tarnholm"), (QUESTION, "Asger Brill")] * 3
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda qa: method.answer(qa[0], corpus).answer, asks))
    assert results == [a for _, a in asks]


def test_a_keyword_call_that_fails_after_its_retries_is_the_results_error(corpus, loopback_llm):  # noqa: F811
    from engine.reasoners import make_reasoner

    loopback_llm.fail_after, loopback_llm.fail_mode = 0, "500"
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test", max_attempts=1)
    res = LightRAG(reasoner).answer(QUESTION, corpus)
    assert res.error.startswith("LightRAG's keyword step failed") and res.answer == "" and res.trace.call is None
    assert len(loopback_llm.requests) == 1  # no answer call after it
