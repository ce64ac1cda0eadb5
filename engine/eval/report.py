"""Per-method averages of an evaluation run and their renderings (summary.json, .csv, .md).

Answer and retrieval averages run over every selected question (a missing or errored one counts
0, see metrics.average_metrics); usage averages (calls, tokens, seconds) run over the questions
that have a record, since a question never run has no bill. Dollars are None-aware: one call with
an unknown price makes the total unknown rather than silently low.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import serde
from engine.eval.failures import ERROR, LABELS
from engine.eval.metrics import PARAGRAPH, SENTENCE, AverageMetrics, average_metrics
from engine.eval.recall_loss import RecallLossSummary, recall_loss_markdown, summarize_recall_loss
from engine.types import Question


@dataclass
class MethodSummary:
    method: str
    n_questions: int  # questions selected; averages run over all of them
    n_done: int  # questions with a record (answered or errored)
    n_errors: int
    answer: AverageMetrics
    retrieval_unit: str
    by_unit: dict[str, AverageMetrics]
    k: int
    calls_per_q: float = 0.0
    cached_calls_per_q: float = 0.0
    prompt_tokens_per_q: float = 0.0
    completion_tokens_per_q: float = 0.0
    cost_total: float | None = 0.0  # None when any call had an unknown price
    cost_per_q: float | None = 0.0
    engine_time_per_q: float = 0.0
    llm_time_per_q: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)  # T2RAG only
    first_error: str = ""  # one example, so the table says why a method scored 0
    #: question type (bridge, comparison, 2hop...) -> averages over the questions of that type
    by_qtype: dict[str, AverageMetrics] = field(default_factory=dict)
    #: where the gold units went (found, or the step that lost them), from the traces
    recall_loss: RecallLossSummary | None = None


@dataclass
class EvalSummary:
    out_dir: str
    corpus: str
    reasoner: str
    n_questions: int
    methods: list[MethodSummary]
    stopped: str = ""  # why the run stopped early; "" when it completed
    created: float = 0.0
    evidence: str = ""  # how many evidence spans (gold given as text) were located in the chunks

    def markdown(self) -> str:
        return summary_markdown(self)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summarize_method(name: str, records: dict[str, Any], selected: list[Question],
                     unit: str, k: int) -> MethodSummary:
    recs = [records.get(q.qid) for q in selected]
    got = [r for r in recs if r is not None]
    metrics = [r.metrics if r is not None else None for r in recs]
    by_unit = {u: average_metrics(metrics, u) for u in (PARAGRAPH, SENTENCE)}
    usages = [r.usage for r in got if r.usage is not None]
    cost: float | None = 0.0
    for u in usages:
        cost = None if (cost is None or u.cost is None) else cost + u.cost
    types = sorted({q.qtype for q in selected if q.qtype})
    by_qtype = {t: average_metrics([m for q, m in zip(selected, metrics) if q.qtype == t], unit)
                for t in types} if len(types) > 1 else {}
    failures: dict[str, int] = {}
    if name == "t2rag":
        failures = {label: 0 for label in LABELS}
        for r in got:
            failures[r.failure or ERROR] = failures.get(r.failure or ERROR, 0) + 1
    return MethodSummary(
        method=name, n_questions=len(selected), n_done=len(got), n_errors=sum(1 for r in got if r.error and
                                                                              r.failure == ERROR),
        answer=by_unit[unit], retrieval_unit=unit, by_unit=by_unit, k=k,
        calls_per_q=_mean([u.calls for u in usages]), cached_calls_per_q=_mean([u.cached_calls for u in usages]),
        prompt_tokens_per_q=_mean([u.prompt_tokens for u in usages]),
        completion_tokens_per_q=_mean([u.completion_tokens for u in usages]),
        cost_total=cost, cost_per_q=(cost / len(usages) if cost is not None and usages else (None if cost is None else 0.0)),
        engine_time_per_q=_mean([u.engine_time for u in usages]), llm_time_per_q=_mean([u.llm_time for u in usages]),
        failures=failures, by_qtype=by_qtype,
        recall_loss=summarize_recall_loss(name, [getattr(r, "recall_loss", None) for r in got
                                                 if getattr(getattr(r, "recall_loss", None), "unit", unit) == unit],
                                          unit),
        first_error=next((f"{r.qid}: {r.error}" for r in got if r.error and r.failure == ERROR), ""))


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _row(m: MethodSummary) -> dict[str, str]:
    a = m.answer
    return {
        "method": m.method, "done": f"{m.n_done}/{m.n_questions}", "EM": _fmt(a.em), "F1": _fmt(a.f1),
        f"ret P ({m.retrieval_unit})": _fmt(a.retrieval_precision), "ret R": _fmt(a.retrieval_recall),
        "ret F1": _fmt(a.retrieval_f1), f"R@{m.k}": _fmt(a.recall_at_k), "chunks": _fmt(a.avg_evidence_chunks, 1),
        "calls/q": _fmt(m.calls_per_q, 1), "prompt tok/q": _fmt(m.prompt_tokens_per_q, 0),
        "compl tok/q": _fmt(m.completion_tokens_per_q, 0),
        "$ total": "unknown" if m.cost_total is None else f"{m.cost_total:.4f}",
        "engine s/q": _fmt(m.engine_time_per_q, 3), "LLM s/q": _fmt(m.llm_time_per_q, 3), "errors": str(m.n_errors),
    }


def summary_markdown(s: EvalSummary) -> str:
    lines = [f"Evaluation of corpus `{s.corpus}` with `{s.reasoner}` on {s.n_questions} questions "
             "(averages over all questions; errors count 0).", ""]
    rows = [_row(m) for m in s.methods]
    if rows:
        head = list(rows[0])
        lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows]
    types = sorted({t for m in s.methods for t in m.by_qtype})
    if types:
        count = {t: next(m.by_qtype[t].n for m in s.methods if t in m.by_qtype) for t in types}
        lines += ["", "F1 by question type (questions):", "",
                  "| method | " + " | ".join(f"{t} ({count[t]})" for t in types) + " |",
                  "|---|" + "---|" * len(types)]
        lines += ["| " + m.method + " | " + " | ".join(_fmt(m.by_qtype[t].f1) if t in m.by_qtype else "n/a"
                                                      for t in types) + " |" for m in s.methods]
    for m in s.methods:
        if m.failures:
            lines += ["", f"T2RAG failure labels ({m.n_done} questions):", "",
                      "| " + " | ".join(m.failures) + " |", "|" + "|".join("---" for _ in m.failures) + "|",
                      "| " + " | ".join(str(v) for v in m.failures.values()) + " |"]
    loss = recall_loss_markdown([m.recall_loss for m in s.methods if m.recall_loss is not None])
    if loss:
        lines += [""] + loss
    errs = [m for m in s.methods if m.n_errors]
    if errs:
        lines += [""] + [f"- {m.method}: {m.n_errors} question(s) failed, e.g. {m.first_error[:300]}" for m in errs]
    if s.evidence:
        lines += ["", f"Gold {s.evidence}."]
    if s.stopped:
        lines += ["", f"**Stopped early:** {s.stopped}"]
    return "\n".join(lines) + "\n"


def write_summary(s: EvalSummary, out: Path) -> None:
    serde.atomic_write_text(out / "summary.json", serde.dumps(s, indent=1))
    buf = io.StringIO()
    rows = [_row(m) for m in s.methods]
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]) + ["failures"])
        w.writeheader()
        for m, r in zip(s.methods, rows):
            w.writerow({**r, "failures": json.dumps(m.failures) if m.failures else ""})
    serde.atomic_write_text(out / "summary.csv", buf.getvalue())
    serde.atomic_write_text(out / "summary.md", summary_markdown(s))


def load_summary(out: Path) -> EvalSummary:
    """The summary a finished (or stopped) run wrote, e.g. for the app to show a past run."""
    return serde.loads(EvalSummary, (Path(out) / "summary.json").read_text(encoding="utf-8"))
