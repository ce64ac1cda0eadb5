"""Issue 12 items 4 and 5 in the engine: a run's timeline (engine/runs/timeline.py) and what-if re-runs
on the recorded LLM replies (engine/runs/whatif.py, Session.rerun), over T2RAG, KG2RAG and a
baseline driven by LLMReasoner over a scripted LLM that counts its calls."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from engine.llm.base import Completion
from engine.llm.scripted import ScriptedLLM
from engine.methods import build_method
from engine.methods.base import result_from_json, result_to_json
from engine.reasoners import prompts
from engine.reasoners.llm_reasoner import LLMReasoner
from engine.runs.timeline import timeline, timeline_table
from engine.session import ConfigLocked, Session
from tests._t2rag_helpers import bobby_mcgee_corpus


def rerun(result, corpus, changes, fallback):
    """A what-if through the one path, `Session.rerun` (no budget), on the `fallback` reasoner."""
    return Session(workspace=Path("unused")).rerun(result, corpus, changes, reasoner=fallback)


BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"
PRICE = 0.001  # dollars per call


def reply(messages) -> Completion:
    """The same prompt always gets the same reply, as a temperature-0 model would give."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system == prompts.DECOMPOSE.system:
        text = json.dumps(
            {"triplets": [["Me and Bobby McGee", "performer", "?performer"], ["?performer", "child", "?child"]]}
        )
    elif system == prompts.SOLVE.system:
        text = json.dumps(
            {"bindings": {"?performer": "Kris Kristofferson"}}
            if "?performer" in user
            else {"bindings": {"?child": "Tracy Kristofferson"}}
        )
    else:
        text = "Tracy Kristofferson"
    words = sum(len(m["content"].split()) for m in messages)
    return Completion(
        text=text, model="scripted", prompt_tokens=words, completion_tokens=len(text.split()), cost=PRICE, latency=0.25
    )


def llm() -> ScriptedLLM:
    return ScriptedLLM(reply)


def first_run(method: str = "t2rag", **settings):
    corpus = bobby_mcgee_corpus()
    model = llm()
    cls = build_method(method, LLMReasoner(model))
    result = cls.answer(BRIDGE, corpus, cls.settings_cls(**settings))
    return result, corpus, model


# --- timeline ------------------------------------------------------------------------------------


def _check_nesting_and_sums(result):
    spans = timeline(result)
    by_id = {s.id: s for s in spans}
    root = spans[0]
    assert root.kind == "run" and root.parent is None and root.duration >= result.usage.total_time - 1e-9
    for s in spans[1:]:
        parent = by_id[s.parent]
        assert parent.start - 1e-9 <= s.start and s.end <= parent.end + 1e-9, (s, parent)
    llm_spans = [s for s in spans if s.kind == "llm"]
    assert all(by_id[s.parent].kind == "step" for s in llm_spans)  # every call sits under its step
    u = result.usage
    assert len(llm_spans) == u.calls
    assert sum(s.tokens for s in llm_spans) == root.tokens == u.prompt_tokens + u.completion_tokens
    assert root.cost == pytest.approx(u.cost) and sum(s.cost for s in llm_spans) == pytest.approx(u.cost)
    return spans


def test_t2rag_timeline_nests_calls_under_their_steps_and_adds_up_to_the_trace():
    result, _, model = first_run()
    spans = _check_nesting_and_sums(result)
    assert result.usage.calls == model.calls == 4 and result.usage.cost == pytest.approx(4 * PRICE)
    top = [s.label for s in spans if s.parent == 0]
    assert top == ["decompose", "round 1", "round 2", "answer (complete)"]
    rounds = [s for s in spans if s.label.startswith("round")]
    solves = [s for s in spans if s.label == "solve"]
    assert [by.parent for by in solves] == [r.id for r in rounds]  # round -> solve step -> its call
    assert all(any(c.parent == s.id and c.kind == "llm" for c in spans) for s in solves)
    # steps follow each other on the time axis: nothing overlaps at the top level
    tops = [s for s in spans if s.parent == 0]
    assert all(a.end <= b.start + 1e-9 for a, b in zip(tops, tops[1:]))
    text = "\n".join(timeline_table(spans))
    assert "round 2" in text and "  solve" in text and f"{4 * PRICE:.5f}" in text


def test_kg2rag_and_baseline_timelines_add_up_too():
    for method in ("kg2rag", "standard"):
        result, _, _ = first_run(method, k=3)
        spans = _check_nesting_and_sums(result)
        gen = next(s for s in spans if s.label == "generate")
        assert any(s.parent == gen.id and s.kind == "llm" for s in spans)
    kg = [s.label for s in timeline(first_run("kg2rag", k=3)[0]) if s.parent == 0]
    assert kg[0] == "seed" and kg[-1] == "generate"


