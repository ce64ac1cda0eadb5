"""How much a method's wall time moves between two runs of the same question: the noise Compare's
verdict must stay above before it says one method was "faster" (engine/verdict/text.py,
FASTER_SECONDS and FASTER_SHARE).

Runs T2RAG and KG2RAG (offline reasoner, their default presets) on the landing showcase questions
of the hotpotqa sample, `--repeats` times each, interleaved, in this one process, and prints per
method and question the median time and the spread (slowest minus fastest run), then the largest
spread and the share of the median it is. With `--load N` it also starts N CPU-bound processes
(a busy machine) and measures again; they are ended by their process ids.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/verdict_noise.py [--repeats 8] [--load 2]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.shell.landing import SHOWCASE  # noqa: E402
from engine.core.config import AppSettings  # noqa: E402
from engine.session import Session  # noqa: E402

METHODS = ("t2rag", "kg2rag")


def measure(corpus, repeats: int) -> dict[tuple[str, str], list[float]]:
    """(method, qid) -> the wall time of each run, runs interleaved so drift hits every method."""
    session = Session.for_cli(AppSettings.from_env(), model="")
    reasoner = session.reasoner(corpus)
    questions = {q.qid: q for q in corpus.questions()}
    picked = [questions[s.qid] for s in SHOWCASE if s.qid in questions]
    times: dict[tuple[str, str], list[float]] = {}
    for q in picked:  # one unmeasured run each: imports and first-use caches are not noise
        for m in METHODS:
            session.answer(m, q.question, corpus, reasoner=reasoner)
    for _ in range(repeats):
        for q in picked:
            for m in METHODS:
                r = session.answer(m, q.question, corpus, reasoner=reasoner)
                times.setdefault((m, q.qid), []).append(r.usage.total_time or r.usage.engine_time + r.usage.llm_time)
    return times


def report(label: str, times: dict[tuple[str, str], list[float]]) -> float:
    print(f"\n{label}")
    print(f"{'method':8} {'question':26} {'median s':>9} {'spread s':>9} {'spread/median':>14}")
    worst = 0.0
    for (m, qid), ts in times.items():
        med, spread = statistics.median(ts), max(ts) - min(ts)
        worst = max(worst, spread)
        print(f"{m:8} {qid:26} {med:9.3f} {spread:9.3f} {spread / med if med else 0:14.0%}")
    print(f"largest run-to-run spread: {worst:.3f} s")
    return worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--load", type=int, default=0, help="also measure with this many CPU-bound processes running")
    args = ap.parse_args()
    from engine.session.samples import ensure_sample_corpora
    from engine.store import open_workspace

    ws = open_workspace(AppSettings.from_env())
    for line in ensure_sample_corpora(ws, names=["hotpotqa-sample"]):  # built once (about a minute)
        print(line)
    corpus = ws.open("hotpotqa-sample")
    idle = report("as the machine is", measure(corpus, args.repeats))
    if args.load:
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
        try:
            time.sleep(1)
            loaded = report(f"with {args.load} CPU-bound processes", measure(corpus, args.repeats))
        finally:
            for p in busy:
                p.terminate()
                p.wait()
        print(f"\nspread idle {idle:.3f} s, loaded {loaded:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
