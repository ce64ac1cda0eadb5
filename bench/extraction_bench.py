"""Extraction throughput against the loopback server with an artificial provider latency.

    .venv/bin/python bench/extraction_bench.py [--latency 0.2] [--seconds 3] [--levels 1,4,16]

Runs `run_extraction` (LLMReasoner over the real litellm client, no cache) against the loopback
OpenAI-compatible server, which sleeps `latency` seconds per request. With perfect concurrency, c
workers finish c / latency chunks per second; the table prints the measured rate as a ratio of
that ideal, so the figure says how much the runner, litellm and the HTTP round trip cost on top of
the provider's own latency. Chunks per level are sized so each level runs about `--seconds`
of ideal time. The server runs in its own process (a provider does not share our GIL);
the corpus is in memory, so store writes are not measured here (bench/index_bench.py
covers the store). Target: ratio >= 0.8 at concurrency 16.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


class MemoryCorpus:
    """The slice of the Corpus API the runner uses."""

    def __init__(self, n: int):
        from engine.core.types import Chunk

        self.chunks = [
            Chunk(f"c{i}", f"d{i}", 0, f"Person{i}", f"Person{i} was born in City{i}. " * 8) for i in range(n)
        ]
        self.done: set[str] = set()

    def pending_chunks(self):
        return [c for c in self.chunks if c.chunk_id not in self.done]

    def extraction_statuses(self):
        return {}

    def store_extraction(self, chunk_id, triplets, status):
        self.done.add(chunk_id)

    def mark_extraction_failed(self, chunk_id, error, model=""):
        raise RuntimeError(f"bench chunk {chunk_id} failed: {error}")


def reply(messages, body) -> str:
    i = re.search(r"Person(\d+) was born", messages[-1]["content"]).group(1)
    return json.dumps({"triples": [[f"Person{i}", "born in", f"City{i}"]]})


def serve(latency: float, ports, stop) -> None:
    """The loopback provider, in its own process: a real provider does not share our GIL."""
    from tests.loopback import LoopbackServer

    with LoopbackServer(latency=latency) as srv:
        srv.reply = reply
        ports.put(srv.port)
        stop.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--seconds", type=float, default=3.0, help="ideal run time per level")
    ap.add_argument("--levels", default="1,4,16")
    args = ap.parse_args()

    from engine.llm.litellm_client import LiteLLMClient
    from engine.reasoners.llm_reasoner import LLMReasoner
    from engine.triplets.extraction import run_extraction

    levels = [int(x) for x in args.levels.split(",")]
    rows = []
    ctx = multiprocessing.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=serve, args=(args.latency, ports, stop), daemon=True)
    server.start()
    try:
        base = f"http://127.0.0.1:{ports.get(timeout=60)}/v1"
        client = LiteLLMClient("openai/gpt-4o-mini", api_base=base, api_key="sk-bench-000000", timeout=30)
        reasoner = LLMReasoner(client)
        reasoner.extract("warm-up", "Person0 was born in City0.")  # litellm import and first-call setup
        for c in levels:
            n = max(c, round(args.seconds * c / args.latency))
            corpus = MemoryCorpus(n)
            t0 = time.perf_counter()
            summary = run_extraction(corpus, reasoner, concurrency=c)
            elapsed = time.perf_counter() - t0
            assert summary.chunks_done == n, summary
            rate = n / elapsed
            ideal = c / args.latency
            rows.append((c, n, elapsed, rate, ideal, rate / ideal))
    finally:
        stop.set()
        server.join(timeout=10)

    print(f"extraction throughput, loopback latency {args.latency * 1000:.0f} ms per call")
    print(f"{'concurrency':>11} {'chunks':>7} {'seconds':>8} {'chunks/s':>9} {'ideal/s':>8} {'ratio':>6}")
    for c, n, elapsed, rate, ideal, ratio in rows:
        print(f"{c:>11} {n:>7} {elapsed:>8.2f} {rate:>9.2f} {ideal:>8.2f} {ratio:>6.2f}")
    worst = rows[-1][-1]
    print(f"target: ratio >= 0.80 at concurrency {rows[-1][0]}: {'met' if worst >= 0.8 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
