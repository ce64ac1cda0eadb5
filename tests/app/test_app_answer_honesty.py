"""The answer box says when an answer is only a best guess and why a question got no answer, from
the method's own trace (a half-way value shown as the final answer misled a demo audience)."""

from __future__ import annotations

from components.widgets.answer_box import answer_box_html, caveat
from engine.methods.kg2rag import KG2RAG
from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.reasoners.base import SolveResult
from tests._t2rag_helpers import Q, ScriptedReasoner, bobby_mcgee_corpus

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"


def _half_way(answer: str):
    """T2RAG fills ?performer in round 1, never ?answer, hits the round cap: a forced synthesis."""
    reasoner = ScriptedReasoner(
        decomposition=[Q("Me and Bobby McGee", "performer", "?performer"), Q("?performer", "child", "?answer")],
        solves=[SolveResult(bindings={"?performer": "Kris Kristofferson"})],
        answers=[answer],
    )
    return T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus(), T2RAGSettings(rounds=1))


def test_a_forced_synthesis_is_shown_as_a_best_guess_naming_the_open_placeholder():
    result = _half_way("Kris Kristofferson")
    assert result.trace.synthesis.mode == "forced"  # the premise: the loop stopped with ?answer open
    html = answer_box_html(result, ["Dean Miller"])
    assert "Kris Kristofferson" in html
    assert "best guess: ?answer was never filled (round cap reached)" in html
    assert "tl-answer-wrong" in html  # still scored against gold as before


def test_a_complete_run_carries_no_caveat():
    reasoner = ScriptedReasoner(
        decomposition=[Q("Me and Bobby McGee", "performer", "?performer"), Q("?performer", "child", "?child")],
        solves=[
            SolveResult(bindings={"?performer": "Kris Kristofferson"}),
            SolveResult(bindings={"?child": "Tracy Kristofferson"}),
        ],
        answers=["Tracy Kristofferson"],
    )
    result = T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.stop_reason == "complete"
    assert caveat(result) == ("", "")
    html = answer_box_html(result, ["Tracy Kristofferson"])
    assert "best guess" not in html and "tl-answer-correct" in html


def test_an_empty_answer_says_the_corpus_did_not_answer_and_why():
    result = _half_way("")
    html = answer_box_html(result, None)
    assert "The corpus did not answer this." in html and "(no answer)" not in html
    assert "Why: ?answer was never filled (round cap reached)" in html


def test_an_empty_kg2rag_answer_gives_the_reason_from_its_trace():
    reasoner = ScriptedReasoner(by_question={BRIDGE: ""})
    result = KG2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.answer == "" and not result.error and result.trace.seeds
    kind, why = caveat(result)
    assert kind == "empty" and "chunks it was given" in why
    assert "The corpus did not answer this." in answer_box_html(result, ["Tracy Kristofferson"])


def test_the_reason_is_text_not_markup():
    result = _half_way("")
    result.trace.stop_reason = "<img src=x onerror=alert(1)>"
    html = answer_box_html(result, None)
    assert "<img" not in html and "&lt;img" in html


def test_an_offline_chain_with_its_last_hop_unfilled_is_no_answer_with_the_hop_not_a_failure():
    # the offline reasoner leaves the final placeholder empty rather than give the founder as
    # where the founder was born: the box says so, with the hop nobody stated, and no error
    from engine.reasoners.offline import OfflineReasoner

    question = "Where was the founder of Saltlight Studio born?"
    answer, call = OfflineReasoner().answer(
        question,
        "Saltlight Studio\nIt was founded by Orla Vennick.",
        facts=["Saltlight Studio | founder | Orla Vennick"],
    )
    assert answer == "" and not call.error
    result = _half_way("")
    result.trace.synthesis.call = call
    html = answer_box_html(result, None)
    assert "The corpus did not answer this." in html and "could not finish" not in html
    assert "?answer unfilled" in html and "Orla Vennick" in html
