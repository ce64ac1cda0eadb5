"""An offline eval of four methods, timed (issue 28: 500 questions x 4 methods <= 5 minutes).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/eval_bench.py [--questions 500]
        [--workspace DIR --corpus NAME] [--methods semantic,hybrid,t2rag,kg2rag] [--floor 10] [--profile FILE]

`run_eval` (what `python -m engine eval` runs, with the CLI's offline reasoner) over the corpus's
first `--questions` questions (all it has when fewer) x the methods, into a fresh results folder;
printed: wall time, questions/s and answers/s, and the time for 500 questions (extrapolated when
the corpus has fewer). Its floor, measured before it in the same process: the first `--floor`
questions answered by each method's `answer` in a plain loop (retrieval + the offline answer
step, nothing else: no scoring, traces, probes or result files); the rule-triplet memo is
cleared between the two, so both start cold. Ratio = eval time per answer / floor time per answer.

Default corpus: the bundled 30-question HotpotQA sample (built into bench/out/workspace, as
answer_step_bench.py does; runs from a fresh clone). The 500-question figure is from a corpus of
the shared sets, built with the CLI (docs/benchmarks.md gives the commands), passed by
`--workspace` and `--corpus`. `--profile FILE` writes a cProfile of the eval part.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_WS = ROOT / "bench" / "out" / "workspace"
METHODS = "semantic,hybrid,t2rag,kg2rag"


def open_corpus(root: Path, name: str | None):
    from engine.core.config import AppSettings
    from engine.session.samples import build_sample
    from engine.store import open_workspace

    ws = open_workspace(AppSettings(workspace=root))
    if name is None:
        name = "hotpotqa-sample"
        if not ws.exists(name) or ws.open(name).counts().pending:
            print("building the bundled sample corpus (offline triplets)...", file=sys.stderr, flush=True)
            build_sample(ws, name)
    if not ws.exists(name):
        sys.exit(f"no corpus {name!r} in {root}")
    return ws.open(name)


def floor(corpus, methods: list[str], reasoner, questions) -> float:
    """Seconds per answer of the bare loop (each method's `answer`, nothing around it)."""
    from engine.methods import build_method

    built = [build_method(m, reasoner) for m in methods]
    t0 = time.perf_counter()
    for q in questions:
        for method in built:
            method.answer(q.question, corpus)
    return (time.perf_counter() - t0) / max(1, len(questions) * len(methods))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--workspace", type=Path, default=DEFAULT_WS)
    ap.add_argument("--corpus", default=None, help="default: the bundled HotpotQA sample")
    ap.add_argument("--methods", default=METHODS)
    ap.add_argument("--floor", type=int, default=10, metavar="N", help="questions of the bare-loop floor")
    ap.add_argument("--profile", type=Path, default=None, help="write a cProfile of the eval to this file")
    args = ap.parse_args()

    from engine.core.config import AppSettings
    from engine.eval.harness import run_eval
    from engine.reasoners.offline import rules
    from engine.session import Session

    methods = [m for m in args.methods.split(",") if m]
    corpus = open_corpus(args.workspace, args.corpus)
    questions = corpus.questions()[: args.questions]
    n = len(questions)
    reasoner = Session.for_cli(AppSettings(workspace=args.workspace), "", None).reasoner(corpus)
    floor(corpus, methods, reasoner, questions[:1])  # the model's first pass, lazy imports: out of both
    rules._extract_memo.cache_clear()
    per_answer_floor = floor(corpus, methods, reasoner, questions[: args.floor])
    rules._extract_memo.cache_clear()
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        summary = run_eval(corpus, methods, reasoner, questions=[q.qid for q in questions], out_dir=out)
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - t0
    if profiler:
        profiler.dump_stats(str(args.profile))
    answers = n * len(methods)
    per_500 = wall / n * 500
    print(
        f"corpus {corpus.name} ({corpus.counts().chunks} chunks), {n} questions x {len(methods)} methods "
        f"({', '.join(methods)}), offline reasoner\n"
    )
    print("| figure | measured | floor (bare answer loop) | ratio | target |\n|---|---|---|---|---|")
    print(
        f"| eval wall time, {n} questions x {len(methods)} methods | {wall:.1f} s | "
        f"{per_answer_floor * answers:.1f} s (at the floor's rate) | {wall / (per_answer_floor * answers):.2f}x | - |"
    )
    print(
        f"| questions/s (all {len(methods)} methods each) | {n / wall:.2f} | "
        f"{1 / (per_answer_floor * len(methods)):.2f} | {wall / answers / per_answer_floor:.2f}x | - |"
    )
    print(f"| answers/s | {answers / wall:.2f} | {1 / per_answer_floor:.2f} | - | - |")
    print(
        f"| 500 questions x {len(methods)} methods | {per_500 / 60:.1f} min"
        f"{'' if n >= 500 else ' (extrapolated from ' + str(n) + ')'} | "
        f"{per_answer_floor * 500 * len(methods) / 60:.1f} min "
        f"| - | <= 5 min |"
    )
    print()
    print(summary.markdown())


if __name__ == "__main__":
    main()