def test_a_trace_without_times_still_draws_ordered_bars_from_its_call_latencies():
    result, _, _ = first_run()
    old = result_from_json(result_to_json(result))
    tr = old.trace  # as an old or hand-written file: no step seconds at all
    tr.decomposition.seconds = tr.synthesis.seconds = tr.total_seconds = old.usage.total_time = 0.0
    for r in tr.rounds:
        r.timing = type(r.timing)()
    spans = timeline(old)
    steps = [s for s in spans if s.parent == 0]
    assert [s.duration for s in steps] == [0.25] * 4 and not any(s.timed for s in steps)
    assert [s.start for s in steps] == [0.0, 0.25, 0.5, 0.75] and spans[0].duration == 1.0
    assert "not timed" in "\n".join(timeline_table(spans))


def test_cached_calls_cost_nothing_on_the_timeline():
    result, _, _ = first_run()
    for c in result.trace.calls()[:2]:
        c.cached = True  # as the response cache marks a hit; the price it would have had stays recorded
    result.usage = type(result.usage).from_calls(result.trace.calls(), result.usage.total_time)
    spans = _check_nesting_and_sums(result)
    cached = [s for s in spans if s.cached]
    assert len(cached) == 2 and all(s.cost == 0 and s.duration == 0 for s in cached)
    assert spans[0].cost == pytest.approx(2 * PRICE) and "cached, $0" in "\n".join(timeline_table(spans))


# --- what-if -------------------------------------------------------------------------------------


def test_a_rerun_with_unchanged_settings_makes_no_llm_call():
    result, corpus, _ = first_run()
    again_llm = llm()
    new, diff = rerun(result, corpus, {}, LLMReasoner(again_llm))
    assert again_llm.calls == 0
    assert new.answer == result.answer and new.evidence_chunk_ids == result.evidence_chunk_ids
    calls = new.trace.calls()
    assert len(calls) == 4 and all(c.replayed and c.cached for c in calls)
    assert new.usage.cost == 0 and new.usage.cached_calls == 4
    assert diff.replayed_calls == 4 and diff.new_calls == 0 and diff.settings == {}
    assert not diff.chunks_added and not diff.chunks_removed
    spans = timeline(new)
    assert all(s.replayed and s.cost == 0 for s in spans if s.kind == "llm")
    assert "replayed, $0" in "\n".join(timeline_table(spans))
    # the replayed flag survives a save and reload
    assert all(c.replayed for c in result_from_json(result_to_json(new)).trace.calls())


def test_a_changed_k_sends_only_the_changed_prompts():
    result, corpus, first_llm = first_run()
    again_llm = llm()
    new, diff = rerun(result, corpus, {"k": 1}, LLMReasoner(again_llm))
    old_prompts = [json.dumps(p, sort_keys=True) for p in first_llm.prompts]
    sent = [json.dumps(p, sort_keys=True) for p in again_llm.prompts]
    assert sent and not set(sent) & set(old_prompts)  # nothing recorded was asked again
    replayed = [c for c in new.trace.calls() if c.replayed]
    assert [c.job for c in replayed][0] == "decompose"  # the question did not change: neither did its prompt
    assert diff.replayed_calls == len(replayed) and diff.new_calls == again_llm.calls == len(sent)
    assert diff.settings == {"k": (5, 1)} and new.trace.settings.k == 1
    assert new.usage.cost == pytest.approx(again_llm.calls * PRICE)
    assert set(diff.chunks_removed) == set(result.evidence_chunk_ids) - set(new.evidence_chunk_ids)
    assert set(diff.chunks_added) == set(new.evidence_chunk_ids) - set(result.evidence_chunk_ids)
    assert diff.chunks_removed  # one chunk per round instead of five: evidence went away
    lines = "\n".join(diff.lines())
    assert "k 5 -> 1" in lines and f"{diff.replayed_calls} replayed" in lines
    for c in diff.chunks_removed:
        assert f"  - {c}" in lines


def test_kg2rag_rerun_with_more_room_lists_the_chunks_it_added_and_asks_again():
    result, corpus, _ = first_run("kg2rag", k=2, hops=0)
    again_llm = llm()
    new, diff = rerun(result, corpus, {"k": "3", "hops": "2"}, LLMReasoner(again_llm))  # the CLI's strings
    assert diff.settings == {"k": (2, 3), "hops": (0, 2)}
    assert diff.chunks_added == [c for c in new.evidence_chunk_ids if c not in result.evidence_chunk_ids] != []
    assert diff.chunks_kept == result.evidence_chunk_ids and not diff.chunks_removed
    # the answer context changed, so its one call went out; nothing was replayed
    assert diff.calls == (1, 1) and diff.new_calls == again_llm.calls == 1 and diff.replayed_calls == 0
    assert new.reasoner == "scripted" and not new.trace.call.replayed


