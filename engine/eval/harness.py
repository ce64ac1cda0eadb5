"""The evaluation harness: run methods over a corpus's questions, score, resume, summarize.

    summary = run_eval(corpus, ["t2rag", "kg2rag"], reasoner, questions=20, out_dir="runs/x")

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

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import serde
from engine.eval.evidence import EvidenceGold, locate_evidence
from engine.eval.failures import ERROR, label_t2rag
from engine.eval.metrics import PARAGRAPH, SENTENCE, QuestionMetrics, failed_question_metrics, score_question
from engine.eval.recall_loss import RecallLoss, failed_recall_loss, recall_loss
from engine.eval.report import (
    EvalSummary,
    summarize_stream,  # noqa: F401
    write_summary,
)
from engine.llm.base import LLMError
from engine.methods.base import Result, Usage, save_result
from engine.progress import ProgressCallback, no_progress
from engine.types import Question


@dataclass
class QuestionRecord:
    """One line of `<method>.jsonl`."""

    qid: str
    question: str
    answer: str
    gold: list[str]
    metrics: QuestionMetrics
    usage: Usage
    failure: str = ""  # T2RAG failure label (failures.LABELS), "error" when the method raised
    trace: str = ""  # path of the saved Result, relative to out_dir
    error: str = ""
    evidence_chunk_ids: list[str] = field(default_factory=list)
    stop_reason: str = ""
    reasoner: str = ""
    recall_loss: RecallLoss | None = None  # where the gold units went (engine/eval/recall_loss.py)


class EvalStopped(RuntimeError):
    """Raised inside the loop for a fatal provider error; run_eval turns it into `stopped`."""


# --- selection and resume ----------------------------------------------------------------------


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


def iter_records(path: Path, repair: bool = False) -> Iterator[tuple[int, QuestionRecord]]:
    """(byte offset, record) of each good line, streamed (one line in memory at a time). A
    truncated or garbled line is skipped; with `repair`, a broken tail is cut off once the whole
    file was read, so appends start clean."""
    if not path.exists():
        return
    good_end = pos = 0
    with open(path, "rb") as fh:
        for line in fh:
            start, pos = pos, pos + len(line)
            if not line.strip():
                good_end = pos
                continue
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("unterminated line")  # the process died mid-write
                rec = serde.from_dict(QuestionRecord, json.loads(line))
            except (ValueError, TypeError, KeyError):
                continue
            good_end = pos
            yield start, rec
    if repair and good_end < pos:
        # only the tail can be half-written (lines are appended); keep every complete line
        with open(path, "r+b") as fh:
            fh.truncate(good_end)


def _last_offsets(path: Path, repair: bool = False) -> dict[str, int]:
    """qid -> offset of its last good line (a later line for the same qid wins)."""
    return {rec.qid: off for off, rec in iter_records(path, repair)}


def done_qids(path: Path, repair: bool = False) -> set[str]:
    """The questions `path` holds a record for (the records themselves are not kept)."""
    return set(_last_offsets(path, repair))


def iter_last_records(path: Path, qids: set[str] | None = None) -> Iterator[QuestionRecord]:
    """The last record of each question (of `qids`, or all), streamed in file order: two passes
    over the file, holding an offset per question, never the records."""
    last = _last_offsets(path)
    for off, rec in iter_records(path):
        if last.get(rec.qid) == off and (qids is None or rec.qid in qids):
            yield rec


def read_records(path: Path, repair: bool = False) -> dict[str, QuestionRecord]:
    """Records already written, by qid (a later line for the same qid wins), all in memory: for a
    view of one run's records; the harness itself streams them (`iter_last_records`)."""
    out: dict[str, QuestionRecord] = {}
    for _, rec in iter_records(path, repair):
        out[rec.qid] = rec
    return out


def check_run_config(
    out: Path, corpus: Any, reasoner: Any, methods: list[str], settings_by_method: dict[str, Any]
) -> None:
    """Refuse to resume into a folder that holds another run (other corpus, model or settings):
    mixing its records with new ones would average two different experiments."""
    config: dict[str, Any] = {
        "corpus": getattr(corpus, "name", ""),
        "reasoner": getattr(reasoner, "name", "") if reasoner else "",
        "settings": {m: serde.to_dict(settings_by_method.get(m)) for m in methods},
    }
    path = out / "run.json"
    old: dict = {}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    for key in ("corpus", "reasoner"):
        if old.get(key, config[key]) != config[key]:
            raise ValueError(
                f"{out} holds results for {key} {old[key]!r}, not {config[key]!r}; use another output folder"
            )
    old_settings = old.get("settings", {})
    for m in methods:
        if m in old_settings and old_settings[m] != config["settings"][m] and (out / f"{m}.jsonl").exists():
            raise ValueError(f"{out} holds {m} results made with other settings; use another output folder")
    merged = {**config, "settings": {**old_settings, **config["settings"]}}
    serde.atomic_write_text(path, json.dumps(merged, indent=1))


