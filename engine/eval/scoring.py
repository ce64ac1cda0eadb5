"""One question of an evaluation run: answer it with the method, save the trace, score it.

A question whose method raises (or returns an error) is recorded with its error and its answer
scores 0; what it retrieved before the error still counts for retrieval (a method that retrieved
and then could not answer has retrieved). Only a provider error no retry fixes (`LLMError.fatal`)
stops the run, as `EvalStopped`.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import Any

from engine.core import serde
from engine.core.types import Question
from engine.eval.evidence import EvidenceGold
from engine.eval.failures import ERROR, label_failure, labels_failures
from engine.eval.metrics import PARAGRAPH, failed_question_metrics, score_question
from engine.eval.recall_loss import failed_recall_loss, recall_loss
from engine.eval.records import QuestionRecord
from engine.llm.base import LLMError
from engine.methods.base import Result, Usage, result_to_json


class EvalStopped(RuntimeError):
    """Raised inside the loop for a fatal provider error; run_eval turns it into `stopped`."""


class SessionMethod:
    """A registered method as the harness answers with it: every question goes through
    `Session.answer` (the one path: question check, deadline, budget record), with the harness's
    watched reasoner and the run's settings. Built per method, so a module that fails to import
    stops that method before its first question."""

    def __init__(self, session: Any, name: str, reasoner: Any):
        from engine.methods.registry import method_class

        method_class(name)
        self.session, self.name, self.reasoner = session, name, reasoner

    def answer(self, question: str, corpus: Any, settings: Any = None, on_step: Any = None) -> Result:
        return self.session.answer(
            self.name, question, corpus, settings=settings, reasoner=self.reasoner, on_step=on_step
        )


def fatal_error(exc: BaseException) -> LLMError | None:
    """The fatal `LLMError` behind `exc` (itself or one of its causes), if any."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 10:
        if isinstance(e, LLMError) and e.fatal:
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


