"""N visitors asking the app at once against one alone, at the app server (issue 30).

    .venv/bin/python bench/app_concurrency.py [--n 3,8] [--pages ask,kg2rag] [--repeats 5] [--cpu]

Issue 30 measured three app sessions finishing at 9.4, 13.0 and 17.5 s against 6.7 s alone. Here the
app is started as `make run` starts it (scripts/serve.py, no API key: the offline reasoner) on the
bundled HotpotQA sample corpus, and each visitor is a Streamlit session of its own, opened the way a
browser opens one (a websocket to /_stcore/stream) on a question link (`/ask?corpus=..&question=..`,
which runs the question at once). A visit lasts from the connection until the server reports the
script run finished with the answer on the page. The visitors' browsers are not on this machine (a
visitor's browser renders on the visitor's computer), so what is timed is the server's own work.

For each N, the same N questions are asked one at a time (their mean is 'alone') and by N visitors
at once (the time until the last of them has its answer), in alternating order between rounds (the
second finds per-question caches warm); ratio = at once / alone, medians over `--repeats` rounds
with different questions. Target (issue 30): N = 3 within 1.5x of alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests._app_helpers import StreamlitServer  # noqa: E402
from tests._visitor import visit as _visit  # noqa: E402

WS = ROOT / "bench" / "out" / "app_concurrency_ws"
CORPUS = "hotpotqa-sample"
TARGET = 1.5


def ensure_sample() -> None:
    env = dict(os.environ, TRIPLET_LENS_WORKSPACE=str(WS))
    subprocess.run([sys.executable, "-m", "engine", "sample", "ensure"], cwd=ROOT, env=env, check=True)


def forget_replies() -> None:
    """Empty the workspace's LLM reply cache, so a question asked again calls the provider again."""
    path = WS / "llm_cache.sqlite"
    if path.exists():
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as conn, conn:
            conn.execute("DELETE FROM responses")


def visit(port: int, page: str, question: str, timeout: float = 300) -> float:
    """Seconds from opening a session on the question link until its run finished with an answer."""
    return _visit(port, page, {"corpus": CORPUS, "question": question}, timeout)


def at_once(port: int, page: str, questions: list[str]) -> float:
    """Seconds until the last of len(questions) visitors, arriving together, has its answer."""
    errors: list[BaseException] = []
    go = threading.Barrier(len(questions) + 1)

    def one(q: str) -> None:
        go.wait()
        try:
            visit(port, page, q)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(q,)) for q in questions]
    for t in threads:
        t.start()
    go.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="3,8")
    ap.add_argument("--pages", default="ask,kg2rag", help="ask = T2RAG, kg2rag = KG2RAG")
    ap.add_argument("--repeats", type=int, default=6, help="rounds; even, so each order runs as often")
    ap.add_argument(
        "--llm-latency",
        type=float,
        default=0.0,
        help="seconds a stand-in provider (tests/loopback.py) takes per call; 0 = no key, offline",
    )
    ap.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the app server only (e.g. OPENBLAS_NUM_THREADS=1)",
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="also the server's CPU ms per visit (its process and children, from /proc; Linux)",
    )
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    ensure_sample()
    records = json.loads((ROOT / "sample_corpora" / "hotpotqa_30.json").read_text(encoding="utf-8"))
    questions = [r["question"] for r in records]
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        env = dict(x.split("=", 1) for x in args.server_env)
        if args.llm_latency > 0:  # the operator's configured endpoint, as a keyed deployment runs
            from tests.loopback import LoopbackServer

            llm = stack.enter_context(LoopbackServer(latency=args.llm_latency))
            env |= {
                "TRIPLET_LENS_MODEL": "openai/stand-in",
                "TRIPLET_LENS_API_BASE": llm.base_url,
                "TRIPLET_LENS_API_BASES": llm.base_url,
                "OPENAI_API_KEY": "sk-bench",
            }
        srv = StreamlitServer(WS, Path(tmp) / "streamlit.log", extra_env=env, launcher=True)
        stack.callback(srv.stop)
        srv.wait_healthy(300)
        report(srv.port, args, ns, questions, srv.proc.pid)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of the server process and its live children (worker processes)."""
    total = 0
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for p in [pid, *map(int, kids)]:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def report(port: int, args, ns: list[int], questions: list[str], pid: int) -> None:
    reasoner = f"a provider taking {args.llm_latency:g} s a call" if args.llm_latency else "offline reasoner"
    extra = "".join(f", {x}" for x in args.server_env)
    print(
        f"app server (scripts/serve.py, {reasoner}{extra}) on {CORPUS}; visitors as websocket sessions "
        f"on question links; medians of {args.repeats} rounds\n"
    )
    cpu_cols = " | CPU ms/visit alone | at once" if args.cpu else ""
    print("| page | " + " | ".join(f"N={n} alone (s) | N={n} at once (s) | ratio{cpu_cols}" for n in ns) + " |")
    print("|---|" + ("---|---|---|" + ("---|---|" if args.cpu else "")) * len(ns))
    for page in args.pages.split(","):
        for q in questions[:2]:  # warm: the page's modules imported, the method's indexes read
            visit(port, page, q)
        cells = []
        for n in ns:
            rows, cpu = [], {"alone": 0.0, "together": 0.0}
            for rep in range(args.repeats):
                start = (rep * 7 + n) % (len(questions) - n)
                qs = questions[start : start + n]
                # whichever runs second finds the server's per-question caches warm (the graph
                # frame, relation phrase vectors: a repeat of a question is ~15% faster), so the
                # order alternates between rounds and each side gets that help as often
                first, second = ("alone", "together") if rep % 2 == 0 else ("together", "alone")
                got = {}
                for side in (first, second):
                    forget_replies()
                    c0 = cpu_seconds(pid) if args.cpu else 0.0
                    if side == "alone":
                        got[side] = statistics.mean(visit(port, page, q) for q in qs)
                    else:
                        got[side] = at_once(port, page, qs)
                    if args.cpu:
                        cpu[side] += (cpu_seconds(pid) - c0) / n / args.repeats
                rows.append((got["alone"], got["together"]))
            alone, together = (statistics.median(r[i] for r in rows) for i in (0, 1))
            ratio = statistics.median(r[1] / r[0] for r in rows)
            cells.append(f"{alone:.2f} | {together:.2f} | {ratio:.2f}x")
            if args.cpu:
                cells[-1] += f" | {1000 * cpu['alone']:.0f} | {1000 * cpu['together']:.0f}"
        print(f"| {page} | " + " | ".join(cells) + " |", flush=True)
    print(f"\ntarget: N=3 within {TARGET}x of one alone")


if __name__ == "__main__":
    main()
