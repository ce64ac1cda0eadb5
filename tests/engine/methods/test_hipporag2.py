"""HippoRAG 2 as a method a user runs: offline (recognition memory skipped, and said so), with an
LLM filter (scripted), on provider failure, saved and loaded, and told as steps by its view
(components/methods/hipporag2.py). Real MuSiQue paragraphs with HippoRAG's GPT-3.5 OpenIE triples
(tests/fixtures/hipporag2_musique.json, attribution inside); a hash embedder keeps it fast (the
parity with the authors' code is tests/engine/methods/test_parity_hipporag2.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.methods.hipporag2 import steps
from engine.llm.base import LLMError
from engine.methods.base import load_result, save_result
from engine.methods.hipporag2 import HippoRAG2, HippoRAG2Settings, HippoRAG2Trace
from engine.methods.hipporag2.trace import FILTER_SKIPPED_OFFLINE
from engine.methods.registry import build_method, method_info
from tests.doubles import HashEmbedder, MemoryCorpus, OfflineLikeReasoner, ScriptedReasoner, chunk
from tests.loopback import loopback_llm  # noqa: F401 - fixture

DATA = json.loads((Path(__file__).parents[2] / "fixtures" / "hipporag2_musique.json").read_text(encoding="utf-8"))
Q0 = DATA["questions"][0]
QUESTION = Q0["question"]  # Who was the first president of the association which published Journal of ...?
STEP_TITLES = ["Facts retrieved", "Facts kept", "Seed nodes", "Personalized PageRank", "Ranked passages", "Answer"]


@pytest.fixture(scope="module")
def corpus():
    chunks, rows = [], {}
    for p in Q0["paragraphs"]:
        cid = f"p{len(chunks)}"
        chunks.append(chunk(cid, p["title"], p["text"]))
        for s, pr, o in p["triples"]:
            rows.setdefault((s, pr, o), []).append(cid)
    return MemoryCorpus(HashEmbedder(), chunks, [(s, p, o, tuple(c)) for (s, p, o), c in rows.items()])


def _filter_reply(facts) -> str:
    body = json.dumps({"fact": [[f.subject, f.predicate, f.object] for f in facts]})
    return f"[[ ## fact_after_filter ## ]]\n{body}\n\n[[ ## completed ## ]]"


def test_registered_as_a_baseline_the_app_offers():
    info = method_info("hipporag2")
    assert info.title == "HippoRAG 2" and info.baseline and info.in_app and not info.needs_model


def test_offline_skips_recognition_memory_says_so_and_answers_from_the_top_passages(corpus):
    reasoner = OfflineLikeReasoner(answers=["G. Stanley Hall"])
    res = build_method("hipporag2", reasoner).answer(QUESTION, corpus)
    tr = res.trace
    assert tr.filter_skipped == FILTER_SKIPPED_OFFLINE and tr.filter_call is None
    assert tr.facts_kept == tr.facts_retrieved and len(tr.facts_retrieved) == 5
    assert [f.score for f in tr.facts_retrieved] == sorted((f.score for f in tr.facts_retrieved), reverse=True)
    assert res.evidence_chunk_ids == tr.chunk_ids() == [p.chunk_id for p in tr.ranked[:5]]
    # `tuned`: the dense head (`dense_first`) opens the ranking, the PageRank order follows
    head = [p for p in tr.ranked if p.dense_first]
    assert tr.ranked[: len(head)] == head and len(head) == tr.settings.dense_first == 2
    walk = tr.ranked[len(head) :]
    assert [p.score for p in walk] == sorted((p.score for p in walk), reverse=True)
    assert tr.context == reasoner.contexts[0] and res.answer == "G. Stanley Hall"
    assert any(s.kind == "phrase" for s in tr.seeds) and any(s.kind == "passage" for s in tr.seeds)
    assert tr.graph["phrase_nodes"] > 0 and tr.graph["passage_nodes"] == 20
    assert {d.name for d in tr.departures} >= {"answer prompt", "recognition memory skipped"}
    assert [d.kind for d in tr.departures if d.name == "recognition memory skipped"] == ["run"]


def test_the_filter_keeps_what_the_llm_returns_in_its_order(corpus):
    cands = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus).trace.facts_retrieved
    reasoner = ScriptedReasoner(chats=[_filter_reply([cands[2], cands[0]])], answers=["G. Stanley Hall"])
    res = HippoRAG2(reasoner).answer(QUESTION, corpus)
    tr = res.trace
    assert [f.line for f in tr.facts_kept] == [cands[2].line, cands[0].line] and tr.filter_skipped == ""
    assert tr.filter_call.job == "filter" and res.usage.calls == 2
    prompt = reasoner.chat_inputs[0][-1]["content"]
    assert QUESTION in prompt and cands[4].subject in prompt and "fact_before_filter" in prompt
    seeded = {s.node for s in tr.seeds if s.kind == "phrase"}
    assert seeded <= {x for f in tr.facts_kept for x in (f.subject, f.object)} and seeded


def test_a_filter_that_keeps_nothing_falls_back_to_dense_ranking(corpus):
    res = HippoRAG2(ScriptedReasoner(chats=['{"fact": []}'])).answer(QUESTION, corpus)
    assert res.trace.facts_kept == [] and "dense" in res.trace.fallback and not res.trace.ppr_top
    assert [p.score for p in res.trace.ranked] == [p.dense for p in res.trace.ranked]
    assert res.error == "" and res.evidence_chunk_ids


def test_a_provider_failure_in_the_filter_sets_the_error(corpus):
    res = HippoRAG2(ScriptedReasoner(chats=[LLMError("provider down (500)")])).answer(QUESTION, corpus)
    assert "recognition-memory step failed" in res.error and "provider down" in res.error
    assert res.stop_reason == "llm error" and res.trace.filter_call.error


def test_switching_recognition_memory_off_is_a_departure_from_the_paper(corpus):
    res = HippoRAG2(ScriptedReasoner()).answer(QUESTION, corpus, HippoRAG2Settings(recognition_memory=False))
    assert res.trace.filter_skipped == "recognition memory switched off" and res.usage.calls == 1
    assert res.trace.preset == "custom" and "recognition_memory" in {d.name for d in res.trace.departures}


def test_a_saved_run_loads_with_its_typed_trace_and_steps(corpus, tmp_path):
    res = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus)
    save_result(res, tmp_path / "run.json")
    back = load_result(tmp_path / "run.json")
    assert isinstance(back.trace, HippoRAG2Trace) and back == res
    assert back.trace.chunk_ids() == res.evidence_chunk_ids
    assert [s.title for s in steps(back)] == STEP_TITLES


def test_the_view_tells_the_run_step_by_step(corpus):
    names = {c.chunk_id: f"{c.title} · 1" for c in corpus.chunks()}
    offline = steps(HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus), names)
    assert [s.title for s in offline] == STEP_TITLES
    kept = offline[1]
    assert any("recognition memory skipped (offline reasoner)" in line for sec in kept.sections for line in sec.lines)
    ppr = offline[3]
    assert ppr.graph is not None and ppr.graph["nodes"] and ppr.graph["edges"]
    top = ppr.sections[0].lines[0]
    assert top.split("  ", 1)[1].split(": ", 1)[1] in {n["label"] for n in ppr.graph["nodes"]}
    ranked = offline[4].sections[0].lines
    assert ranked[0].startswith("1. ") and "· 1" in ranked[0]  # passages named for a reader
    cands = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus).trace.facts_retrieved
    filtered = steps(HippoRAG2(ScriptedReasoner(chats=[_filter_reply(cands[:1])])).answer(QUESTION, corpus), names)
    assert len(filtered[1].calls) == 1 and "fact_before_filter" in filtered[1].calls[0][1]
    assert not any("skipped" in line for sec in filtered[1].sections for line in sec.lines)
    assert len(filtered[5].calls) == 1  # the answer call


def test_the_cli_k_sets_the_passages_read_and_set_any_setting():
    from engine.cli.ask import method_settings

    s = method_settings("hipporag2", {"k": 8, "rounds": 3}, None, ["damping=0.7"])
    assert s.qa_top_k == 8 and s.damping == 0.7 and s.linking_top_k == 5


def test_runs_against_an_openai_compatible_endpoint(corpus, loopback_llm):  # noqa: F811
    from engine.reasoners import make_reasoner

    def reply(messages, body):
        last = messages[-1]["content"]
        if "fact_before_filter" in last:  # recognition memory: keep the first candidate
            facts = json.loads(last.split("[[ ## fact_before_filter ## ]]\n", 1)[1].split("\n\n", 1)[0])["fact"]
            return "[[ ## fact_after_filter ## ]]\n" + json.dumps({"fact": facts[:1]}) + "\n\n[[ ## completed ## ]]"
        return "G. Stanley Hall"

    loopback_llm.reply = reply
    reasoner = make_reasoner("openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-hippo")
    res = build_method("hipporag2", reasoner).answer(QUESTION, corpus)
    tr = res.trace
    assert res.error == "" and res.answer == "G. Stanley Hall"
    assert [f.line for f in tr.facts_kept] == [tr.facts_retrieved[0].line] and tr.filter_skipped == ""
    assert len(loopback_llm.answered) == 2 and res.usage.calls == 2
    assert res.usage.prompt_tokens == sum(c.prompt_tokens for c in tr.calls())
    assert "sk-test-hippo" not in json.dumps([c.messages for c in tr.calls()])


def test_the_filter_sends_the_authors_dspy_preamble_and_demonstrations(corpus):
    from engine.methods.hipporag2.filter_prompt import DEMOS, INPUT_TEMPLATE, OUTPUT_TEMPLATE, SYSTEM

    cands = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus).trace.facts_retrieved
    reasoner = ScriptedReasoner(chats=[_filter_reply(cands[:2])], answers=["G. Stanley Hall"])
    HippoRAG2(reasoner).answer(QUESTION, corpus, HippoRAG2Settings.paper())
    sent = reasoner.chat_inputs[0]
    assert sent[0] == {"role": "system", "content": SYSTEM} and "[[ ## fact_after_filter ## ]]" in SYSTEM
    assert "You must select up to 4 relevant facts" in SYSTEM  # the paper's Triple Filter instruction
    assert len(DEMOS) == 10 and len(sent) == 2 + 2 * len(DEMOS)
    q, before, after = DEMOS[0]
    assert sent[1] == {"role": "user", "content": INPUT_TEMPLATE.format(question=q, fact_before_filter=before)}
    assert sent[2] == {"role": "assistant", "content": OUTPUT_TEMPLATE.format(fact_after_filter=after)}
    assert sent[-1]["role"] == "user" and QUESTION in sent[-1]["content"] and cands[0].subject in sent[-1]["content"]


def test_the_filter_matches_replies_to_candidates_as_the_authors_str_tuple():
    from engine.methods.hipporag2.memory import match_candidates, parse_filter

    cands = [("lilith", "is", "a demon"), ("lilu", "is", "a spirit"), ("gallu", "is", "a demon")]
    reply = '[[ ## fact_after_filter ## ]]\n{"fact": [["lilu", "is", "spirit"], ["gallu", "is a", "demon"]]}\n\n'
    assert match_candidates(parse_filter(reply), cands) == [1, 2]
    assert parse_filter("no field at all") == [] and parse_filter('{"fact": [["a", "b", "c"]]}') == [["a", "b", "c"]]


def test_the_paper_preset_is_the_authors_config_and_the_offline_run_names_its_departure(corpus):
    from engine.methods.presets import departures, has_presets, preset_name, preset_settings

    assert has_presets("hipporag2")
    paper = preset_settings("hipporag2", "paper")
    assert paper == HippoRAG2Settings.paper() and preset_name("hipporag2", paper) == "paper"
    assert (paper.linking_top_k, paper.qa_top_k, paper.retrieval_top_k, paper.damping) == (5, 5, 200, 0.5)
    assert (paper.passage_node_weight, paper.synonymy_edge_topk, paper.synonymy_edge_sim_threshold) == (
        0.05,
        2047,
        0.8,
    )
    assert {d.kind for d in departures("hipporag2", paper)} <= {"fix", "engine"}
    tr = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus, paper).trace
    (ran,) = tr.run_departures()
    assert ran.name == "recognition memory skipped" and ran.kind == "run" and ran in tr.departures
    filtered = HippoRAG2(ScriptedReasoner(chats=['{"fact": []}'])).answer(QUESTION, corpus, paper).trace
    assert filtered.run_departures() == []


def _sqlite_corpus(tmp_path, embedder, *, graph: bool):
    """The fixture's paragraphs and triplets in a real corpus; `graph=False`: as a corpus made before
    the phrase graph was kept (triplets imported without the refresh that builds it)."""
    from engine.core.types import Document
    from engine.store import Workspace

    corpus = Workspace(tmp_path / "ws", embedder=embedder).create("hippo")
    docs = [Document(f"doc{i}", p["title"], p["text"], "test", "text") for i, p in enumerate(Q0["paragraphs"])]
    corpus.add_documents(docs)
    by_doc = {c.doc_id: c.chunk_id for c in corpus.chunks()}
    rows = [(by_doc[f"doc{i}"], s, p, o) for i, para in enumerate(Q0["paragraphs"]) for s, p, o in para["triples"]]
    corpus.import_triplets(rows, refresh=graph)
    return corpus


def test_first_use_on_an_older_corpus_builds_the_graph_with_progress_then_keeps_it(tmp_path, embedder):
    from engine.methods.hipporag2 import index
    from engine.store import Workspace

    corpus = _sqlite_corpus(tmp_path, embedder, graph=False)
    steps_seen: list[str] = []
    first = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, corpus, on_step=lambda label, _: steps_seen.append(label))
    building = [s for s in steps_seen if s.startswith("building HippoRAG 2's graph of hippo (first use)")]
    assert (
        building
        and "synonym edges" in building[-1]
        and steps_seen.index(building[-1]) < steps_seen.index("facts retrieved: 5")
    )
    assert first.trace.index.startswith("phrase graph updated:")
    # another process: the graph is read from the corpus, nothing is built and no phrase embedded
    index._CACHE.clear()
    again = Workspace(tmp_path / "ws", embedder=embedder).open("hippo")
    steps_seen.clear()
    second = HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, again, on_step=lambda label, _: steps_seen.append(label))
    assert not any(s.startswith("building") for s in steps_seen)
    assert second.trace.index.startswith("phrase graph stored")
    assert second.evidence_chunk_ids == first.evidence_chunk_ids and second.trace.graph == first.trace.graph
    # warmed (app start-up): the first question finds the index in this process's memory
    index._CACHE.clear()
    HippoRAG2.warm(again)
    assert HippoRAG2(OfflineLikeReasoner()).answer(QUESTION, again).trace.index == "in memory (this process)"


def test_summarize_is_called_on_the_class_as_the_cli_does(corpus):
    res = HippoRAG2(OfflineLikeReasoner(answers=["G. Stanley Hall"])).answer(QUESTION, corpus)
    lines = HippoRAG2.summarize(res)
    assert lines[0].startswith("facts retrieved: 5, kept: 5 (recognition memory skipped")
    assert lines[-1] == "answer: G. Stanley Hall"


@pytest.mark.parametrize(
    "change, words",
    [
        ({"damping": 1.5}, "damping must be between 0 and 1"),
        ({"linking_top_k": 0}, "linking_top_k must be at least 1"),
        ({"qa_top_k": -2}, "qa_top_k must be at least 1"),
        ({"passage_node_weight": -0.1}, "passage_node_weight must be 0 or more"),
        ({"synonymy_edge_sim_threshold": 2.0}, "is a cosine"),
        ({"dense_first": -1}, "dense_first must be 0 or more"),
        ({"rank_fusion": -1}, "rank_fusion is the fusion's rank constant"),
    ],
)
def test_a_setting_out_of_range_is_refused_with_its_name(change, words):
    from engine.cli.ask import method_settings

    with pytest.raises(ValueError, match=words):
        HippoRAG2Settings(**change)
    with pytest.raises(ValueError, match=words):  # as `ask --set` builds it
        method_settings("hipporag2", {}, "paper", [f"{k}={v}" for k, v in change.items()])
