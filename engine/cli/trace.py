"""Commands over a saved trace (a `--trace-out` file or a run the app saved):

trace timeline TRACE.json              the run's steps and LLM calls on a time axis, as text
trace verdict RUN.json [--corpus NAME] [--json]   who did better on a saved comparison, and why
rerun TRACE.json --corpus NAME --set k=8 [--set rounds=2]   a what-if on the recorded replies
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.core.config import AppSettings
from engine.core.terminal import shown


def _results(path: str, method: str | None):
    from engine.cli import UserError
    from engine.runs import load_run

    p = Path(path)
    if not p.is_file():
        raise UserError(f"no trace file at {path}")
    run = load_run(p)
    results = [r for r in run.results if method in (None, r.method)]
    if not results:
        raise UserError(f"{path} holds {', '.join(r.method for r in run.results)}, not {method}")
    return results


def cmd_timeline(args) -> int:
    from engine.runs.timeline import timeline, timeline_table

    for result in _results(args.trace, args.method):
        spans = timeline(result)
        print(f"{shown(result.method)}: {shown(result.question)}")
        for line in timeline_table(spans):
            print(f"  {shown(line)}")
    return 0


def cmd_verdict(args) -> int:
    import json

    from engine.cli import UserError
    from engine.runs import load_run
    from engine.verdict import GoldSpec, chunk_ids_of, compare_verdict, gold_spec, verdict_to_dict

    p = Path(args.trace)
    if not p.is_file():
        raise UserError(f"no trace file at {args.trace}")
    run = load_run(p)
    if len(run.results) < 2:
        raise UserError(f"{args.trace} holds one result ({run.results[0].method}); a verdict compares two or more")
    gold = GoldSpec(tuple(run.gold))
    if args.corpus:  # the corpus question's gold paragraphs, when the run names one
        from engine.store import open_workspace

        corpus = open_workspace(AppSettings.from_env()).open(args.corpus)
        question = next((q for q in corpus.questions() if q.qid == run.qid), None)
        if question is not None:
            gold = gold_spec(corpus, question, chunk_ids_of(run.results))
    v = compare_verdict(run.results, gold)
    if args.json:
        print(json.dumps(verdict_to_dict(v), indent=1))  # ASCII: no raw control character
        return 0
    print(shown(v.headline))
    for m in v.methods:
        print(f"  {shown(m.sentence)}")
    return 0


def _changes(method: str, preset: str | None, pairs: list[str]) -> dict:
    """The preset's settings (when one is named) with each `--set` on top, as what-if changes."""
    from engine.cli.ask import parse_sets
    from engine.runs.whatif import preset_changes

    return {**(preset_changes(method, preset) if preset else {}), **parse_sets(pairs)}


def cmd_rerun(args) -> int:
    from engine.cli import UserError
    from engine.methods import save_result
    from engine.session import Session
    from engine.store import open_workspace

    results = _results(args.trace, args.method)
    if len(results) > 1:
        raise UserError(f"{args.trace} holds several methods: pick one with --method")
    app = AppSettings.from_env()
    corpus = open_workspace(app).open(args.corpus)
    session = Session.for_cli(app, args.model, args.api_base)

    def on_step(label: str, payload) -> None:
        if not args.quiet:
            print(f"  .. {shown(label)}", file=sys.stderr)

    changes = _changes(results[0].method, args.preset, args.set or [])
    new, diff = session.rerun(results[0], corpus, changes, on_step=on_step)
    if args.trace_out:
        save_result(new, Path(args.trace_out))
    print(f"answer: {shown(new.answer)}")
    for line in diff.lines():
        print(f"  {shown(line)}")
    if args.trace_out:
        print(f"trace written to {shown(args.trace_out)}")
    return 1 if new.error else 0


def register(sub: argparse._SubParsersAction) -> None:
    from engine.cli.ask import add_preset_flags

    p = sub.add_parser("trace", help="look into a saved trace file")
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION")
    tsub.required = True
    t = tsub.add_parser("timeline", help="the run's steps and LLM calls on a time axis, with tokens and cost")
    t.add_argument("trace", help="a trace JSON (ask --trace-out, or a run the app saved)")
    t.add_argument("--method", default=None, help="only this method of a comparison")
    t.set_defaults(func=cmd_timeline)

    v = tsub.add_parser("verdict", help="who did better on a saved comparison, and why (the Compare page's strip)")
    v.add_argument("trace", help="a comparison the app saved (or exported as JSON)")
    v.add_argument("--corpus", default=None, help="the corpus of the run: also checks its gold paragraphs")
    v.add_argument("--json", action="store_true", help="the verdict as JSON")
    v.set_defaults(func=cmd_verdict)

    r = sub.add_parser(
        "rerun",
        help="re-run a saved trace with changed settings; unchanged prompts are answered from the trace",
    )
    r.add_argument("trace", help="a trace JSON (ask --trace-out, or a run the app saved)")
    r.add_argument("--corpus", required=True, help="the corpus the run was made on")
    add_preset_flags(r)
    r.add_argument("--method", default=None, help="the method to re-run when the file is a comparison")
    r.add_argument("--model", default=None, help="model for prompts that changed; unset = environment / offline")
    r.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint for --model")
    r.add_argument("--trace-out", default=None, metavar="FILE", help="save the re-run's trace as JSON")
    r.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")
    r.set_defaults(func=cmd_rerun)