def _safe_name(qid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", qid)[:120] or "q"


def _fatal(exc: BaseException) -> LLMError | None:
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 10:
        if isinstance(e, LLMError) and e.fatal:
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


class _WatchedReasoner:
    """The reasoner as the methods see it during a run, noting fatal provider errors on the way.

    Methods catch `LLMError` themselves and return `Result.error` (one question must not crash
    the app), which hides the error kind from the harness; watching the calls recovers it."""

    _JOBS = ("extract", "decompose", "solve", "answer", "chat")

    def __init__(self, inner: Any):
        self._inner = inner
        self.fatal: LLMError | None = None

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if attr not in self._JOBS or not callable(value):
            return value

        def watched(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            except LLMError as exc:
                if exc.fatal and self.fatal is None:
                    self.fatal = exc
                raise

        return watched


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


def _evaluate_one(
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
    gold = list(q.answers)
    t0 = time.perf_counter()
    try:
        result: Result = method.answer(q.question, corpus, settings)
    except Exception as exc:  # noqa: BLE001 -- one question's failure must not end the run
        if (fatal := _fatal(exc)) is not None:
            raise EvalStopped(f"{name} stopped on question {q.qid}: {fatal}") from exc
        usage = Usage(total_time=time.perf_counter() - t0, engine_time=time.perf_counter() - t0)
        return QuestionRecord(
            q.qid,
            q.question,
            "",
            gold,
            failed_question_metrics(q, evidence),
            usage,
            failure=ERROR,
            error=f"{type(exc).__name__}: {exc}",
            recall_loss=failed_recall_loss(name, q, unit),
        )
    trace_rel = f"traces/{name}/{_safe_name(q.qid)}.json"
    trace_note = ""
    try:
        save_result(result, out_dir / trace_rel)
    except Exception as exc:  # noqa: BLE001 -- an unserializable trace must not lose the score
        trace_rel, trace_note = "", f"trace not saved: {type(exc).__name__}: {exc}"
    if result.error:
        return QuestionRecord(
            q.qid,
            q.question,
            result.answer or "",
            gold,
            failed_question_metrics(q, evidence),
            result.usage or Usage(),
            failure=ERROR,
            trace=trace_rel,
            error=result.error,
            evidence_chunk_ids=list(result.evidence_chunk_ids),
            stop_reason=result.stop_reason,
            reasoner=result.reasoner,
            recall_loss=failed_recall_loss(name, q, unit),
        )
    chunks = corpus.get_chunks(list(dict.fromkeys(result.evidence_chunk_ids)))
    metrics = score_question(result.answer or "", q, chunks, k=k, evidence=evidence)
    failure = (
        label_t2rag(
            result.trace, q, metrics, corpus, correct_f1=correct_f1, evidence_chunk_ids=result.evidence_chunk_ids
        )
        if name == "t2rag"
        else ""
    )
    try:
        loss = recall_loss(name, result.trace, q, corpus, list(dict.fromkeys(result.evidence_chunk_ids)), unit)
    except Exception as exc:  # noqa: BLE001 -- an unreadable trace must not lose the score
        loss, trace_note = None, (trace_note + "; " if trace_note else "") + f"recall loss not read: {exc}"
    return QuestionRecord(
        q.qid,
        q.question,
        result.answer or "",
        gold,
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
) -> EvalSummary:
    """Run each method on the selected questions; resume from `out_dir`; write and return the summary.

    `unit` picks the retrieval unit of the headline columns (`auto`: sentences for a corpus
    chunked by sentence, paragraphs otherwise; both are always in summary.json). `k` is the
    cut-off of recall@k, in evidence chunks. `concurrency` questions run at once (threads; worth
    it with a remote LLM, whose latency dominates). `method_factory(name, reasoner)` defaults to
    `engine.methods.build_method`.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    on_progress = on_progress or no_progress
    settings_by_method = settings_by_method or {}
    if method_factory is None:
        from engine.methods import build_method as method_factory
    selected = select_questions(corpus, questions)
    if unit == "auto":
        mode = getattr(getattr(getattr(corpus, "settings", None), "chunking", None), "mode", "paragraph")
        unit = SENTENCE if mode == "sentence" else PARAGRAPH

    check_run_config(out, corpus, reasoner, methods, settings_by_method)
    evidence = locate_evidence(corpus, selected)  # gold given as text -> the chunks holding it
    watched = _WatchedReasoner(reasoner) if reasoner is not None else None
    total = len(selected) * len(methods)
    done = 0
    stopped = ""
    for name in methods:
        path = out / f"{name}.jsonl"
        have = done_qids(path, repair=True)
        todo = [q for q in selected if q.qid not in have]
        done += len(selected) - len(todo)
        on_progress(done, total, f"{name}: {len(selected) - len(todo)} already done")
        if not todo:
            continue
        try:
            method = method_factory(name, watched if watched is not None else reasoner)  # type: ignore[misc]  # set above
        except Exception as exc:  # noqa: BLE001 -- e.g. a method module that fails to import
            stopped = f"method {name!r} could not be built: {type(exc).__name__}: {exc}"
            break

        def run_one(q: Question, method=method, name=name) -> QuestionRecord:
            if watched is not None and watched.fatal is not None:
                # a worker freed by a failed question must not start another one (one more
                # request per worker with the same bad key) before the main thread stops the run
                raise EvalStopped(f"{name} stopped on question {q.qid}: {watched.fatal}")
            return _evaluate_one(
                method,
                name,
                q,
                corpus,
                settings_by_method.get(name),
                out,
                k,
                correct_f1,
                unit,
                evidence.by_qid.get(q.qid),
            )

        try:
            with open(path, "a", encoding="utf-8") as fh:
                for q, rec in _results(run_one, todo, concurrency):
                    if watched is not None and watched.fatal is not None:
                        # not recorded: after fixing the key/model/server, a rerun redoes this question
                        raise EvalStopped(f"{name} stopped on question {q.qid}: {watched.fatal}")
                    fh.write(serde.dumps(rec) + "\n")
                    fh.flush()
                    done += 1
                    on_progress(done, total, f"{name}: {q.qid}")
        except EvalStopped as exc:
            stopped = str(exc)
            break

    summary = summarize(out, corpus, methods, selected, reasoner, unit=unit, k=k, stopped=stopped)
    summary.evidence = evidence.message()
    write_summary(summary, out)
    return summary


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
