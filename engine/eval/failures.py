"""Where a wrong answer went wrong, for a method that fills placeholders (T2RAG), read from the
facts its trace reports (`trace.failure_facts()`, engine/methods/hooks.py; T2RAG's:
engine/methods/t2rag/loss.py). A method whose trace has no such hook gets no failure label.

Each wrong answer gets the first stage that failed, in pipeline order:

* `decomposition`: the question produced no usable query triplet (nothing parsed), so the
  method ran on the fallback query alone;
* `retrieval`: some gold supporting paragraph was never among the chunks retrieved in any round,
  so no filling could have succeeded from evidence;
* `filling`: the evidence was there but a placeholder was left open at the end, or every
  placeholder was bound and the gold answer appears in none of the resolved facts (filled wrong);
* `synthesis`: everything was resolved and the gold answer is among the resolved facts (or the
  question is yes/no), yet the final answer is wrong.

`correct` when EM = 1 or F1 >= 0.8; `error` when the method raised. A fact the trace does not
report (None) skips its stage; without retrieved chunk ids the `Result`-level evidence stands in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.core.types import Question
from engine.eval.metrics import PARAGRAPH, QuestionMetrics, by_paragraph, gold_units, normalize_answer, retrieved_units

CORRECT, DECOMPOSITION, RETRIEVAL, FILLING, SYNTHESIS, ERROR = (
    "correct",
    "decomposition",
    "retrieval",
    "filling",
    "synthesis",
    "error",
)
LABELS = (CORRECT, DECOMPOSITION, RETRIEVAL, FILLING, SYNTHESIS, ERROR)


def labels_failures(trace_or_cls: Any) -> bool:
    """True when a trace (or trace class) reports the facts failure labels are read from."""
    return callable(getattr(trace_or_cls, "failure_facts", None))


def label_failure(
    trace: Any,
    question: Question,
    metrics: QuestionMetrics,
    corpus: Any = None,
    *,
    correct_f1: float = 0.8,
    evidence_chunk_ids: Iterable[str] = (),
) -> str:
    """The failure label of one answered question whose trace reports its pipeline facts (see the
    module docstring)."""
    if metrics.em >= 1.0 or metrics.f1 >= correct_f1:
        return CORRECT
    facts = trace.failure_facts()
    if facts.n_query_triplets == 0:
        return DECOMPOSITION

    gold_titles = gold_units(question, PARAGRAPH)
    ids = facts.retrieved_chunk_ids if facts.retrieved_chunk_ids is not None else tuple(evidence_chunk_ids)
    if gold_titles and corpus is not None:
        titles = set(retrieved_units(corpus.get_chunks(list(dict.fromkeys(ids))), PARAGRAPH, by_paragraph(question)))
        if not gold_titles <= titles:
            return RETRIEVAL
    if facts.open_left:
        return FILLING
    golds = [normalize_answer(a) for a in question.answers if normalize_answer(a)]
    yes_no = any(g in ("yes", "no") for g in golds)
    if facts.resolved_facts is not None and golds and not yes_no:
        text = " " + " ".join(normalize_answer(f) for f in facts.resolved_facts) + " "
        if not any(f" {g} " in text for g in golds):
            return FILLING  # every placeholder bound, but to something else than the answer
    return SYNTHESIS
