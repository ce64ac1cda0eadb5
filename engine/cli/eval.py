"""`eval CORPUS --methods t2rag,kg2rag,standard --out DIR`: score methods on a corpus's questions.

    python -m engine eval hotpot --methods t2rag,kg2rag,standard --questions 50 --out runs/hotpot
    python -m engine eval hotpot --methods t2rag,kg2rag --drop-triplets 0.05 --out runs/drop5
    python -m engine eval hotpot --methods t2rag,none --shuffle --out runs/shuffled

A rerun with the same `--out` continues where the last one stopped. Probes (`--drop-triplets`,
`--shuffle`) run on a copy of the corpus saved beside it (`<corpus>-drop5-s0`,
`<corpus>-shuffled-s0`); a copy made by an earlier run with the same seed is reused, so a resumed
probe run scores against the same perturbed corpus.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.core.config import AppSettings
from engine.core.terminal import shown


def _read_ids(path: str) -> list[str]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        if isinstance(data, list):
            return [str(x) for x in data]
    except json.JSONDecodeError:
        pass
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _probe_corpus(ws, corpus, args):
    """The corpus to evaluate: the original, or a (reused) perturbed copy."""
    from engine.core.progress import TerminalProgress
    from engine.eval.probes import drop_copy_name, drop_triplets, shuffle_copy_name, shuffle_entities

    if args.shuffle:
        name = shuffle_copy_name(corpus.name, args.seed)
        if ws.exists(name):
            print(f"reusing shuffled copy {name!r}", file=sys.stderr)
            corpus = ws.open(name)
        else:
            bar = TerminalProgress()
            corpus, report = shuffle_entities(ws, corpus, seed=args.seed, name=name, on_progress=bar)
            bar.close()
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.entities.items()))
            print(
                f"shuffled copy {name!r}: renamed {shown(kinds)}; {len(report.frozen)} entities kept to keep answers "
                f"findable; {len(report.inconsistent)} questions inconsistent",
                file=sys.stderr,
            )
    if args.drop_triplets:
        name = drop_copy_name(corpus.name, args.drop_triplets, args.seed)
        if ws.exists(name):
            print(f"reusing triplet-drop copy {name!r}", file=sys.stderr)
            corpus = ws.open(name)
        else:
            corpus, rep = drop_triplets(ws, corpus, args.drop_triplets, seed=args.seed, name=name)
            print(f"copy {name!r}: dropped {rep.triplets_dropped} of {rep.triplets_before} triplets", file=sys.stderr)
    return corpus


def eval_settings(methods: list[str], args) -> dict:
    """Each method's settings: the preset, the flags, then each `--set` applied to the methods that
    have that setting (a name no method has is an error)."""
    import dataclasses

    from engine.cli import UserError
    from engine.cli.ask import method_settings, parse_sets, refuse_unrunnable

    overrides = {"k": args.k, "rounds": args.rounds, "hops": args.hops, "reranker": args.reranker}
    sets = parse_sets(args.set or [])
    out = {}
    for m in methods:
        base = method_settings(m, overrides, args.preset)
        have = {f.name for f in dataclasses.fields(base)}
        mine = [f"{k}={v}" for k, v in sets.items() if k in have]
        out[m] = method_settings(m, overrides, args.preset, mine)
        refuse_unrunnable(m, out[m])
    unknown = [k for k in sets if not any(k in {f.name for f in dataclasses.fields(s)} for s in out.values())]
    if unknown:
        raise UserError(f"no method of {', '.join(methods)} has the setting(s) {', '.join(unknown)}")
    return out


def cmd_eval(args) -> int:
    from engine.cli import UserError
    from engine.cli.ask import preset_line
    from engine.core.progress import TerminalProgress
    from engine.eval.harness import run_eval, select_questions
    from engine.methods import METHODS
    from engine.session import Session

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown:
        raise UserError(f"unknown method(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(METHODS)}")
    if args.drop_triplets is not None and not 0.0 < args.drop_triplets < 1.0:
        raise UserError(f"--drop-triplets is a fraction between 0 and 1 (0.05 = 5%), got {args.drop_triplets}")
    questions = _read_ids(args.ids) if args.ids else args.questions

    app = AppSettings.from_env()
    from engine.store import open_workspace

    ws = open_workspace(app)
    corpus = _probe_corpus(ws, ws.open(args.corpus), args)
    session = Session.for_cli(app, args.model, args.api_base)
    reasoner = session.reasoner(corpus)
    settings_by_method: dict | None = eval_settings(methods, args)
    for m, s in (settings_by_method or {}).items():
        print(f"{m}: {shown(preset_line(m, s))}", file=sys.stderr)
    if args.preset is None and not args.set and all(v is None for v in (args.k, args.rounds, args.hops, args.reranker)):
        # the defaults, recorded as before (a folder made before presets existed still resumes)
        settings_by_method = None
    # the caps, as the app's Evaluate page books them: every question of every method, before any runs
    session.begin(len(select_questions(corpus, questions)) * len(methods))
    bar = TerminalProgress()
    summary = None
    try:
        summary = run_eval(
            corpus,
            methods,
            reasoner,
            questions=questions,
            out_dir=Path(args.out),
            settings_by_method=settings_by_method,
            on_progress=bar,
            unit=args.unit,
            k=args.recall_k,
            concurrency=args.concurrency,
            evidence_share=args.evidence_share,
        )
    finally:
        bar.close()
        session.settle(*_billed(summary))
    print("\n".join(shown(line) for line in summary.markdown().split("\n")))
    print(f"per-question results and traces in {shown(args.out)}", file=sys.stderr)
    if summary.stopped:
        print(f"stopped early: {shown(summary.stopped)}", file=sys.stderr)
        return 1
    return 0


def _billed(summary) -> tuple[int, float | None]:
    """(tokens, dollars) an evaluation's summary counts, for its budget booking (0 when it stopped
    with no summary: the booking's estimate stands)."""
    if summary is None:
        return 0, 0.0
    tokens = sum(round((m.prompt_tokens_per_q + m.completion_tokens_per_q) * m.n_questions) for m in summary.methods)
    costs = [m.cost_total for m in summary.methods]
    return tokens, None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def register(sub: argparse._SubParsersAction) -> None:
    from engine.cli.ask import add_preset_flags

    p = sub.add_parser("eval", help="score methods on a corpus's questions (EM/F1, retrieval, cost); resumable")
    p.add_argument("corpus")
    p.add_argument(
        "--methods",
        default="t2rag,kg2rag,standard",
        help="comma-separated method names (default: t2rag,kg2rag,standard)",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument("--questions", type=int, default=None, metavar="N", help="only the first N questions")
    which.add_argument("--ids", default=None, metavar="FILE", help="question ids, one per line (or a JSON list)")
    p.add_argument("--model", default=None, help="litellm model string; empty/unset = offline reasoner")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint for --model")
    p.add_argument("--out", required=True, metavar="DIR", help="results folder; a rerun resumes from it")
    p.add_argument(
        "--drop-triplets",
        type=float,
        default=None,
        metavar="FRACTION",
        help="evaluate on a copy missing this random share of triplets (e.g. 0.05)",
    )
    p.add_argument(
        "--shuffle",
        action="store_true",
        help="evaluate on a copy with every entity consistently renamed (Shuffle-HotpotQA)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        metavar="N",
        help="questions answered at once (useful with a remote model; default 1)",
    )
    p.add_argument(
        "--k",
        type=int,
        default=None,
        help="chunks per round (T2RAG) / seeds (KG2RAG) / top-k (baselines); default: each paper's",
    )
    p.add_argument("--rounds", type=int, default=None, help="T2RAG round cap")
    p.add_argument("--hops", type=int, default=None, help="KG2RAG expansion hops")
    p.add_argument(
        "--reranker",
        default=None,
        help="KG2RAG trees and the rerank baselines: ce:/local/cross-encoder/path or litellm:<rerank model> "
        "(semantic-rerank needs one)",
    )
    add_preset_flags(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the probes (default 0)")
    _add_scoring_flags(p)
    p.set_defaults(func=cmd_eval)


def _add_scoring_flags(p: argparse.ArgumentParser) -> None:
    """How retrieval is scored: the unit, the k of recall@k, how gold given as text is located."""
    p.add_argument(
        "--unit",
        choices=("auto", "paragraph", "sentence"),
        default="auto",
        help="retrieval unit of the table (auto: sentence for sentence-chunked corpora)",
    )
    p.add_argument("--recall-k", type=int, default=5, metavar="K", help="k of recall@k, in evidence chunks")
    p.add_argument(
        "--evidence-share",
        type=float,
        default=0.8,
        metavar="S",
        help="gold evidence given as text whose words the corpus does not match exactly is located in the "
        "windows holding this share of its content words (default 0.8; 0 = exact text only)",
    )
