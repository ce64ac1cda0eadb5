"""The evaluation harness: run methods over a corpus's questions, score, resume, summarize.

    summary = run_eval(corpus, ["t2rag", "kg2rag"], reasoner, questions=20, out_dir="runs/x")

Layout of `out_dir`:

    <method>.jsonl                 one `QuestionRecord` per line, appended as each question finishes
    traces/<method>/<qid>.json     the full `Result` with its trace (engine.methods.save_result)
    summary.json / .csv / .md      per-method averages (`MethodSummary`)

Each line is flushed as soon as its question is done, so an interrupted run (Ctrl-C, a crash, a
killed process) resumes where it stopped: questions already in the jsonl are skipped, and a half-
written last line is cut off. A question whose method raises is recorded with its error and scores
0; only provider errors that no retry fixes (bad key, unknown model, unreachable server) stop the
whole run, with one message, because every later question would fail the same way.
"""
from __future__ import annotations

import csv
import io
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from engine import serde
from engine.eval.failures import ERROR, LABELS, label_t2rag
from engine.eval.metrics import (PARAGRAPH, SENTENCE, AverageMetrics, QuestionMetrics, average_metrics,
                                 failed_question_metrics, score_question)
from engine.llm.base import LLMError
from engine.methods.base import Result, Usage, save_result
from engine.progress import ProgressCallback, no_progress
from engine.types import Question

#: LLMError kinds after which every further call would fail too.
FATAL_LLM_KINDS = ("auth", "not_found", "unreachable")


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


@dataclass
class EvalSummary:
    out_dir: str
    corpus: str
    reasoner: str
    n_questions: int
    methods: list[MethodSummary]
    stopped: str = ""  # why the run stopped early; "" when it completed
    created: float = 0.0

    def markdown(self) -> str:
        return summary_markdown(self)


class EvalStopped(RuntimeError):
    """Raised inside the loop for a fatal provider error; run_eval turns it into `stopped`."""


# --- selection and resume ----------------------------------------------------------------------

def select_questions(corpus: Any, questions: None | int | Sequence[str]) -> list[Question]:
    """All questions, the first N, or the given ids (in the given order; unknown ids raise)."""
    if questions is None or isinstance(questions, int):
        qs = corpus.questions()
        if not qs:
            raise ValueError(f"corpus {getattr(corpus, 'name', '')!r} has no questions to evaluate; "
                             "add a dataset file with questions first")
        return qs if questions is None else qs[:max(0, questions)]
    out, missing = [], []
    for qid in questions:
        q = corpus.get_question(qid)
        (out.append(q) if q is not None else missing.append(qid))
    if missing:
        raise ValueError(f"{len(missing)} question id(s) not in corpus: {', '.join(missing[:5])}")
    return out


def read_records(path: Path, repair: bool = False) -> dict[str, QuestionRecord]:
    """Records already written, by qid (a later line for the same qid wins). A truncated or
    garbled line is ignored; with `repair`, a broken tail is cut off so appends start clean."""
    out: dict[str, QuestionRecord] = {}
    if not path.exists():
        return out
    raw = path.read_bytes()
    good_end = 0
    pos = 0
    for line in raw.splitlines(keepends=True):
        pos += len(line)
        if not line.strip():
            good_end = pos
            continue
        try:
            if not line.endswith(b"\n"):
                raise ValueError("unterminated line")  # the process died mid-write
            rec = serde.from_dict(QuestionRecord, json.loads(line))
            out[rec.qid] = rec
            good_end = pos
        except (ValueError, TypeError, KeyError):
            continue
    if repair and good_end < len(raw):
        # only the tail can be half-written (lines are appended); keep every complete line
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return out


def check_run_config(out: Path, corpus: Any, reasoner: Any, methods: list[str],
                     settings_by_method: dict[str, Any]) -> None:
    """Refuse to resume into a folder that holds another run (other corpus, model or settings):
    mixing its records with new ones would average two different experiments."""
    config = {"corpus": getattr(corpus, "name", ""), "reasoner": getattr(reasoner, "name", "") if reasoner else "",
              "settings": {m: serde.to_dict(settings_by_method.get(m)) for m in methods}}
    path = out / "run.json"
    old: dict = {}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    for key in ("corpus", "reasoner"):
        if old.get(key, config[key]) != config[key]:
            raise ValueError(f"{out} holds results for {key} {old[key]!r}, not {config[key]!r}; "
                             "use another output folder")
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
        if isinstance(e, LLMError) and e.kind in FATAL_LLM_KINDS:
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
                if exc.kind in FATAL_LLM_KINDS and self.fatal is None:
                    self.fatal = exc
                raise
        return watched


# --- running -----------------------------------------------------------------------------------

def _results(fn: Callable[[Question], QuestionRecord], todo: list[Question],
             concurrency: int) -> Iterator[tuple[Question, QuestionRecord]]:
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