class WatchedReasoner:
    """The reasoner as the methods see it during a run, noting fatal provider errors on the way.

    Methods catch `LLMError` themselves and return `Result.error` (one question must not crash
    the app), which hides the error kind from the harness; watching the calls recovers it."""

    _JOBS = ("extract", "decompose", "solve", "answer", "chat")

    def __init__(self, inner: Any, root: WatchedReasoner | None = None):
        self._inner = inner
        self._root = root or self  # the watcher the harness reads; a prompt variant reports to it
        self.fatal: LLMError | None = None

    def with_prompt_set(self, name: str) -> Any:
        """The inner reasoner building another preset's prompts, still watched: a method that
        switches prompts (a `paper` preset) must not slip past the stop on a bad key."""
        variant = getattr(self._inner, "with_prompt_set", None)
        return WatchedReasoner(variant(name), self._root) if callable(variant) else self

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if attr not in self._JOBS or not callable(value):
            return value

        def watched(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            except LLMError as exc:
                if exc.fatal and self._root.fatal is None:
                    self._root.fatal = exc
                raise

        return watched


def _safe_name(qid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", qid)[:120] or "q"


def evaluate_one(
    method: Any,
    name: str,
    q: Question,
    corpus: Any,
    settings: Any,
    out_dir: Path,
    k: int,
    correct_f1: float,
    unit: str = PARAGRAPH,
    evidence: EvidenceGold | None = None,
) -> QuestionRecord:
    """The record of `method` (registered as `name`) answering `q`."""
    t0 = time.perf_counter()
    try:
        result: Result = method.answer(q.question, corpus, settings)
    except Exception as exc:  # noqa: BLE001 -- one question's failure must not end the run
        if (fatal := fatal_error(exc)) is not None:
            raise EvalStopped(f"{name} stopped on question {q.qid}: {fatal}") from exc
        elapsed = time.perf_counter() - t0
        usage = Usage(total_time=elapsed, engine_time=elapsed)
        return _failed(name, q, unit, evidence, usage, f"{type(exc).__name__}: {exc}")
    trace_rel, trace_note = _save_trace(result, out_dir, f"traces/{name}/{_safe_name(q.qid)}.json")
    if result.error and not result.evidence_chunk_ids:
        return _failed(name, q, unit, evidence, result.usage or Usage(), result.error, result, trace_rel)
    record = _scored(name, q, corpus, result, k, correct_f1, unit, evidence, trace_rel, trace_note)
    if result.error:
        # retrieved, then failed (the answer step, a later round): the answer scores 0, the
        # retrieval counts what was retrieved
        zero = dataclasses.replace(record.metrics, em=0.0, f1=0.0, precision=0.0, recall=0.0)
        record = dataclasses.replace(record, metrics=zero, failure=ERROR, error=result.error)
    return record


def _save_trace(result: Result, out_dir: Path, trace_rel: str) -> tuple[str, str]:
    """(path of the saved trace relative to `out_dir`, "") or ("", why it was not saved)."""
    try:
        # compact JSON: with an indent Python's json encodes in pure Python, and an eval's traces (KG2RAG
        # graphs, every round's context) took 20% of a 4-method eval's time (bench/eval_bench.py --profile)
        serde.atomic_write_text(out_dir / trace_rel, result_to_json(result, indent=None))
    except Exception as exc:  # noqa: BLE001 -- an unserializable trace must not lose the score
        return "", f"trace not saved: {type(exc).__name__}: {exc}"
    return trace_rel, ""


def _failed(
    name: str,
    q: Question,
    unit: str,
    evidence: EvidenceGold | None,
    usage: Usage,
    error: str,
    result: Result | None = None,
    trace_rel: str = "",
) -> QuestionRecord:
    """A question that scores 0: its method raised (no `result`) or returned an error."""
    return QuestionRecord(
        q.qid,
        q.question,
        (result.answer or "") if result is not None else "",
        list(q.answers),
        failed_question_metrics(q, evidence),
        usage,
        failure=ERROR,
        trace=trace_rel,
        error=error,
        evidence_chunk_ids=list(result.evidence_chunk_ids) if result is not None else [],
        stop_reason=result.stop_reason if result is not None else "",
        reasoner=result.reasoner if result is not None else "",
        recall_loss=failed_recall_loss(name, q, unit),
    )


def _scored(
    name: str,
    q: Question,
    corpus: Any,
    result: Result,
    k: int,
    correct_f1: float,
    unit: str,
    evidence: EvidenceGold | None,
    trace_rel: str,
    trace_note: str,
) -> QuestionRecord:
    """An answered question: its metrics, failure label (a trace that reports its pipeline facts) and
    where the gold units went."""
    evidence_ids = list(dict.fromkeys(result.evidence_chunk_ids))
    chunks = corpus.get_chunks(evidence_ids)
    metrics = score_question(result.answer or "", q, chunks, k=k, evidence=evidence)
    failure = (
        label_failure(
            result.trace, q, metrics, corpus, correct_f1=correct_f1, evidence_chunk_ids=result.evidence_chunk_ids
        )
        if labels_failures(result.trace)
        else ""
    )
    try:
        loss = recall_loss(name, result.trace, q, corpus, list(evidence_ids), unit)
    except Exception as exc:  # noqa: BLE001 -- an unreadable trace must not lose the score
        loss, trace_note = None, (trace_note + "; " if trace_note else "") + f"recall loss not read: {exc}"
    return QuestionRecord(
        q.qid,
        q.question,
        result.answer or "",
        list(q.answers),
        metrics,
        result.usage or Usage(),
        failure=failure,
        trace=trace_rel,
        error=trace_note,
        evidence_chunk_ids=list(result.evidence_chunk_ids),
        stop_reason=result.stop_reason,
        reasoner=result.reasoner,
        recall_loss=loss,
    )
