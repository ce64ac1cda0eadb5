"""Run every benchmark under bench/ and write docs/benchmarks.md with their tables.

    .venv/bin/python bench/run_all.py [--only index_bench,t2rag_bench] [--budget 3000] [--out docs/benchmarks.md]

Each script runs as its own process with this same Python (so one cannot skew another through
caches or threads), its printed table is captured, and the report gets a description of the
machine (CPU, cores, RAM, load, library versions) because every figure is only meaningful next to
it. A missing script, a failing one or one that overruns its time share is noted in the report
and the others still run. The whole run stays under `--budget` seconds (50 minutes by default:
a fresh clone builds every bench corpus first; a rerun reuses them under bench/out): each script
may use the time left minus the expected time of the scripts after it (EXPECT), and is stopped
when it overruns.

Sections written by hand below `KEEP_MARKER` in the report (longer studies that reuse these
scripts) are kept as they are; only the part above the marker is rewritten.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: In reading order: the store, what a person waits for (cold ask, app first question in-process and
#: in a browser, the offline answer step, eval questions/s, concurrent visitors), extraction, each
#: method, then answer/retrieval quality.
SCRIPTS = (
    "index_bench",
    "wait_bench",
    "first_question",
    "answer_step_bench",
    "question_encodes",
    "eval_bench",
    "concurrency_bench",
    "app_concurrency",
    "extraction_bench",
    "t2rag_bench",
    "kg2rag_bench",
    "retrieval_quality",
)
#: Arguments that keep a script within its share of the run (its defaults are the long study).
ARGS = {
    "wait_bench": ["--rounds", "2", "--questions", "10"],
    "first_question": ["--rounds", "1"],
    # the 30-question sample and MuSiQue's first 5 questions (a small corpus: it is built in the run)
    "answer_step_bench": ["--sets", "musique-kag", "--limit", "5", "--questions", "5"],
    "eval_bench": ["--questions", "30", "--floor", "10"],
    "app_concurrency": ["--n", "3", "--repeats", "3"],
    "question_encodes": ["--repeats", "3"],
    # the MuSiQue set with its real triplets (skipped, naming the files, in a clone without ../shared:
    # building the HotpotQA set's 1,000 paragraphs alone overran its share)
    "retrieval_quality": ["--datasets", "musique", "--questions", "30"],
    "index_bench": ["--docs", "150", "--repeats", "2"],
    "t2rag_bench": ["--questions", "5", "--repeat", "2"],
    "kg2rag_bench": ["--questions", "20", "--repeats", "2"],
    "verdict_noise": ["--repeats", "6"],
    "hipporag2_bench": ["--samples", "hotpotqa-sample"],
    # the 30-question HotpotQA sample and the invented fixture (MuSiQue's corpus build is the long study)
    "offline_t2rag": ["--datasets", "fixture", "hotpotqa"],
    # 1k and 10k chunks (100k is the long study: docs/scaling.md)
    "scale_bench": ["--sizes", "1000,10000", "--questions", "3"],
    "t2rag_gap": ["--datasets", "hotpotqa", "--questions", "20"],
}
#: Seconds each script took with its ARGS in a fresh clone on this 2-core machine, its bench corpora
#: built from scratch (later runs reuse bench/out and are faster), rounded up. A script's time share keeps
#: these in reserve for the scripts after it; a script not listed is expected to take DEFAULT_EXPECT.
EXPECT = {
    "index_bench": 210,
    "wait_bench": 140,
    "first_question": 30,
    "answer_step_bench": 150,
    "eval_bench": 60,
    "concurrency_bench": 170,
    "app_concurrency": 150,
    "extraction_bench": 30,
    "t2rag_bench": 270,
    "kg2rag_bench": 210,
    "retrieval_quality": 60,
    "batch_cost": 15,
    "first_page": 90,
    "hipporag2_bench": 150,
    "metrics_official": 240,
    "offline_t2rag": 120,
    "scale_bench": 60,
    "t2rag_gap": 300,
    "question_encodes": 90,
    "hipporag2_wait": 90,
    "verdict_noise": 90,
}
DEFAULT_EXPECT = 60.0
#: The whole run's default time: the sum of EXPECT with a margin (about 50 minutes from a fresh
#: clone, where every bench corpus is built first; a rerun reuses them).
BUDGET = 3000.0
#: The report's hand-written tail starts at this line; a rerun keeps it.
KEEP_MARKER = "<!-- bench/run_all.py writes everything above this line; what follows is kept as written -->"
#: The least time a script is given, however little is left for it in the plan.
MIN_SHARE = 90.0


_MAIN = re.compile(r"""__name__\s*==\s*["']__main__["']""")


def benchmark_scripts(bench_dir: Path) -> list[str]:
    """The scripts under `bench_dir` a run starts: those with a `__main__` entry. A module other
    scripts import (`long_documents` for retrieval_quality, `real_recall` for scale_bench) measures
    nothing on its own."""
    return sorted(
        p.stem
        for p in bench_dir.glob("*.py")
        if p.stem != "run_all" and not p.stem.startswith("_") and _MAIN.search(p.read_text("utf-8"))
    )


def time_share(name: str, left: float, later: list[str]) -> float:
    """Seconds `name` may run: what is left minus the expected time of every script after it (so an
    early slow one cannot starve them), at least its own expected time and MIN_SHARE, at most `left`."""
    reserve = sum(EXPECT.get(n, DEFAULT_EXPECT) for n in later)
    return min(left, max(MIN_SHARE, EXPECT.get(name, DEFAULT_EXPECT), left - reserve))


@dataclass
class BenchRun:
    name: str
    status: str  # ok | failed (exit N) | missing | timed out | skipped (no time left)
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GB"
    except (OSError, ValueError):
        pass
    return "unknown"


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_description() -> list[tuple[str, str]]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return [
        ("date", dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("commit", _git_commit()),
        ("CPU", _cpu_model()),
        ("cores", f"{usable} usable of {os.cpu_count()}"),
        ("RAM", _ram_gb()),
        ("load average (1/5/15 min) at start", load),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("python", platform.python_version()),
        ("torch", _version("torch")),
        ("faiss", _version("faiss-cpu")),
        ("sentence-transformers", _version("sentence-transformers")),
        ("litellm", _version("litellm")),
    ]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_one(path: Path, timeout: float) -> BenchRun:
    name = path.stem
    if not path.is_file():
        return BenchRun(name, "missing")
    t0 = time.perf_counter()
    env = dict(
        os.environ,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    # its own process group: a script that overruns is stopped with every process it started (a
    # Streamlit server, a child build), so nothing it left behind loads the machine for the next one
    proc = subprocess.Popen(
        [sys.executable, str(path), *ARGS.get(name, [])],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return BenchRun(name, f"timed out after {timeout:.0f} s", time.perf_counter() - t0, out or "", err or "")
    finally:
        _kill_group(proc)  # anything a finished script left running
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    status = "ok" if p.returncode == 0 else f"failed (exit {p.returncode})"
    return BenchRun(name, status, time.perf_counter() - t0, p.stdout, p.stderr)


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def render(runs: list[BenchRun], machine: list[tuple[str, str]], total: float) -> str:
    out = [
        "# Benchmarks",
        "",
        "Written by `bench/run_all.py` (`make bench`); every script runs in its own process and prints "
        "its own table, with ratios against a baseline measured in the same run. Figures depend on the "
        "machine below; the machine may have been shared with other work.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
    ]
    out += [f"| {k} | {v} |" for k, v in machine]
    out += ["", f"Total run time: {total:.0f} s.", "", "| benchmark | status | seconds |", "|---|---|---|"]
    out += [f"| `{r.name}` | {r.status} | {r.seconds:.1f} |" for r in runs]
    for r in runs:
        out += ["", f"## {r.name}", ""]
        if r.status == "missing":
            out.append(f"`bench/{r.name}.py` does not exist in this checkout; nothing was measured.")
            continue
        if r.status.startswith("skipped"):
            out.append("Not run: the time budget was used up by the scripts before it.")
            continue
        out.append(
            f"`python bench/{' '.join([r.name + '.py', *ARGS.get(r.name, [])])}`: {r.status}, {r.seconds:.1f} s."
        )
        if r.stdout.strip():
            out += ["", "```", r.stdout.rstrip(), "```"]
        if r.status != "ok" and r.stderr.strip():
            out += ["", "Last lines of stderr:", "", "```", _tail(r.stderr), "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated script names (default: all)")
    ap.add_argument("--budget", type=float, default=BUDGET, help=f"seconds for the whole run (default {BUDGET:.0f})")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument("--bench-dir", type=Path, default=ROOT / "bench")
    args = ap.parse_args(argv)

    names = list(SCRIPTS)
    # any other benchmark someone added later runs too, after the known ones
    names += [n for n in benchmark_scripts(args.bench_dir) if n not in names]
    if args.only:
        wanted = [n.strip().removesuffix(".py") for n in args.only.split(",") if n.strip()]
        names = wanted
    machine = machine_description()
    start = time.monotonic()
    runs: list[BenchRun] = []
    for i, name in enumerate(names):
        left = args.budget - (time.monotonic() - start)
        path = args.bench_dir / f"{name}.py"
        if not path.is_file():
            runs.append(BenchRun(name, "missing"))
        elif left < min(10.0, MIN_SHARE):
            runs.append(BenchRun(name, "skipped (no time left)"))
        else:
            later = [n for n in names[i + 1 :] if (args.bench_dir / f"{n}.py").is_file()]
            share = time_share(name, left, later)
            print(f"[run_all] {name} (up to {share:.0f} s)", file=sys.stderr, flush=True)
            runs.append(run_one(path, share))
        r = runs[-1]
        print(f"[run_all] {name}: {r.status} {r.seconds:.1f} s", file=sys.stderr, flush=True)
        if r.stdout.strip():
            print(r.stdout.rstrip(), flush=True)
    total = time.monotonic() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
    kept = old[old.index(KEEP_MARKER) :] if KEEP_MARKER in old else ""
    args.out.write_text(render(runs, machine, total) + ("\n" + kept if kept else ""), encoding="utf-8")
    print(f"[run_all] wrote {args.out} in {total:.0f} s", file=sys.stderr)
    # a missing script is a note, not a failure; a failing or overrunning one fails the run
    return 0 if all(r.status in ("ok", "missing") for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
