"""Triplet extraction through a provider's batch API: submit, survive restarts, import as batches finish.

    api = BatchAPI("openai/gpt-4o-mini")
    summary = run_batch_extraction(corpus, api, model="openai/gpt-4o-mini", batch_size=5000)

Each pending chunk becomes one request line whose custom_id is `<chunk_id>#extract` and whose body
is the chat request the normal extraction sends (the same prompt, temperature, token budget and
JSON mode), so replies parse with the same code and are stored through the same function (the same
triplet filters, one short write per chunk). Crash safety (engine.triplets.batch_state): batch ids
are stored before any waiting; a rerun resumes polling them instead of submitting again; a chunk in
an open batch is never sent twice; requests a batch did not answer (failed, expired, errored) leave
their chunks pending, so the next run sends only those. The `json+ner` style runs in two phases,
each its own batch (engine.extraction_batch.ner): named entities first, then the triple prompts
that list them; one run does both when it waits.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.core.faults import fault_point
from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Chunk
from engine.extraction_batch.api import TERMINAL, BatchAPI, BatchInfo, wire_model
from engine.extraction_batch.ner import NER_STYLE, import_ner, reply_text, tokens
from engine.llm.base import LLMCall, LLMError
from engine.store.pending import PAGE, iter_pending
from engine.triplets.batch_state import STATE_FILE, BatchRecord, BatchState
from engine.triplets.extraction import ExtractionSummary, _record, batch_price

#: the styles the batch API serves (json+ner in two phases: its second prompt needs the first's reply)
BATCH_STYLES = ("json", "kg2rag", "json+ner")
#: what the normal extraction sends besides the prompt (LLMReasoner's defaults)
TEMPERATURE = 0.0
MAX_TOKENS = 2048
STEP = "extract"
#: a batch in one of these states is imported and closed ("missing": the endpoint no longer knows it)
FINISHED = TERMINAL | {"missing"}


@dataclass
class BatchSummary(ExtractionSummary):
    """An extraction summary plus the batches: submitted now, resumed from an earlier run, still open."""

    batches_submitted: int = 0
    batches_resumed: int = 0
    batches_open: int = 0  # still running at the provider when the run returned
    chunks_submitted: int = 0
    chunks_held: int = 0  # pending chunks already in an open batch: not sent again
    chunks_requeued: int = 0  # requests a batch did not answer: their chunks are pending again
    ner_replies: int = 0  # json+ner: named-entity replies stored (phase 1), their triples still to come
    closed: list[tuple[str, str]] = field(default_factory=list)  # (batch id, final status)

    @property
    def ok(self) -> bool:
        return not self.stopped and self.chunks_failed == 0 and self.chunks_requeued == 0


def request_line(chunk: Chunk, model: str, style: str, entities: list[str] | None = None) -> dict[str, Any]:
    """One request of a batch. `style` "ner" is json+ner's first phase; "json+ner" its second,
    with the `entities` the first phase found."""
    from engine.reasoners import prompts

    if style == "kg2rag":
        messages = prompts.extract_kg2rag_messages(chunk.title, chunk.text)
    elif style == NER_STYLE:
        messages = prompts.ner_messages(chunk.title, chunk.text)
    elif style == "json+ner":
        messages = prompts.extract_json_messages(chunk.title, chunk.text, entities or [])
    else:
        messages = prompts.extract_json_messages(chunk.title, chunk.text)
    body: dict[str, Any] = {
        "model": wire_model(model),
        "messages": messages,
        "temperature": TEMPERATURE,
        "max_tokens": MAX_TOKENS,
    }
    if style != "kg2rag":
        body["response_format"] = {"type": "json_object"}
    step = NER_STYLE if style == NER_STYLE else STEP
    return {"custom_id": f"{chunk.chunk_id}#{step}", "method": "POST", "url": "/v1/chat/completions", "body": body}


def chunk_of(custom_id: str) -> str:
    return custom_id.rpartition("#")[0] or custom_id


def run_batch_extraction(
    corpus,
    api: BatchAPI,
    *,
    model: str,
    style: str = "json",
    batch_size: int = 5000,
    wait: bool = True,
    poll_seconds: float = 30.0,
    max_wait: float | None = None,
    on_progress: ProgressCallback | None = None,
    page: int = PAGE,
    sleep: Callable[[float], None] = time.sleep,
) -> BatchSummary:
    """Submit the corpus's pending chunks (not already in an open batch) in batches of
    `batch_size`, then poll every open batch (this run's and earlier runs') and import each as it
    finishes; with `wait=False` poll once and return (a later run picks the rest up)."""
    if style not in BATCH_STYLES:
        raise ValueError(f"--batch supports the styles {', '.join(BATCH_STYLES)}, not {style!r}")
    if batch_size < 1:
        raise ValueError("batch size must be at least 1")
    extracting = getattr(corpus, "extracting", None)
    with extracting() if extracting else nullcontext():
        state = BatchState(Path(corpus.path) / STATE_FILE)
        try:
            t0 = time.perf_counter()
            summary = BatchSummary(model=model)
            _adopt(state, api, summary)
            summary.batches_resumed = len(state.records("open"))
            _submit(corpus, state, api, model, style, batch_size, page, summary)
            submit_more = lambda: _submit(corpus, state, api, model, style, batch_size, page, summary, True)  # noqa: E731
            _poll(
                corpus,
                state,
                api,
                summary,
                wait,
                poll_seconds,
                max_wait,
                on_progress or no_progress,
                sleep,
                submit_more,
            )
            summary.seconds = time.perf_counter() - t0
            return summary
        finally:
            state.close()


def _adopt(state: BatchState, api: BatchAPI, summary: BatchSummary) -> None:
    """Records a killed run left at "submitting": find the batch made from their file, or make it."""
    for rec in state.records("submitting", "open"):
        if rec.endpoint != api.base:
            raise ValueError(
                f"batch {rec.batch_id or rec.input_file_id} of this corpus was submitted to {rec.endpoint}, not "
                f"{api.base}; rerun with --api-base {rec.endpoint} so it is collected (and not paid for twice)"
            )
    for rec in state.records("submitting"):
        info = api.find_by_input(rec.input_file_id) or api.create(rec.input_file_id, {"corpus_batch": "resumed"})
        state.set_batch(rec.input_file_id, info.id)


def _submit(
    corpus,
    state: BatchState,
    api: BatchAPI,
    model: str,
    style: str,
    size: int,
    page: int,
    summary,
    second_phase_only: bool = False,
) -> None:
    """Send the pending chunks no open batch holds, in batches of `size`. json+ner: a chunk with a
    stored NER reply goes to the triple phase, one without to the NER phase (`second_phase_only`:
    the triple phase only, after a NER batch was imported during polling)."""
    held = state.held_chunk_ids()
    ner = state.ner_replies() if style == "json+ner" else {}
    groups: dict[str, list[Chunk]] = {}
    for chunk in iter_pending(corpus, page):
        if chunk.chunk_id in held:
            summary.chunks_held += not second_phase_only
            continue
        phase = style if style != "json+ner" or chunk.chunk_id in ner else NER_STYLE
        if phase == NER_STYLE and second_phase_only:
            continue
        group = groups.setdefault(phase, [])
        group.append(chunk)
        if len(group) >= size:
            _submit_one(state, api, group, model, phase, summary, ner)
            groups[phase] = []
    for phase, group in groups.items():
        if group:
            _submit_one(state, api, group, model, phase, summary, ner)


def _submit_one(
    state: BatchState,
    api: BatchAPI,
    group: list[Chunk],
    model: str,
    style: str,
    summary,
    ner: dict[str, tuple[list[str], int, int]],
) -> None:
    lines = (request_line(c, model, style, ner[c.chunk_id][0] if c.chunk_id in ner else None) for c in group)
    data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
    file_id = api.upload(data)
    state.record_upload(file_id, [c.chunk_id for c in group], api.base, model, style)
    fault_point("batch.after_upload")  # a kill here: the file is recorded, no batch yet (resume makes it)
    info = api.create(file_id, {"chunks": str(len(group))})
    fault_point("batch.after_create")  # a kill here: the batch exists, its id unstored (resume finds it)
    state.set_batch(file_id, info.id)
    fault_point("batch.after_submit")  # a kill here: the batch id is stored; resume polls it
    summary.batches_submitted += 1
    summary.chunks_submitted += len(group)


def _poll(corpus, state, api, summary, wait, poll_seconds, max_wait, progress, sleep, submit_more) -> None:
    end = None if max_wait is None else time.monotonic() + max_wait
    total = sum(r.requests for r in state.records("open"))
    while True:
        before = summary.ner_replies
        for rec in state.records("open"):
            info = _retrieve(api, rec)
            if info.status in FINISHED:
                _import(corpus, state, api, rec, info, summary)
        if summary.ner_replies > before:  # json+ner: the entities are in, send their triple prompts now
            sent = summary.chunks_submitted
            submit_more()
            total += summary.chunks_submitted - sent
        left = state.records("open")
        progress(total - sum(r.requests for r in left), total, f"{len(left)} batch(es) running")
        if not left or not wait or (end is not None and time.monotonic() >= end):
            summary.batches_open = len(left)
            return
        sleep(poll_seconds)


def _retrieve(api: BatchAPI, rec: BatchRecord) -> BatchInfo:
    """The batch's state; one the endpoint no longer knows (deleted, or past its retention) is
    treated as finished with no replies, so its chunks are pending again."""
    try:
        return api.retrieve(rec.batch_id)
    except LLMError as err:
        if err.kind != "not_found":
            raise
        return BatchInfo(rec.batch_id, "missing", rec.input_file_id, errors=f"the endpoint has no batch {rec.batch_id}")


def _import(corpus, state: BatchState, api: BatchAPI, rec: BatchRecord, info: BatchInfo, summary) -> None:
    """Store every answered request of a finished batch, then close its record (the rest pending)."""
    ids = state.chunk_ids(rec.input_file_id)
    done = _done_among(corpus, ids)
    answered: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    for line in api.content(info.output_file_id) if info.output_file_id else []:
        cid, response = chunk_of(str(line.get("custom_id", ""))), line.get("response") or {}
        if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
            answered[cid] = response["body"]
        else:
            errors[cid] = _error_text(line)
    for line in api.content(info.error_file_id) if info.error_file_id else []:
        errors.setdefault(chunk_of(str(line.get("custom_id", ""))), _error_text(line))
    if rec.style == NER_STYLE:
        import_ner(state, rec, info, answered, errors, summary)
        fault_point("batch.after_ner_import")  # a kill here: the entities stored, no triple batch yet
        return
    todo = [cid for cid in ids if cid in answered and cid not in done]
    ner = state.ner_replies(todo) if rec.style == "json+ner" else {}
    for chunk in corpus.get_chunks(todo):
        _store(corpus, chunk, answered[chunk.chunk_id], rec, summary, ner.get(chunk.chunk_id))
        fault_point("batch.after_import")  # a kill here: part of a finished batch stored
    if rec.style == "json+ner":  # the entities of every stored chunk (a killed import's too) are done with
        state.drop_ner(sorted(_done_among(corpus, ids)))
    unanswered = [cid for cid in ids if cid not in answered and cid not in done]
    summary.chunks_requeued += len(unanswered)
    for cid in unanswered[: max(0, 20 - len(summary.failures))]:
        summary.failures.append((cid, f"batch {info.id} {info.status}: {errors.get(cid) or info.errors or 'no reply'}"))
    state.close_batch(rec.input_file_id, info.status)
    summary.closed.append((info.id, info.status))


def _error_text(line: dict[str, Any]) -> str:
    err = line.get("error") or ((line.get("response") or {}).get("body") or {}).get("error") or {}
    return str(err.get("message") or err.get("code") or err)[:300] if isinstance(err, dict) else str(err)[:300]


def _done_among(corpus, chunk_ids: list[str]) -> set[str]:
    if not hasattr(corpus, "_db"):
        statuses = corpus.extraction_statuses()
        return {c for c in chunk_ids if getattr(statuses.get(c), "status", "") == "done"}
    found: set[str] = set()
    for i in range(0, len(chunk_ids), 500):
        part = chunk_ids[i : i + 500]
        marks = ", ".join("?" for _ in part)
        with corpus._lock:
            rows = corpus._db.execute(
                f"SELECT chunk_id FROM extraction WHERE status = 'done' AND chunk_id IN ({marks})", part
            ).fetchall()
        found.update(r[0] for r in rows)
    return found


def _store(
    corpus,
    chunk: Chunk,
    body: dict[str, Any],
    rec: BatchRecord,
    summary: BatchSummary,
    ner: tuple[list[str], int, int] | None = None,
) -> None:
    """One answered request, parsed and filtered exactly as LLMReasoner.extract does, stored by
    the normal runner's `_record` (the batch price as its cost). json+ner: `ner` is the chunk's
    phase-1 reply, whose tokens count with this one's (two calls, as the normal extraction bills)."""
    from engine.core.triplet_rules import filter_triplets
    from engine.llm import litellm_call
    from engine.reasoners.parsing import parse_kg2rag, parse_triples

    text = reply_text(body)
    if len(text.encode("utf-8")) > litellm_call._reply_cap:  # the cap every chat reply has
        text, too_large = "", f"the reply is over the {litellm_call._reply_cap / 1048576:g} MB limit of one reply"
    else:
        too_large = ""
    p, c = tokens(body)
    if ner is not None:
        p, c = p + ner[1], c + ner[2]
    raw, err = (parse_kg2rag(text) if rec.style == "kg2rag" else parse_triples(text)) if text.strip() else ([], "")
    triplets = filter_triplets(raw, f"{chunk.title}\n{chunk.text}")
    call = LLMCall(
        job="extract",
        model=rec.model,
        response=text,
        parsed=[list(t) for t in triplets],
        prompt_tokens=p,
        completion_tokens=c,
        cost=batch_price(rec.model, p, c)[0],
        error=too_large or ("empty reply" if not text.strip() else (f"parse: {err}" if err else "")),
    )
    _record(corpus, chunk, (triplets, call), 2 if rec.style == "json+ner" else 1, summary)
