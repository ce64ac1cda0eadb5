"""Per-method averages of an evaluation run and their renderings (summary.json, .csv, .md).

Answer and retrieval averages run over every selected question (a missing or errored one counts
0, see metrics.average_metrics); usage averages (calls, tokens, seconds) run over the questions
that have a record, since a question never run has no bill. Dollars are None-aware: one call with
an unknown price makes the total unknown rather than silently low. The summary is accumulated from
the records streamed one at a time (`summarize_stream`), so a run over many thousands of
questions summarizes in memory that does not grow with its records.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.core import serde
from engine.core.terminal import shown
from engine.core.types import Question
from engine.eval.failures import ERROR, LABELS, labels_failures
from engine.eval.metrics import PARAGRAPH, SENTENCE, AverageMetrics, QuestionMetrics
from engine.eval.recall_loss import RecallLossSummary, recall_loss_markdown, summarize_recall_loss
from engine.methods.inputs import RunInputs


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
    failures: dict[str, int] = field(default_factory=dict)  # methods whose trace reports failure facts
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
    inputs: dict[str, RunInputs] = field(default_factory=dict)  # what each method was fed (the inputs line)

    def markdown(self) -> str:
        return summary_markdown(self)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


class _Average:
    """metrics.average_metrics over a stream: fed one question at a time (None = no record),
    holding sums and counts only. Same rules: a missing question counts 0 everywhere, retrieval
    averages over the questions with gold support at the unit (plus the missing ones when any
    has), `scored=False` questions are left out."""

    _R = ("precision", "recall", "f1", "recall_at_k", "em")

    def __init__(self, unit: str):
        self.unit = unit
        self.n = self.unscored = self.missing = self.r_n = 0
        self.sums = dict.fromkeys(("em", "f1", "precision", "recall", "n_evidence_chunks"), 0.0)
        self.r_sums = dict.fromkeys(self._R, 0.0)
        self.w_n = 0
        self.w_sums = {"recall": 0.0, "recall_at_k": 0.0}

    def add(self, m: QuestionMetrics | None) -> None:
        if m is not None and not m.scored:
            self.unscored += 1
            return
        self.n += 1
        if m is None:
            self.missing += 1
            return
        for key in self.sums:
            self.sums[key] += getattr(m, key)
        r = getattr(m, self.unit)
        if r is not None:
            self.r_n += 1
            for key in self._R:
                self.r_sums[key] += getattr(r, key)
        w = getattr(m, "window", None)
        if w is not None:
            self.w_n += 1
            for key in self.w_sums:
                self.w_sums[key] += getattr(w, key)

    def result(self) -> AverageMetrics:
        if not self.n:
            return AverageMetrics(retrieval_unit=self.unit, unscored=self.unscored)
        rn = self.r_n + self.missing if self.r_n else 0
        r = {key: (v / rn if rn else None) for key, v in self.r_sums.items()}
        wn = self.w_n + self.missing if self.w_n else 0
        w = {key: (v / wn if wn else None) for key, v in self.w_sums.items()}
        return AverageMetrics(
            n=self.n,
            em=self.sums["em"] / self.n,
            f1=self.sums["f1"] / self.n,
            precision=self.sums["precision"] / self.n,
            recall=self.sums["recall"] / self.n,
            retrieval_unit=self.unit,
            retrieval_n=rn,
            retrieval_precision=r["precision"],
            retrieval_recall=r["recall"],
            retrieval_f1=r["f1"],
            recall_at_k=r["recall_at_k"],
            avg_evidence_chunks=self.sums["n_evidence_chunks"] / self.n,
            retrieval_em=r["em"],
            unscored=self.unscored,
            window_recall=w["recall"],
            window_recall_at_k=w["recall_at_k"],
        )


def summarize_method(name: str, records: dict[str, Any], selected: list[Question], unit: str, k: int) -> MethodSummary:
    return summarize_stream(name, ((q, records[q.qid]) for q in selected if q.qid in records), selected, unit, k)


def summarize_stream(
    name: str, records: Iterable[tuple[Question, Any]], selected: list[Question], unit: str, k: int
) -> MethodSummary:
    """The method's summary from its records streamed one at a time ((question, record) pairs,
    one per question, in any order: e.g. read from the jsonl on disk), holding sums and counts,
    not the records. Selected questions that never come count as missing."""
    tally = _Tally(name, selected, unit)

    def losses():
        for q, r in records:
            tally.add(q, r)
            loss = getattr(r, "recall_loss", None)
            if loss is not None and getattr(loss, "unit", unit) == unit:
                yield loss

    recall = summarize_recall_loss(name, losses(), unit)
    tally.add_missing(selected)
    return tally.summary(selected, k, recall)


#: usage sums kept per method -> the `Usage` field each adds up
_USAGE_FIELDS = (
    ("calls", "calls"),
    ("cached", "cached_calls"),
    ("prompt", "prompt_tokens"),
    ("completion", "completion_tokens"),
    ("engine", "engine_time"),
    ("llm", "llm_time"),
)


def _trace_type(method: str) -> Any:
    """The method's trace class (None for a method no longer registered: an old results folder)."""
    from engine.methods.base import TRACE_TYPES
    from engine.methods.registry import method_class

    try:
        method_class(method)  # its module registers its trace type
    except (ValueError, ImportError):
        return None
    return TRACE_TYPES.get(method)


