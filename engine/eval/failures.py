"""Where a T2RAG answer went wrong, read from its trace.

Each wrong answer gets the first stage that failed, in pipeline order:

* `decomposition`: the question produced no usable query triplet (nothing parsed), so the
  method ran on the fallback query alone;
* `retrieval`: some gold supporting paragraph was never among the chunks retrieved in any round,
  so no filling could have succeeded from evidence;
* `filling`: the evidence was there but a placeholder was left open at the end, or every
  placeholder was bound and the gold answer appears in none of the resolved facts (filled wrong);
* `synthesis`: everything was resolved and the gold answer is among the resolved facts (or the
  question is yes/no), yet the final answer is wrong.

`correct` when EM = 1 or F1 >= 0.8; `error` when the method raised. The T2RAG trace is read by
attribute name (`TraceFacts`), defensively: a trace that lacks a field falls back to the
`Result`-level evidence and a stage that cannot be judged is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.core.types import Question
from engine.eval.metrics import PARAGRAPH, QuestionMetrics, by_paragraph, gold_units, normalize_answer, retrieved_units
from engine.reasoners.base import is_placeholder

CORRECT, DECOMPOSITION, RETRIEVAL, FILLING, SYNTHESIS, ERROR = (
    "correct",
    "decomposition",
    "retrieval",
    "filling",
    "synthesis",
    "error",
)
LABELS = (CORRECT, DECOMPOSITION, RETRIEVAL, FILLING, SYNTHESIS, ERROR)


@dataclass(frozen=True)
class TraceFacts:
    """What the labeler needs from a T2RAG trace; None = the trace does not say."""

    n_query_triplets: int | None
    retrieved_chunk_ids: tuple[str, ...] | None
    open_left: int | None  # placeholders / open triplets remaining at the end
    resolved_facts: tuple[str, ...] | None


def _get(obj: Any, *names: str) -> Any:
    for n in names:
        if obj is None:
            return None
        v = obj.get(n) if isinstance(obj, dict) else getattr(obj, n, None)
        if v is not None:
            return v
    return None


def _triplet_text(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, (list, tuple)):
        return " ".join(str(x) for x in t)
    parts = [_get(t, "subject"), _get(t, "predicate"), _get(t, "object")]
    return " ".join(str(p) for p in parts if p is not None)


def _has_placeholder(t: Any) -> bool:
    if isinstance(t, (list, tuple)):
        return any(is_placeholder(str(x)) for x in t)
    parts = [_get(t, "subject"), _get(t, "predicate"), _get(t, "object")]
    return any(is_placeholder(str(p)) for p in parts if p is not None)


def _chunk_ids(items: Iterable[Any]) -> list[str]:
    out = []
    for c in items or ():
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, (list, tuple)) and c:
            out.append(str(c[0]))  # (chunk_id, text) pairs
        else:
            cid = _get(c, "chunk_id")
            if cid is None:
                cid = _get(_get(c, "chunk"), "chunk_id")
            if cid is not None:
                out.append(str(cid))
    return out


def trace_facts(trace: Any) -> TraceFacts:
    """Read the four facts from a T2RAG trace (dataclass or plain JSON dict)."""
    if trace is None:
        return TraceFacts(None, None, None, None)
    # field names follow engine/methods/t2rag/trace.py (T2RAGTrace); dict traces read the same way
    decomp = _get(trace, "decomposition")
    qts = _get(decomp, "triplets") if decomp is not None else None
    n_qt = len(qts) if qts is not None else None
    if decomp is not None and _get(decomp, "failure"):
        n_qt = 0  # nothing usable parsed: the rounds ran on the question alone

    rounds = _get(trace, "rounds") or []
    has_rounds = _get(trace, "rounds") is not None  # without rounds: the evidence ids stand in
    retrieved: list[str] = []
    for r in rounds:
        retrieved += _chunk_ids(_get(r, "chunks") or ())
        for w in _get(r, "walked") or ():
            retrieved += [str(c) for c in (_get(w, "new_chunk_ids") or ())]

    final = _get(rounds[-1], "state_after") if rounds else _get(decomp, "state")
    open_left = None
    resolved = None
    if final is not None:
        open_left = len(_get(final, "searchable") or []) + len(_get(final, "fuzzy") or [])
        res = _get(final, "resolved") or []
        resolved = tuple(_triplet_text(t) for t in res)
        open_left += sum(1 for t in res if _has_placeholder(t))
    return TraceFacts(n_qt, tuple(retrieved) if has_rounds else None, open_left, resolved)


def label_t2rag(
    trace: Any,
    question: Question,
    metrics: QuestionMetrics,
    corpus: Any = None,
    *,
    correct_f1: float = 0.8,
    evidence_chunk_ids: Iterable[str] = (),
) -> str:
    """The failure label of one answered T2RAG question (see the module docstring)."""
    if metrics.em >= 1.0 or metrics.f1 >= correct_f1:
        return CORRECT
    facts = trace_facts(trace)
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