def test_bad_changes_are_refused_with_a_readable_message():
    result, corpus, _ = first_run()
    with pytest.raises(ValueError, match="t2rag has no setting 'hops'; its settings: k, rounds"):
        rerun(result, corpus, {"hops": 2}, LLMReasoner(llm()))
    with pytest.raises(ValueError, match="k is a whole number"):
        rerun(result, corpus, {"k": "many"}, LLMReasoner(llm()))
    with pytest.raises(ValueError, match="k must be at least 1"):
        rerun(result, corpus, {"k": 0}, LLMReasoner(llm()))


def test_a_demo_session_reruns_only_the_whatif_knobs_through_its_own_reasoner(tmp_path):
    """Demo mode: a visitor's re-run goes through the session (budget, deadline, its reasoner) and
    may change k / rounds / hops within bounds, nothing that could point a call elsewhere."""
    result, corpus, _ = first_run("kg2rag", k=2)
    demo = Session(workspace=tmp_path, demo=True)
    with pytest.raises(ValueError, match="changes only k, hops"):
        demo.rerun(result, corpus, {"reranker": "litellm:evil/model"}, reasoner=LLMReasoner(llm()))
    with pytest.raises(ValueError, match="hops must be between 0 and 3"):
        demo.rerun(result, corpus, {"hops": 50}, reasoner=LLMReasoner(llm()))
    with pytest.raises(ConfigLocked):
        demo.set_model("openai/gpt-4o", api_base="http://evil.example")
    new, diff = demo.rerun(result, corpus, {"hops": 2})  # no reasoner given: the session's own (offline here)
    assert diff.settings == {"hops": (1, 2)} and new.trace.settings.hops == 2
    # the context did not change: the recorded reply answered, no rule or model was asked
    assert diff.replayed_calls == 1 and new.reasoner == "scripted" and new.trace.call.replayed
    new, diff = demo.rerun(result, corpus, {"k": 3})  # a new context: the session's offline rules answer it
    assert diff.replayed_calls == 0 and new.reasoner == "offline-rules" and diff.calls == (1, 0)


def test_a_rerun_keeps_the_first_runs_model_label_when_the_session_uses_it():
    result, corpus, _ = first_run()
    new, diff = rerun(result, corpus, {"rounds": 1}, LLMReasoner(llm()))
    assert new.reasoner == "scripted" and diff.reasoner == ("scripted", "scripted")
    assert dataclasses.asdict(new.trace.settings)["rounds"] == 1 and new.stop_reason == "round_cap"


# --- command line --------------------------------------------------------------------------------


def test_cli_prints_a_timeline_and_reruns_a_saved_trace(tmp_path, monkeypatch, capsys, embedder):
    from engine.cli import main
    from engine.methods import load_result, save_result
    from tests._app_helpers import build_small_corpus

    result, _, _ = first_run()
    save_result(result, tmp_path / "t2rag.json")
    assert main(["trace", "timeline", str(tmp_path / "t2rag.json")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"t2rag: {BRIDGE}"
    assert "round 1" in out and "solve (scripted)" in out and f"${4 * PRICE:.5f}" in out

    ws = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    build_small_corpus(ws, "small", questions=1, embedder=embedder)
    question = "Which magazine was started first, Arthur's Magazine or First for Women?"
    first = tmp_path / "first.json"
    assert main(["ask", "small", question, "--method", "kg2rag", "--trace-out", str(first), "--quiet"]) == 0
    capsys.readouterr()
    second = tmp_path / "second.json"
    code = main(["rerun", str(first), "--corpus", "small", "--set", "k=3", "--trace-out", str(second), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "settings: k 10 -> 3" in out and "evidence: +0 added, -" in out
    assert load_result(second).trace.settings.k == 3
    assert main(["rerun", str(first), "--corpus", "small", "--set", "rounds=2"]) == 2
    assert "kg2rag has no setting 'rounds'" in capsys.readouterr().err
    assert main(["rerun", str(first), "--corpus", "small", "--set", "k"]) == 2
    assert "--set takes NAME=VALUE" in capsys.readouterr().err


def test_a_compare_whatif_of_both_methods_counts_one_question_against_the_budget(tmp_path):
    """Compare's what-if re-runs both methods of one question: one question, as the comparison."""
    from engine.session.budget import Budget

    t2, corpus, _ = first_run("t2rag")
    kg, _, _ = first_run("kg2rag", k=2)
    sess = Session(workspace=tmp_path, budget=Budget(tmp_path / "b.sqlite", session_caps={"questions": 1}))
    pairs = sess.rerun_all([(t2, {"k": 4}), (kg, {"hops": 2})], corpus, reasoner=LLMReasoner(llm()))
    assert [new.method for new, _ in pairs] == ["t2rag", "kg2rag"]
    assert sess.budget.session_usage(sess.session_id).questions == 1
    with pytest.raises(Exception, match="(?i)cap|limit|budget"):
        sess.rerun(t2, corpus, {"k": 3}, reasoner=LLMReasoner(llm()))