class _Tally:
    """Sums and counts of one method's records, fed one record at a time (never all held)."""

    def __init__(self, name: str, selected: list[Question], unit: str):
        self.name, self.unit = name, unit
        self.position = {q.qid: i for i, q in enumerate(selected)}
        types = sorted({q.qtype for q in selected if q.qtype})
        self.by_unit = {u: _Average(u) for u in (PARAGRAPH, SENTENCE)}
        self.by_type = {t: _Average(unit) for t in types} if len(types) > 1 else {}
        self.seen: set[str] = set()
        self.use: dict[str, float] = {"n": 0, **{key: 0.0 for key, _ in _USAGE_FIELDS}}
        self.cost: float | None = 0.0
        self.labelled = labels_failures(_trace_type(name))
        self.failures: dict[str, int] = {label: 0 for label in LABELS} if self.labelled else {}
        self.n_errors = 0
        self.first_error: tuple[int, str] | None = None

    def add(self, q: Question, r: Any) -> None:
        self.seen.add(q.qid)
        for avg in self.by_unit.values():
            avg.add(r.metrics)
        if q.qtype in self.by_type:
            self.by_type[q.qtype].add(r.metrics)
        u = r.usage
        if u is not None:
            self.use["n"] += 1
            for key, attr in _USAGE_FIELDS:
                self.use[key] += getattr(u, attr)
            self.cost = None if (self.cost is None or u.cost is None) else self.cost + u.cost
        if self.labelled:
            self.failures[r.failure or ERROR] = self.failures.get(r.failure or ERROR, 0) + 1
        if r.error and r.failure == ERROR:
            self.n_errors += 1
            pos = self.position.get(q.qid, len(self.position))
            if self.first_error is None or pos < self.first_error[0]:  # the first in question order
                self.first_error = (pos, f"{r.qid}: {r.error}")

    def add_missing(self, selected: list[Question]) -> None:
        """Questions without a record count 0 in the answer and retrieval averages."""
        for q in selected:
            if q.qid not in self.seen:
                for avg in self.by_unit.values():
                    avg.add(None)
                if q.qtype in self.by_type:
                    self.by_type[q.qtype].add(None)

    def summary(self, selected: list[Question], k: int, recall: RecallLossSummary) -> MethodSummary:
        n, cost = self.use["n"], self.cost
        mean = lambda key: self.use[key] / n if n else 0.0  # noqa: E731
        units = {u: a.result() for u, a in self.by_unit.items()}
        return MethodSummary(
            method=self.name,
            n_questions=len(selected),
            n_done=len(self.seen),
            n_errors=self.n_errors,
            answer=units[self.unit],
            retrieval_unit=self.unit,
            by_unit=units,
            k=k,
            calls_per_q=mean("calls"),
            cached_calls_per_q=mean("cached"),
            prompt_tokens_per_q=mean("prompt"),
            completion_tokens_per_q=mean("completion"),
            cost_total=cost,
            cost_per_q=(cost / n if cost is not None and n else (None if cost is None else 0.0)),
            engine_time_per_q=mean("engine"),
            llm_time_per_q=mean("llm"),
            failures=self.failures,
            by_qtype={t: a.result() for t, a in self.by_type.items()},
            recall_loss=recall,
            first_error=self.first_error[1] if self.first_error else "",
        )


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _row(m: MethodSummary) -> dict[str, str]:
    a = m.answer
    return {
        "method": m.method,
        "done": f"{m.n_done}/{m.n_questions}",
        "EM": _fmt(a.em),
        "F1": _fmt(a.f1),
        f"ret P ({m.retrieval_unit})": _fmt(a.retrieval_precision),
        "ret R": _fmt(a.retrieval_recall),
        "ret F1": _fmt(a.retrieval_f1),
        f"R@{m.k}": _fmt(a.recall_at_k),
        **(
            {"window R": _fmt(a.window_recall), f"window R@{m.k}": _fmt(a.window_recall_at_k)}
            if a.window_recall is not None
            else {}
        ),
        "chunks": _fmt(a.avg_evidence_chunks, 1),
        "calls/q": _fmt(m.calls_per_q, 1),
        "prompt tok/q": _fmt(m.prompt_tokens_per_q, 0),
        "compl tok/q": _fmt(m.completion_tokens_per_q, 0),
        "$ total": "unknown" if m.cost_total is None else f"{m.cost_total:.4f}",
        "engine s/q": _fmt(m.engine_time_per_q, 3),
        "LLM s/q": _fmt(m.llm_time_per_q, 3),
        "errors": str(m.n_errors),
    }


