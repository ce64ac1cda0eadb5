"""Failure labels of T2RAG answers on hand-built traces (engine/methods/t2rag/trace.py dataclasses, whose
`failure_facts` hook the labeler reads)."""

from __future__ import annotations

from engine.core import serde
from engine.core.types import Question
from engine.eval.failures import label_failure
from engine.eval.metrics import QuestionMetrics
from engine.llm.base import LLMCall
from engine.methods.t2rag.loss import failure_facts
from engine.methods.t2rag.trace import (
    DecompositionTrace,
    RoundTrace,
    ShownChunk,
    StateSnapshot,
    StateTriplet,
    T2RAGSettings,
    T2RAGTrace,
)
from tests.doubles import HashEmbedder, MemoryCorpus, chunk

Q = Question(
    "q1",
    "Who is the child of the performer of Me and Bobby McGee?",
    ("Tracy Kristofferson",),
    supporting_facts=(("Me and Bobby McGee", 0), ("Kris Kristofferson", 3)),
    supporting_titles=("Me and Bobby McGee", "Kris Kristofferson"),
)
WRONG = QuestionMetrics(em=0.0, f1=0.0)


def corpus() -> MemoryCorpus:
    """Three chunks whose titles the labels read (the suite's one in-memory corpus)."""
    titles = {"m#0": "Me and Bobby McGee", "k#0": "Kris Kristofferson", "x#0": "Roger Miller"}
    return MemoryCorpus(HashEmbedder(), [chunk(i, t, "", doc_id=i.split("#")[0]) for i, t in titles.items()])


def T(i, s, p, o):
    return StateTriplet(i, s, p, o)


def trace(triplets, shown, final: StateSnapshot, failure="") -> T2RAGTrace:
    d = DecompositionTrace(LLMCall("decompose", "scripted"), triplets=triplets, failure=failure)
    rounds = [RoundTrace(1, StateSnapshot(), chunks=[ShownChunk(c, "", "") for c in shown], state_after=final)]
    return T2RAGTrace(T2RAGSettings(), "scripted", Q.question, decomposition=d, rounds=rounds)


T1 = T("t1", "Me and Bobby McGee", "performer", "?performer")
T2 = T("t2", "?performer", "child", "?child")
DONE = StateSnapshot(
    resolved=[
        T("t1", "Me and Bobby McGee", "performer", "Kris Kristofferson"),
        T("t2", "Kris Kristofferson", "child", "Tracy Kristofferson"),
    ]
)


def label(tr, metrics=WRONG):
    return label_failure(tr, Q, metrics, corpus())


def test_correct_when_exact_or_f1_at_least_point_eight():
    tr = trace([T1, T2], ["m#0", "k#0"], DONE)
    assert label(tr, QuestionMetrics(em=1.0, f1=1.0)) == "correct"
    assert label(tr, QuestionMetrics(em=0.0, f1=0.8)) == "correct"
    assert label(tr, QuestionMetrics(em=0.0, f1=0.79)) != "correct"


def test_decomposition_when_no_usable_triplet():
    assert label(trace([], ["m#0", "k#0"], StateSnapshot())) == "decomposition"
    assert label(trace([T1], ["m#0", "k#0"], DONE, failure="no JSON in reply")) == "decomposition"


def test_retrieval_when_a_gold_paragraph_was_never_shown():
    assert label(trace([T1, T2], ["m#0", "x#0"], DONE)) == "retrieval"


def test_filling_when_a_placeholder_stays_open_or_is_bound_wrong():
    open_state = StateSnapshot(
        resolved=[DONE.resolved[0]], searchable=[T("t2", "Kris Kristofferson", "child", "?child")]
    )
    assert label(trace([T1, T2], ["m#0", "k#0"], open_state)) == "filling"
    wrong = StateSnapshot(resolved=[DONE.resolved[0], T("t2", "Kris Kristofferson", "child", "Kelly Kristofferson")])
    assert label(trace([T1, T2], ["m#0", "k#0"], wrong)) == "filling"


def test_synthesis_when_everything_resolved_but_answer_wrong():
    tr = trace([T1, T2], ["m#0", "k#0"], DONE)
    assert label(tr) == "synthesis"
    # the facts read from the same trace as plain JSON (an older save read field by field)
    as_dict = serde.to_dict(tr)
    assert failure_facts(as_dict) == tr.failure_facts()
    assert failure_facts(as_dict).retrieved_chunk_ids == ("m#0", "k#0")
