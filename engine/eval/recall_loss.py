"""Where recall was lost, per question, read from a method's trace.

Every gold supporting unit (paragraph or sentence) of a question ends in exactly one bucket:
`found` (it is in the evidence the method gave the LLM) or one loss reason. The reasons follow
the method's own pipeline, so the table says which step to fix: a trace that has the
`recall_loss` hook (engine/methods/hooks.py) names them itself (T2RAG: engine/methods/t2rag/loss.py,
KG2RAG: kg2rag/loss.py, HippoRAG 2: hipporag2/loss.py); any other method's missed units are
`not retrieved`, and an errored question loses them all to the error. Nothing here names a method.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.core.types import Question
from engine.eval.metrics import PARAGRAPH, chunk_units, gold_units

NOT_RETRIEVED = "not retrieved"
METHOD_ERROR = "the method failed on the question"
GAINED = "gained by the expansion"


@dataclass
class RecallLoss:
    """One question's gold units by bucket (`lost`: reason -> units) plus method events."""

    method: str
    unit: str
    n_gold: int = 0
    found: int = 0
    gained: int = 0  # found units the method's first stage did not hold (KG2RAG: not seeds)
    lost: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)


def _units_of(corpus: Any, chunk_ids: Iterable[str], unit: str, by_doc: bool = False) -> dict[str, list]:
    ids = list(dict.fromkeys(chunk_ids))
    return {c.chunk_id: chunk_units(c, unit, by_doc) for c in (corpus.get_chunks(ids) if ids else [])}


def recall_loss(
    method: str, trace: Any, question: Question, corpus: Any, evidence_chunk_ids: list[str], unit: str = PARAGRAPH
) -> RecallLoss | None:
    """The buckets of one question's gold units; None when it has no gold at this unit."""
    gold = gold_units(question, unit)
    if not gold:
        return None
    out = RecallLoss(method=method, unit=unit, n_gold=len(gold))
    units = _units_of(corpus, evidence_chunk_ids, unit, bool(question.supporting_docs))
    found = {u for cid in evidence_chunk_ids for u in units.get(cid, [])} & gold
    out.found = len(found)
    missing = gold - found
    hook = getattr(trace, "recall_loss", None)
    if callable(hook):
        by_doc = bool(question.supporting_docs)
        report = hook(lambda ids: _units_of(corpus, ids, unit, by_doc), gold, found, missing)
        out.lost, out.events, out.gained = dict(report.lost), dict(report.events), report.gained
    elif missing:
        out.lost[NOT_RETRIEVED] = len(missing)
    return out


def failed_recall_loss(method: str, question: Question, unit: str = PARAGRAPH) -> RecallLoss | None:
    """An errored question: every gold unit is lost to the error (None when it has no gold)."""
    gold = gold_units(question, unit)
    return RecallLoss(method=method, unit=unit, n_gold=len(gold), lost={METHOD_ERROR: len(gold)}) if gold else None


def _add(d: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        d[key] = d.get(key, 0) + n


# --- aggregation over a run --------------------------------------------------------------------


@dataclass
class RecallLossSummary:
    """One method's buckets over a run: units and questions per reason."""

    method: str
    unit: str = PARAGRAPH
    n_questions: int = 0  # questions with gold and a trace-derived record
    n_gold: int = 0
    found: int = 0
    gained: int = 0
    lost_units: dict[str, int] = field(default_factory=dict)
    lost_questions: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)  # summed counts
    event_questions: dict[str, int] = field(default_factory=dict)


def summarize_recall_loss(method: str, items: Iterable[RecallLoss | None], unit: str = PARAGRAPH) -> RecallLossSummary:
    s = RecallLossSummary(method=method, unit=unit)
    for x in items:
        if x is None:
            continue
        s.n_questions += 1
        s.n_gold += x.n_gold
        s.found += x.found
        s.gained += x.gained
        for k, v in x.lost.items():
            _add(s.lost_units, k, v)
            _add(s.lost_questions, k, 1 if v else 0)
        for k, v in x.events.items():
            _add(s.events, k, v)
            _add(s.event_questions, k, 1 if v else 0)
    return s


def recall_loss_markdown(summaries: list[RecallLossSummary]) -> list[str]:
    """The "where recall was lost" table: one row per (method, reason), biggest loss first."""
    rows = []
    for s in summaries:
        if not s.n_questions:
            continue
        rows.append(f"| {s.method} | found in the context | {s.found} of {s.n_gold} | {s.n_questions} |")
        if s.gained:
            rows.append(f"| {s.method} | {GAINED} (included above) | {s.gained} | |")
        for k, v in sorted(s.lost_units.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(f"| {s.method} | lost: {k} | {v} | {s.lost_questions.get(k, 0)} |")
        for k, v in sorted(s.events.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(f"| {s.method} | {k} | {v} | {s.event_questions.get(k, 0)} |")
    if not rows:
        return []
    unit = summaries[0].unit
    return [
        f"Where recall was lost (count = gold {unit}s, or events for the rows without 'lost'; "
        "questions = how many questions it touched):",
        "",
        "| method | where | count | questions |",
        "|---|---|---|---|",
        *rows,
    ]