def inputs_line(method: str, inputs: RunInputs) -> str:
    """`method`'s inputs line, each input beside its paper's (engine/methods/inputs.py)."""
    from engine.methods.inputs import describe
    from engine.methods.registry import method_class

    try:
        paper = method_class(method).paper_inputs
    except (ValueError, ImportError):  # a method no longer registered: its inputs alone
        paper = None
    return describe(inputs, paper)


def summary_markdown(s: EvalSummary) -> str:
    lines = [
        f"Evaluation of corpus `{shown(s.corpus)}` with `{shown(s.reasoner)}` on {s.n_questions} questions "
        "(averages over all questions; errors count 0).",
        "",
    ]
    rows = [_row(m) for m in s.methods]
    if rows:
        head = list(dict.fromkeys(h for r in rows for h in r))  # window columns when any method has them
        lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r.get(h, "n/a") for h in head) + " |" for r in rows]
    if s.inputs:
        lines += ["", "What each method was fed, beside its paper's inputs:", ""]
        lines += [f"- {m}: {shown(inputs_line(m, i))}" for m, i in s.inputs.items()]
    types = sorted({t for m in s.methods for t in m.by_qtype})
    if types:
        count = {t: next(m.by_qtype[t].n for m in s.methods if t in m.by_qtype) for t in types}
        lines += [
            "",
            "F1 by question type (questions):",
            "",
            "| method | " + " | ".join(f"{shown(t)} ({count[t]})" for t in types) + " |",
            "|---|" + "---|" * len(types),
        ]
        lines += [
            "| "
            + m.method
            + " | "
            + " | ".join(_fmt(m.by_qtype[t].f1) if t in m.by_qtype else "n/a" for t in types)
            + " |"
            for m in s.methods
        ]
    for m in s.methods:
        if m.failures:
            lines += [
                "",
                f"{m.method} failure labels ({m.n_done} questions):",
                "",
                "| " + " | ".join(m.failures) + " |",
                "|" + "|".join("---" for _ in m.failures) + "|",
                "| " + " | ".join(str(v) for v in m.failures.values()) + " |",
            ]
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
        w = csv.DictWriter(
            buf, fieldnames=list(dict.fromkeys(h for r in rows for h in r)) + ["failures"], restval="n/a"
        )
        w.writeheader()
        for m, r in zip(s.methods, rows):
            w.writerow({**r, "failures": json.dumps(m.failures) if m.failures else ""})
    serde.atomic_write_text(out / "summary.csv", buf.getvalue())
    serde.atomic_write_text(out / "summary.md", summary_markdown(s))


def load_summary(out: Path) -> EvalSummary:
    """The summary a finished (or stopped) run wrote, e.g. for the app to show a past run."""
    return serde.loads(EvalSummary, (Path(out) / "summary.json").read_text(encoding="utf-8"))
