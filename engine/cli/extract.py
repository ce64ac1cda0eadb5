"""`extract NAME [--model M] [--api-base URL] [--estimate] [--concurrency N] [--style S] [--batch]`.

Prints the cost estimate first (with `--estimate`, only that), then runs the extraction over the
corpus's pending chunks with a progress bar, then a summary of calls, tokens, cost, cache hits and
failures. Interrupting is safe: finished chunks are stored, a rerun continues with the rest.
With `--batch` the chunks go through the provider's batch API instead (half the price at OpenAI
and most others, results within 24 h): the batch ids are stored in the corpus before waiting, so an
interrupted run is resumed by running the same command again.
The API key comes from the provider's environment variable (litellm reads it); it is never printed.
"""

from __future__ import annotations

import argparse
import sys

from engine.core.config import AppSettings
from engine.core.progress import TerminalProgress
from engine.core.terminal import shown


def _dollars(cost: float | None) -> str:
    return "unknown (no price in litellm's table)" if cost is None else f"${cost:.4f}"


def format_estimate(est) -> str:
    return (
        f"estimate for {est.chunks} pending chunks with {shown(est.model)} ({est.style}): {est.calls} calls, "
        f"~{est.prompt_tokens:,} prompt + ~{est.completion_tokens:,} completion tokens "
        f"(counted with {est.token_counter}), cost {_dollars(est.cost)}; "
        f"through the batch API (--batch) {_dollars(est.batch_cost)}"
        + (f" ({est.batch_price_source})" if est.batch_cost is not None else "")
    )


def format_summary(s) -> str:
    lines = [
        f"extracted {s.chunks_done} chunks ({s.triplets} triplets), {s.chunks_failed} failed, "
        f"{s.chunks_skipped} skipped, in {s.seconds:.1f}s",
        f"{s.calls} LLM calls ({s.cache_hits} from cache), {s.prompt_tokens:,} prompt + "
        f"{s.completion_tokens:,} completion tokens billed, cost {_dollars(s.cost)}",
    ]
    for chunk_id, err in s.failures[:5]:
        lines.append(f"  failed {shown(chunk_id)}: {shown(err[:200])}")
    if s.chunks_failed > 5:
        lines.append(f"  ... and {s.chunks_failed - 5} more; rerun to retry failed chunks")
    return "\n".join(lines)


def cmd_extract(args) -> int:
    from engine.session import Session
    from engine.store.pending import count_pending, iter_pending
    from engine.triplets.extraction import estimate_extraction, run_extraction

    app = AppSettings.from_env()
    from engine.store import open_workspace

    ws = open_workspace(app)
    ws.on_wait = lambda message: print(shown(message), file=sys.stderr)
    corpus = ws.open(args.name)
    model = args.model if args.model is not None else app.model
    api_base = args.api_base if args.api_base is not None else app.api_base
    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    n_pending = count_pending(corpus)  # the chunks themselves are read in pages, never all at once
    if not n_pending:
        print(f"{shown(args.name)}: every chunk is already extracted; nothing to do")
        return 0
    if model:
        print(format_estimate(estimate_extraction(iter_pending(corpus), model, args.style)))
    else:
        print(f"{n_pending} pending chunks; no --model given, using the offline rules reasoner (free)")
    if args.estimate:
        return 0
    if args.batch:
        return cmd_extract_batch(args, corpus, model, api_base)

    reasoner = Session.for_cli(app, model, api_base).reasoner(corpus, extraction_style=args.style)
    bar = TerminalProgress()
    try:
        summary = run_extraction(
            corpus, reasoner, concurrency=args.concurrency, on_progress=bar, call_deadline=app.call_deadline
        )
        if summary.chunks_done and not summary.unstored:
            corpus.refresh_indexes(bar)  # embed the new propositions now, not at the first question
    finally:
        bar.close()
    print(format_summary(summary))
    if summary.stopped:
        print(f"error: extraction stopped: {shown(summary.stopped)}", file=sys.stderr)
        return 1
    if summary.chunks_failed:
        print(f"error: {summary.chunks_failed} chunk(s) failed; rerun the same command to retry them", file=sys.stderr)
        return 1
    return 0


def cmd_extract_batch(args, corpus, model: str, api_base: str) -> int:
    """`extract NAME --batch`: submit the pending chunks to the provider's batch API, wait for the
    batches (this run's and any an earlier run left open), import each as it finishes."""
    from engine.extraction_batch import BatchAPI, run_batch_extraction

    if not model:
        raise ValueError("--batch needs a model (--model or TRIPLET_LENS_MODEL): the offline rules have no batch API")
    api = BatchAPI(model, api_base or "")
    bar = TerminalProgress()
    try:
        s = run_batch_extraction(
            corpus,
            api,
            model=model,
            style=args.style,
            batch_size=args.batch_size,
            wait=not args.no_wait,
            poll_seconds=args.poll_seconds,
            on_progress=bar,
        )
        if s.chunks_done:
            corpus.refresh_indexes(bar)
    finally:
        bar.close()
    print(
        f"batches: {s.batches_submitted} submitted ({s.chunks_submitted} chunks), {s.batches_resumed} resumed "
        f"from an earlier run, {len(s.closed)} finished, {s.batches_open} still running"
    )
    print(format_summary(s))
    if s.chunks_requeued:
        print(f"{s.chunks_requeued} request(s) were not answered (failed or expired batch); their chunks are pending")
    if s.batches_open:
        print(
            f"rerun `extract {shown(args.name)} --batch` to import the {s.batches_open} running batch(es); "
            "it never resubmits"
        )
    if s.chunks_failed or s.chunks_requeued:
        print("error: some chunks are not extracted; rerun the same command to send only those", file=sys.stderr)
        return 1
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "extract",
        help="extract triplets from a corpus's pending chunks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="corpus name")
    p.add_argument(
        "--model",
        default=None,
        help="litellm model string (openai/gpt-4o-mini, ollama/llama3, ...); default: "
        "TRIPLET_LENS_MODEL, or the offline rules when empty",
    )
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint for the model (vLLM, a proxy...)")
    p.add_argument("--estimate", action="store_true", help="print the token and cost estimate and stop")
    p.add_argument("--concurrency", type=int, default=8, help="chunks extracted at once (default 8)")
    p.add_argument(
        "--style",
        choices=("json", "json+ner", "kg2rag"),
        default="json",
        help="prompt style: JSON triples, JSON after a named-entity pass (2 calls), or KG2RAG's <h##r##t>$$ format",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="send the chunks through the provider's batch API (OpenAI-compatible files + batches; about half "
        "the price, results within 24 h); rerunning resumes the stored batches, never resubmits them",
    )
    p.add_argument("--batch-size", type=int, default=5000, help="chunks per batch with --batch (default 5000)")
    p.add_argument("--poll-seconds", type=float, default=30.0, help="seconds between polls with --batch (default 30)")
    p.add_argument("--no-wait", action="store_true", help="with --batch: submit, import what is finished, and return")
    p.set_defaults(func=cmd_extract)
