"""The IRCoT baseline: interleaved reasoning sentences and retrievals over a scripted LLM, its call and
token bill, and its refusal to run on the offline reasoner."""

from __future__ import annotations

from engine.llm.base import LLMError
from engine.llm.scripted import ScriptedLLM
from engine.methods import build_method
from engine.methods.base import result_from_json, result_to_json
from engine.methods.ircot import UNAVAILABLE, IRCoT, IRCoTSettings, first_sentence
from engine.reasoners.llm_reasoner import LLMReasoner
from tests._t2rag_helpers import OfflineLikeReasoner, ScriptedReasoner, bobby_mcgee_corpus

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"


def test_scripted_run_interleaves_sentences_and_retrievals():
    llm = ScriptedLLM(
        [
            "Me and Bobby McGee was performed by Kris Kristofferson. Extra words here.",
            "Kris Kristofferson has a child named Tracy Kristofferson.",
            "So the answer is: Tracy Kristofferson.",
            "Tracy Kristofferson",
        ]
    )
    steps = []
    result = IRCoT(LLMReasoner(llm)).answer(
        BRIDGE, bobby_mcgee_corpus(), IRCoTSettings(k=2, steps=5), on_step=lambda label, payload: steps.append(label)
    )
    trace = result.trace
    assert result.answer == "Tracy Kristofferson" and result.stop_reason == "answer_found"
    # 3 reasoning calls (the third says "answer is", so the loop stops before the cap) + 1 answer call
    assert result.usage.calls == llm.calls == 4
    prompt_tokens = sum(len(m["content"].split()) for msgs in llm.prompts for m in msgs)
    assert result.usage.prompt_tokens == prompt_tokens
    assert result.usage.completion_tokens == sum(
        len(r.split())
        for r in [
            "Me and Bobby McGee was performed by Kris Kristofferson. Extra words here.",
            "Kris Kristofferson has a child named Tracy Kristofferson.",
            "So the answer is: Tracy Kristofferson.",
            "Tracy Kristofferson",
        ]
    )
    # one sentence kept per step, and each non-final sentence is the next retrieval query
    assert trace.steps[0].sentence == "Me and Bobby McGee was performed by Kris Kristofferson."
    assert trace.steps[0].retrieval.query == trace.steps[0].sentence and trace.steps[2].retrieval is None
    # the reasoning so far and every collected passage go into the next step's prompt
    second_prompt = llm.prompts[1][-1]["content"]
    assert "performed by Kris Kristofferson." in second_prompt
    assert all(c.text in second_prompt for c in trace.chunks[: len(trace.initial.new_chunk_ids)])
    assert len(trace.initial.hits) == 2
    assert result.evidence_chunk_ids == [c.chunk_id for c in trace.chunks]
    assert len(set(result.evidence_chunk_ids)) == len(result.evidence_chunk_ids)
    assert steps[0].startswith("retrieve") and steps[-1] == "answer: Tracy Kristofferson"
    assert IRCoT.summarize(result)[-2].startswith("stop: answer_found")


def test_step_cap_then_answer():
    reasoner = ScriptedReasoner(chats=["Kris wrote it.", "He has children."], answers=["Tracy"])
    result = IRCoT(reasoner).answer(BRIDGE, bobby_mcgee_corpus(), IRCoTSettings(k=1, steps=2))
    assert result.stop_reason == "step_cap" and len(result.trace.steps) == 2
    assert result.usage.calls == 3 and result.answer == "Tracy"
    context, facts = reasoner.answer_inputs[0]
    assert "Reasoning: Kris wrote it. He has children." in context and facts is None


def test_offline_reasoner_is_refused_not_faked():
    result = IRCoT(OfflineLikeReasoner()).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.error == UNAVAILABLE and result.answer == ""
    assert result.usage.calls == 0 and result.stop_reason == "unavailable"
    assert IRCoT.summarize(result) == [f"error: {UNAVAILABLE}"]


def test_empty_reply_stops_reasoning_and_provider_failure_is_an_error():
    reasoner = ScriptedReasoner(chats=[""], answers=["Kris"])
    result = IRCoT(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.stop_reason == "cot_failed" and result.answer == "Kris"

    llm = ScriptedLLM([LLMError("openai rejected the key", kind="auth")])
    result = IRCoT(LLMReasoner(llm)).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.stop_reason == "llm_error" and "rejected the key" in result.error
    assert result.trace.steps[0].call.error.startswith("auth:")


def test_trace_round_trips_and_registry():
    method = build_method("ircot", ScriptedReasoner(chats=["So the answer is Tracy."], answers=["Tracy"]))
    assert method.settings_cls is IRCoTSettings
    result = method.answer(BRIDGE, bobby_mcgee_corpus())
    assert result_from_json(result_to_json(result)) == result


def test_first_sentence():
    assert first_sentence("Kris wrote it. Then more.") == "Kris wrote it."
    assert first_sentence("He moved. So the answer is: Dr. Smith.") == "So the answer is: Dr. Smith."
