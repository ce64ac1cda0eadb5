"""Per-chunk triplet extraction: the filters, the concurrent resumable runner, the cost estimate.

Extraction is the expensive, billed step, so the runner is built around not paying twice:
only pending chunks are sent, each finished chunk is stored the moment its reply arrives (an
interrupted run loses at most the calls in flight), and the LLM response cache answers a repeated
prompt for free. The pending chunks are read a page at a time (engine.store.pending), so a run over
millions of chunks holds one page and the calls in flight, not the whole pending list.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass, field

from engine.core.faults import fault_point
from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Chunk, ExtractionStatus
from engine.llm.base import OFFLINE_MODEL, LLMCall, LLMError
from engine.reasoners.base import Reasoner
from engine.store.errors import CorpusGoneError
from engine.store.pending import PAGE, count_failed, count_pending, iter_pending

# --- the runner ---------------------------------------------------------------------------------


@dataclass
class ExtractionSummary:
    """What one extraction run did. Tokens and cost count billed calls only (not cache hits)."""

    model: str = ""
    chunks_total: int = 0  # pending chunks when the run started
    chunks_done: int = 0
    chunks_failed: int = 0
    chunks_skipped: int = 0  # previously failed chunks left alone (retry_failed=False), or not reached
    triplets: int = 0
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0  # None when any billed call had no known price
    seconds: float = 0.0
    stopped: str = ""  # set when the run stopped early (auth / unknown model / unreachable server)
    unstored: int = 0  # replies received (and billed) that could not be stored: the corpus was dropped
    failures: list[tuple[str, str]] = field(default_factory=list)  # (chunk_id, error), first 20

    @property
    def ok(self) -> bool:
        return not self.stopped and self.chunks_failed == 0


def _calls_of(reasoner: Reasoner) -> int:
    # LLMReasoner says how many provider calls one extract makes (2 with the NER pass); the
    # offline reasoner makes none.
    return int(getattr(reasoner, "calls_per_extract", 0))


def run_extraction(
    corpus,
    reasoner: Reasoner,
    concurrency: int = 8,
    on_progress: ProgressCallback | None = None,
    retry_failed: bool = True,
    call_deadline: float | None = 180.0,
    page: int = PAGE,
) -> ExtractionSummary:
    """Extract triplets for every pending chunk of `corpus`, `concurrency` chunks at a time.

    Store writes happen on the calling thread as results arrive, so the corpus sees one writer.
    An auth / unknown-model / unreachable error stops the run: nothing more is submitted, the
    chunks in flight are left pending, and `summary.stopped` holds the one message to show.
    """
    # Hold the corpus's extraction lock for the whole run, from reading the pending list on: a
    # second extraction of the same corpus is told it is busy instead of paying for the same chunks.
    # Results are stored one short write each, so readers and adds never wait for the run.
    # (A fake corpus in tests may not have the lock.)
    extracting = getattr(corpus, "extracting", None)
    with extracting() if extracting else nullcontext():
        return _run(corpus, reasoner, concurrency, on_progress, retry_failed, call_deadline, page)


def _run(
    corpus,
    reasoner: Reasoner,
    concurrency: int,
    on_progress: ProgressCallback | None,
    retry_failed: bool,
    call_deadline: float | None = None,
    page: int = PAGE,
) -> ExtractionSummary:
    progress = on_progress or no_progress
    t0 = time.perf_counter()
    summary, held = _planned(corpus, reasoner, retry_failed)
    total = summary.chunks_total
    progress(0, total, "extracting")
    if not total:
        summary.seconds = time.perf_counter() - t0
        return summary

    per_call = _calls_of(reasoner)
    stop = threading.Event()

    def job(chunk: Chunk) -> tuple[list[tuple[str, str, str]], LLMCall] | None:
        if stop.is_set():
            return None  # the run is stopping; leave this chunk pending
        from engine.llm.deadline import within

        fault_point("extract.before_call")  # a kill here: the chunk was never sent, nothing billed
        with within(call_deadline, "extraction call"):  # retries included; a hung provider fails the chunk
            return reasoner.extract(chunk.title, chunk.text)

    todo = (c for c in iter_pending(corpus, page, skip_failed=not retry_failed) if c.chunk_id not in held)
    inflight: dict[Future, Chunk] = {}
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="extract") as pool:

        def submit_next() -> None:
            chunk = next(todo, None)
            if chunk is not None and not stop.is_set():
                inflight[pool.submit(job, chunk)] = chunk

        # Keep a bounded window in flight so stopping early wastes at most `concurrency` calls.
        for _ in range(max(1, concurrency) * 2):
            submit_next()
        try:
            _drain(corpus, inflight, submit_next, stop, per_call, summary, progress, total)
        except CorpusGoneError as gone:  # dropped or replaced by another process: stop, say what was paid
            stop.set()
            summary.stopped = str(gone)
            summary.unstored = 1  # the reply whose store found the corpus gone
        except BaseException:
            # Ctrl-C or a store error: queued chunks return at once; calls already sent finish
            # (their replies land in the response cache, so a rerun gets them free)
            stop.set()
            raise
    if summary.unstored:  # the pool has waited for the calls in flight: their replies are paid too
        summary.unstored += sum(1 for f in inflight if not f.cancelled() and f.exception() is None and f.result())
        summary.stopped += _unstored_note(reasoner, summary.unstored)
    summary.chunks_skipped += max(0, total - summary.chunks_done - summary.chunks_failed)
    summary.seconds = time.perf_counter() - t0
    return summary


def _planned(corpus, reasoner: Reasoner, retry_failed: bool) -> tuple[ExtractionSummary, set[str]]:
    """The run's summary with its pending and skipped chunks counted, and the chunks held by
    provider batches (extract --batch: collected by that, not sent here)."""
    from engine.triplets.batch_state import held_by_batches

    summary = ExtractionSummary(model=getattr(reasoner, "name", ""))
    held = held_by_batches(corpus)
    summary.chunks_total = max(0, count_pending(corpus, skip_failed=not retry_failed) - len(held))
    summary.chunks_skipped = len(held)
    if not retry_failed:
        summary.chunks_skipped += count_failed(corpus)
    return summary, held


def _unstored_note(reasoner: Reasoner, n: int) -> str:
    cache = getattr(getattr(reasoner, "llm", None), "cache", None)
    if not _calls_of(reasoner):
        return f"; {n} chunk result(s) were not stored (the offline rules: nothing was billed)"
    if cache is not None:
        return (
            f"; {n} extraction reply(ies) received were not stored: they are kept in the LLM response cache, so "
            "extracting the corpus again after bringing it back stores them without paying again"
        )
    return f"; {n} extraction reply(ies) received and billed were not stored (no response cache was in use)"


def _drain(
    corpus,
    inflight: dict,
    submit_next,
    stop: threading.Event,
    per_call: int,
    summary: ExtractionSummary,
    progress: ProgressCallback,
    total: int,
) -> None:
    """Collect results as they complete, store them on this thread, keep the window full."""
    finished = 0
    while inflight:
        done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
        for fut in done:
            chunk = inflight.pop(fut)
            try:
                result = fut.result()
            except LLMError as err:
                if err.fatal:  # every further chunk would fail the same way
                    if not summary.stopped:
                        summary.stopped = str(err)
                    stop.set()
                    continue
                result = ([], LLMCall(job="extract", model=summary.model, error=str(err)))
            except Exception as err:  # noqa: BLE001 - a bug in one chunk must not lose the others
                result = ([], LLMCall(job="extract", model=summary.model, error=f"{type(err).__name__}: {err}"))
            if result is None:
                continue
            fault_point("extract.after_reply")  # a kill here: the reply was paid for, not stored
            _record(corpus, chunk, result, per_call, summary)
            fault_point("extract.after_store")  # a kill here: the chunk is stored, the run not done
            finished += 1
            progress(finished, total, chunk.title or chunk.chunk_id)
            submit_next()


def _record(
    corpus, chunk: Chunk, result: tuple[list[tuple[str, str, str]], LLMCall], per_call: int, summary: ExtractionSummary
) -> None:
    triplets, call = result
    calls = per_call
    summary.calls += calls
    if calls and call.cached:
        summary.cache_hits += calls
    elif calls:
        summary.prompt_tokens += call.prompt_tokens
        summary.completion_tokens += call.completion_tokens
        if call.cost is None or summary.cost is None:
            summary.cost = None
        else:
            summary.cost += call.cost
    if call.error:
        summary.chunks_failed += 1
        if len(summary.failures) < 20:
            summary.failures.append((chunk.chunk_id, call.error))
        corpus.mark_extraction_failed(chunk.chunk_id, call.error, call.model or summary.model)
        return
    corpus.store_extraction(
        chunk.chunk_id,
        triplets,
        ExtractionStatus(
            chunk_id=chunk.chunk_id,
            status="done",
            model=call.model or summary.model,
            calls=calls,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            cost=0.0 if call.cached else call.cost,
        ),
    )
    summary.chunks_done += 1  # counted once stored
    summary.triplets += len(triplets)


# --- the cost estimate --------------------------------------------------------------------------

#: Expected completion tokens per chunk, as a fraction of the chunk's own tokens plus a constant.
#: A triple list restates most facts of a chunk with some bracket overhead (about 0.6x plus
#: framing); an entity list is a fraction of that. Measured loosely on HotpotQA paragraphs with
#: gpt-4o-mini; the estimate is a budget guide, not a quote.
COMPLETION_RATIO = {"extract": (0.6, 20), "ner": (0.25, 10)}


@dataclass(frozen=True)
class ExtractionEstimate:
    model: str
    style: str
    chunks: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # dollars; None when the model has no price in litellm's table
    token_counter: str  # "litellm" or "chars/4"
    note: str = ""
    batch_cost: float | None = None  # the same tokens at the provider's batch-API price
    batch_price_source: str = ""  # where the batch price comes from (litellm's table, or half the normal price)


def _counter(model: str):
    """litellm.token_counter when litellm is importable, else a characters/4 rule of thumb."""
    try:
        from engine.llm.litellm_client import import_litellm

        litellm = import_litellm()
    except Exception:  # noqa: BLE001
        litellm = None

    def by_chars(messages: list[dict[str, str]]) -> int:
        return sum(len(m.get("content", "")) for m in messages) // 4 + 4 * len(messages)

    if litellm is None or not model:
        return by_chars, "chars/4"

    def by_litellm(messages: list[dict[str, str]]) -> int:
        try:
            return int(litellm.token_counter(model=model, messages=messages))
        except Exception:  # noqa: BLE001 - a tokenizer litellm cannot load offline
            return by_chars(messages)

    return by_litellm, "litellm"


def estimate_extraction(corpus_chunks: Iterable[Chunk], model: str, style: str = "json") -> ExtractionEstimate:
    """Tokens and dollars to extract `corpus_chunks` (any iterable: it is read once, streaming) with
    `model` in `style`, before paying."""
    from engine.reasoners import prompts

    if style not in ("json", "json+ner", "kg2rag"):
        raise ValueError(f"unknown extraction style {style!r}; use json, json+ner or kg2rag")
    if not model:
        n = sum(1 for _ in corpus_chunks)
        return ExtractionEstimate(
            model=OFFLINE_MODEL,
            style=style,
            chunks=n,
            calls=0,
            prompt_tokens=0,
            completion_tokens=0,
            cost=0.0,
            token_counter="none",
            note="offline rules: no LLM calls",
        )
    count, how = _counter(model)
    prompt = completion = n = 0
    er, ec = COMPLETION_RATIO["extract"]
    nr, nc = COMPLETION_RATIO["ner"]
    for ch in corpus_chunks:
        n += 1
        own = count([{"role": "user", "content": ch.text}])
        if style == "kg2rag":
            prompt += count(prompts.extract_kg2rag_messages(ch.title, ch.text))
        elif style == "json":
            prompt += count(prompts.extract_json_messages(ch.title, ch.text))
        else:
            ner_out = int(nr * own + nc)
            prompt += count(prompts.ner_messages(ch.title, ch.text))
            prompt += count(prompts.extract_json_messages(ch.title, ch.text, [])) + ner_out
            completion += ner_out
        completion += int(er * own + ec)
    calls = n * (2 if style == "json+ner" else 1)
    cost = _price(model, prompt, completion)
    note = "" if cost is not None else f"no price for {model!r} in litellm's table"
    batch_cost, batch_source = batch_price(model, prompt, completion)
    return ExtractionEstimate(
        model=model,
        style=style,
        chunks=n,
        calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost,
        token_counter=how,
        note=note,
        batch_cost=batch_cost,
        batch_price_source=batch_source,
    )


def _price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    try:
        from engine.llm.litellm_client import import_litellm

        p, c = import_litellm().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(p) + float(c)
    except Exception:  # noqa: BLE001 - "model isn't mapped yet": unknown, never a guess
        return None


def batch_price(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, str]:
    """(dollars, source) for the tokens sent through the provider's batch API: litellm's batch
    prices where its table has them (`input_cost_per_token_batches`), else half the normal price
    (what OpenAI, Anthropic, Groq and others charge for batches); None when the model has no price."""
    try:
        from engine.llm.litellm_client import import_litellm

        table = import_litellm().model_cost
        entry = table.get(model) or table.get(model.split("/", 1)[-1]) or {}
        pin, pout = entry.get("input_cost_per_token_batches"), entry.get("output_cost_per_token_batches")
        if isinstance(pin, (int, float)) and isinstance(pout, (int, float)):
            return float(pin) * prompt_tokens + float(pout) * completion_tokens, "litellm's batch price"
    except Exception:  # noqa: BLE001 - no litellm: the half-price rule below
        pass
    normal = _price(model, prompt_tokens, completion_tokens)
    return (None, "no price") if normal is None else (normal / 2, "half the normal price")