def _evaluate_one(method: Any, name: str, q: Question, corpus: Any, settings: Any, out_dir: Path,
                  k: int, correct_f1: float) -> QuestionRecord:
    gold = list(q.answers)
    t0 = time.perf_counter()
    try:
        result: Result = method.answer(q.question, corpus, settings)
    except Exception as exc:  # noqa: BLE001 -- one question's failure must not end the run
        if (fatal := _fatal(exc)) is not None:
            raise EvalStopped(f"{name} stopped on question {q.qid}: {fatal}") from exc
        usage = Usage(total_time=time.perf_counter() - t0, engine_time=time.perf_counter() - t0)
        return QuestionRecord(q.qid, q.question, "", gold, failed_question_metrics(q), usage,
                              failure=ERROR, error=f"{type(exc).__name__}: {exc}")
    trace_rel = f"traces/{name}/{_safe_name(q.qid)}.json"
    trace_note = ""
    try:
        save_result(result, out_dir / trace_rel)
    except Exception as exc:  # noqa: BLE001 -- an unserializable trace must not lose the score
        trace_rel, trace_note = "", f"trace not saved: {type(exc).__name__}: {exc}"
    if result.error:
        return QuestionRecord(q.qid, q.question, result.answer or "", gold, failed_question_metrics(q),
                              result.usage or Usage(), failure=ERROR, trace=trace_rel, error=result.error,
                              evidence_chunk_ids=list(result.evidence_chunk_ids), stop_reason=result.stop_reason,
                              reasoner=result.reasoner)
    chunks = corpus.get_chunks(list(dict.fromkeys(result.evidence_chunk_ids)))
    metrics = score_question(result.answer or "", q, chunks, k=k)
    failure = label_t2rag(result.trace, q, metrics, corpus, correct_f1=correct_f1,
                                     evidence_chunk_ids=result.evidence_chunk_ids) if name == "t2rag" else ""
    return QuestionRecord(q.qid, q.question, result.answer or "", gold, metrics, result.usage or Usage(),
                          failure=failure, trace=trace_rel, error=trace_note,
                          evidence_chunk_ids=list(result.evidence_chunk_ids), stop_reason=result.stop_reason,
                          reasoner=result.reasoner)


def run_eval(corpus: Any, methods: list[str], reasoner: Any, questions: None | int | Sequence[str] = None,
             out_dir: Path | str = "eval_out", settings_by_method: dict[str, Any] | None = None,
             on_progress: ProgressCallback | None = None, *, unit: str = "auto", k: int = 5,
             correct_f1: float = 0.8, concurrency: int = 1,
             method_factory: Callable[[str, Any], Any] | None = None) -> EvalSummary:
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
    watched = _WatchedReasoner(reasoner) if reasoner is not None else None
    total = len(selected) * len(methods)
    done = 0
    stopped = ""
    for name in methods:
        path = out / f"{name}.jsonl"
        have = read_records(path, repair=True)
        todo = [q for q in selected if q.qid not in have]
        done += len(selected) - len(todo)
        on_progress(done, total, f"{name}: {len(selected) - len(todo)} already done")
        if not todo:
            continue
        try:
            method = method_factory(name, watched if watched is not None else reasoner)
        except Exception as exc:  # noqa: BLE001 -- e.g. a method module that fails to import
            stopped = f"method {name!r} could not be built: {type(exc).__name__}: {exc}"
            break
        def run_one(q: Question) -> QuestionRecord:
            return _evaluate_one(method, name, q, corpus, settings_by_method.get(name), out, k, correct_f1)

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
    write_summary(summary, out)
    return summary


# --- summarizing -------------------------------------------------------------------------------

def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summarize_method(name: str, records: dict[str, QuestionRecord], selected: list[Question],
                     unit: str, k: int) -> MethodSummary:
    recs = [records.get(q.qid) for q in selected]
    got = [r for r in recs if r is not None]
    metrics = [r.metrics if r is not None else None for r in recs]
    by_unit = {u: average_metrics(metrics, u) for u in (PARAGRAPH, SENTENCE)}
    usages = [r.usage for r in got if r.usage is not None]
    cost: float | None = 0.0
    for u in usages:
        cost = None if (cost is None or u.cost is None) else cost + u.cost
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
        failures=failures)


def summarize(out: Path, corpus: Any, methods: list[str], selected: list[Question], reasoner: Any,
              *, unit: str, k: int, stopped: str = "") -> EvalSummary:
    rows = [summarize_method(m, read_records(out / f"{m}.jsonl"), selected, unit, k) for m in methods]
    return EvalSummary(out_dir=str(out), corpus=getattr(corpus, "name", ""),
                       reasoner=getattr(reasoner, "name", str(reasoner)), n_questions=len(selected),
                       methods=rows, stopped=stopped, created=time.time())


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
    for m in s.methods:
        if m.failures:
            lines += ["", f"T2RAG failure labels ({m.n_done} questions):", "",
                      "| " + " | ".join(m.failures) + " |", "|" + "|".join("---" for _ in m.failures) + "|",
                      "| " + " | ".join(str(v) for v in m.failures.values()) + " |"]
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
