"""The evaluation harness: run methods over a corpus's questions, score, resume, summarize.

    summary = run_eval(corpus, methods, reasoner, questions=20, out_dir="runs/x")   # registered method names

Layout of `out_dir` (summaries built in engine/eval/report.py):

    <method>.jsonl                 one `QuestionRecord` per line, appended as each question finishes
    traces/<method>/<qid>.json     the full `Result` with its trace (engine.methods.save_result)
    summary.json / .csv / .md      per-method averages (`MethodSummary`)

Each line is flushed as soon as its question is done, so an interrupted run (Ctrl-C, a crash, a
killed process) resumes where it stopped: questions already in the jsonl are skipped, and a half-
written last line is cut off. Records are never all held: resume keeps the ids done, the summary
is accumulated from the jsonl streamed line by line (report.summarize_stream). A question whose
method raises is recorded with its error and scores 0; only provider errors that no retry fixes
(bad key, unknown model, unreachable server) stop the whole run, with one message, because every
later question would fail the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from engine.core import serde
from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Question
from engine.eval.evidence import DEFAULT_SHARE, EvidenceReport, locate_evidence
from engine.eval.metrics import PARAGRAPH, SENTENCE
from engine.eval.records import (
    QuestionRecord,
    check_run_config,
    done_qids,
    iter_last_records,
    iter_records,
    read_records,
)
from engine.eval.report import EvalSummary, summarize_stream, write_summary
from engine.eval.scoring import EvalStopped, WatchedReasoner, evaluate_one

# the records' reading lives in records.py; these names stay importable from the harness
__all__ = [
    "EvalBusy",
    "EvalStopped",
    "QuestionRecord",
    "check_run_config",
    "done_qids",
    "iter_last_records",
    "iter_records",
    "read_records",
    "run_eval",
    "select_questions",
    "summarize",
    "summarize_stream",
]


# --- selection ---------------------------------------------------------------------------------


def select_questions(corpus: Any, questions: None | int | Sequence[str]) -> list[Question]:
    """All questions, the first N, or the given ids (in the given order; unknown ids raise)."""
    if questions is None or isinstance(questions, int):
        qs = corpus.questions()
        if not qs:
            raise ValueError(
                f"corpus {getattr(corpus, 'name', '')!r} has no questions to evaluate; "
                "add a dataset file with questions first"
            )
        return qs if questions is None else qs[: max(0, questions)]
    out, missing = [], []
    for qid in questions:
        q = corpus.get_question(qid)
        (out.append(q) if q is not None else missing.append(qid))
    if missing:
        raise ValueError(f"{len(missing)} question id(s) not in corpus: {', '.join(missing[:5])}")
    return out


# --- running -----------------------------------------------------------------------------------


def _results(
    fn: Callable[[Question], QuestionRecord], todo: list[Question], concurrency: int
) -> Iterator[tuple[Question, QuestionRecord]]:
    """(question, record) as each finishes; in order when sequential."""
    if concurrency <= 1:
        for q in todo:
            yield q, fn(q)
        return
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval")
    futures = {pool.submit(fn, q): q for q in todo}
    try:
        for fut in as_completed(futures):
            yield futures[fut], fut.result()
    finally:
        # on a stop or Ctrl-C: questions not started are cancelled; running ones finish unrecorded
        pool.shutdown(wait=True, cancel_futures=True)


class EvalBusy(RuntimeError):
    """Another run is writing into the same output folder."""


def run_eval(corpus: Any, methods: list[str], reasoner: Any, *args: Any, **kwargs: Any) -> EvalSummary:
    """`_run_eval` holding the output folder's lock: two runs into one `out_dir` would both append
    and run (and bill) every question twice; the second is refused with a message instead."""
    import fcntl

    out = Path(kwargs.get("out_dir", args[1] if len(args) > 1 else "eval_out"))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".run.lock", "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EvalBusy(
                f"another evaluation is writing into {out}: wait for it to finish, or choose another output folder"
            ) from None
        return _run_eval(corpus, methods, reasoner, *args, **kwargs)


def _run_eval(
    corpus: Any,
    methods: list[str],
    reasoner: Any,
    questions: None | int | Sequence[str] = None,
    out_dir: Path | str = "eval_out",
    settings_by_method: dict[str, Any] | None = None,
    on_progress: ProgressCallback | None = None,
    *,
    unit: str = "auto",
    k: int = 5,
    correct_f1: float = 0.8,
    concurrency: int = 1,
    method_factory: Callable[[str, Any], Any] | None = None,
    session: Any = None,
    evidence_share: float = DEFAULT_SHARE,
) -> EvalSummary:
    """Run each method on the selected questions; resume from `out_dir`; write and return the summary.

    `unit` picks the retrieval unit of the headline columns (`auto`: sentences for a corpus
    chunked by sentence, paragraphs otherwise; both are always in summary.json). `k` is the
    cut-off of recall@k, in evidence chunks. `evidence_share`: gold given as text that its words do
    not match is located in the windows holding this share of its content words (evidence.py).
    `concurrency` questions run at once (threads; worth it with a remote LLM, whose latency
    dominates). `method_factory(name, reasoner)` defaults to the registered method answering
    through `session.answer` (`scoring.SessionMethod`); `session` defaults to one with no budget
    and no question deadline (the run's own caller books it).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings_by_method = settings_by_method or {}
    method_factory = method_factory or _session_methods(session, out)
    selected = select_questions(corpus, questions)
    unit = _resolve_unit(corpus, unit)
    check_run_config(out, corpus, reasoner, methods, settings_by_method)
    run = _Run(
        corpus=corpus,
        reasoner=reasoner,
        watched=WatchedReasoner(reasoner) if reasoner is not None else None,
        out=out,
        selected=selected,
        settings_by_method=settings_by_method,
        evidence=locate_evidence(corpus, selected, evidence_share),  # gold given as text -> the chunks holding it
        unit=unit,
        k=k,
        correct_f1=correct_f1,
        concurrency=concurrency,
        on_progress=on_progress or no_progress,
        total=len(selected) * len(methods),
    )
    stopped = ""
    for name in methods:
        if stopped := _run_method(run, name, method_factory):
            break
    summary = summarize(out, corpus, methods, selected, reasoner, unit=unit, k=k, stopped=stopped)
    summary.evidence = run.evidence.message()
    summary.inputs = _inputs(corpus, methods, settings_by_method, reasoner)
    write_summary(summary, out)
    return summary


def _inputs(corpus: Any, methods: list[str], settings_by_method: dict[str, Any], reasoner: Any) -> dict[str, Any]:
    """What each method was fed (the inputs line): the corpus's embedder and triplet source, the
    reranker its settings name, the reasoner."""
    from engine.methods.registry import settings_class
    from engine.session.inputs import run_inputs

    name = getattr(reasoner, "name", "") if reasoner is not None else ""
    out = {}
    for m in methods:
        try:
            settings = settings_by_method.get(m) or settings_class(m)()
        except (ValueError, ImportError):  # a test's stand-in method
            settings = None
        out[m] = run_inputs(corpus, settings, name)
    return out


def _session_methods(session: Any, out: Path) -> Callable[[str, Any], Any]:
    """Methods answering through `session.answer` (a session with no budget and no deadline by default)."""
    from engine.eval.scoring import SessionMethod
    from engine.session import Session

    return partial(SessionMethod, session or Session(workspace=out, question_deadline=0))


def _resolve_unit(corpus: Any, unit: str) -> str:
    """`auto`: sentences for a corpus chunked by sentence, paragraphs otherwise."""
    if unit != "auto":
        return unit
    mode = getattr(getattr(getattr(corpus, "settings", None), "chunking", None), "mode", "paragraph")
    return SENTENCE if mode == "sentence" else PARAGRAPH


@dataclass
class _Run:
    """What every question of one evaluation run shares, and how many are done."""

    corpus: Any
    reasoner: Any
    watched: WatchedReasoner | None
    out: Path
    selected: list[Question]
    settings_by_method: dict[str, Any]
    evidence: EvidenceReport
    unit: str
    k: int
    correct_f1: float
    concurrency: int
    on_progress: ProgressCallback
    total: int
    done: int = 0

    def check_not_stopped(self, name: str, q: Question) -> None:
        if self.watched is not None and self.watched.fatal is not None:
            raise EvalStopped(f"{name} stopped on question {q.qid}: {self.watched.fatal}")


def _run_method(run: _Run, name: str, method_factory: Callable[[str, Any], Any]) -> str:
    """Answer and record the questions `name` has not done yet; why the run stopped, or ""."""
    path = run.out / f"{name}.jsonl"
    have = done_qids(path, repair=True)
    todo = [q for q in run.selected if q.qid not in have]
    run.done += len(run.selected) - len(todo)
    run.on_progress(run.done, run.total, f"{name}: {len(run.selected) - len(todo)} already done")
    if not todo:
        return ""
    try:
        method = method_factory(name, run.watched if run.watched is not None else run.reasoner)
    except Exception as exc:  # noqa: BLE001 -- e.g. a method module that fails to import
        return f"method {name!r} could not be built: {type(exc).__name__}: {exc}"
    try:
        _record_answers(run, name, method, path, todo)
    except EvalStopped as exc:
        return str(exc)
    return ""


def _record_answers(run: _Run, name: str, method: Any, path: Path, todo: list[Question]) -> None:
    """Append one line to `path` as each question of `todo` finishes (flushed: a kill loses none)."""

    def run_one(q: Question) -> QuestionRecord:
        # a worker freed by a failed question must not start another one (one more request per
        # worker with the same bad key) before the main thread stops the run
        run.check_not_stopped(name, q)
        return evaluate_one(
            method,
            name,
            q,
            run.corpus,
            run.settings_by_method.get(name),
            run.out,
            run.k,
            run.correct_f1,
            run.unit,
            run.evidence.by_qid.get(q.qid),
        )

    with open(path, "a", encoding="utf-8") as fh:
        for q, rec in _results(run_one, todo, run.concurrency):
            # not recorded: after fixing the key/model/server, a rerun redoes this question
            run.check_not_stopped(name, q)
            fh.write(serde.dumps(rec) + "\n")
            fh.flush()
            run.done += 1
            run.on_progress(run.done, run.total, f"{name}: {q.qid}")


# --- summarizing -------------------------------------------------------------------------------


def summarize(
    out: Path,
    corpus: Any,
    methods: list[str],
    selected: list[Question],
    reasoner: Any,
    *,
    unit: str,
    k: int,
    stopped: str = "",
) -> EvalSummary:
    by_qid = {q.qid: q for q in selected}
    rows = [
        summarize_stream(
            m, ((by_qid[r.qid], r) for r in iter_last_records(out / f"{m}.jsonl", set(by_qid))), selected, unit, k
        )
        for m in methods
    ]
    return EvalSummary(
        out_dir=str(out),
        corpus=getattr(corpus, "name", ""),
        reasoner=getattr(reasoner, "name", str(reasoner)),
        n_questions=len(selected),
        methods=rows,
        stopped=stopped,
        created=time.time(),
    )
