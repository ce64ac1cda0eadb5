"""`ask CORPUS "question" --method ...`: one question through one method, printed with its summary."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from engine.core.config import AppSettings
from engine.core.terminal import shown

#: CLI flag -> settings fields it sets; applied to whichever of them the method's settings have
#: (IRCoT calls its round cap `steps`)
_OVERRIDES = {"k": ("k", "qa_top_k"), "rounds": ("rounds", "steps"), "hops": ("hops",), "reranker": ("reranker",)}


#: Why `semantic-rerank` with no reranker is refused (the app does not offer it: registry `in_app`).
NO_RERANKER = (
    "semantic-rerank needs a reranker: without one it is the semantic baseline in another name; "
    "give --reranker ce:/path/to/cross-encoder or --reranker litellm:<rerank model>"
)


def refuse_unrunnable(name: str, settings) -> None:
    """A clear error for a method that would only imitate another: `semantic-rerank` with no reranker."""
    from engine.cli import UserError

    if name == "semantic-rerank" and not getattr(settings, "reranker", ""):
        raise UserError(NO_RERANKER)


def method_settings(name: str, overrides: dict, preset: str | None = None, sets: list[str] | None = None):
    """The method's settings: its `preset` (engine.methods.presets; default `tuned`), then the
    flags in `overrides` (`k`, `rounds`, ...) that it has, then each `--set NAME=VALUE` on top."""
    from engine.methods.presets import preset_settings
    from engine.runs.whatif import apply_changes

    settings = preset_settings(name, preset or "tuned")
    fields = {f.name for f in dataclasses.fields(settings)}
    changes = {
        field: v for k, v in overrides.items() if v is not None for field in _OVERRIDES.get(k, ()) if field in fields
    }
    settings = dataclasses.replace(settings, **changes)
    return apply_changes(name, settings, parse_sets(sets or [])) if sets else settings


def parse_sets(pairs: list[str]) -> dict[str, str]:
    """`["k=8", "seeds=dense"]` -> {"k": "8", "seeds": "dense"}; a clear error for anything else."""
    from engine.cli import UserError

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UserError(f"--set takes NAME=VALUE (e.g. --set k=8), got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def add_preset_flags(p: argparse.ArgumentParser) -> None:
    from engine.methods.presets import PRESETS

    p.add_argument(
        "--preset",
        choices=PRESETS,
        default=None,
        help="paper = the paper and its authors' code (with SPEC's named bug fixes); tuned = our measured "
        "defaults (the default)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="a setting on top of the preset, e.g. --set k=8 --set seeds=dense (repeatable)",
    )


def cmd_ask(args) -> int:
    from engine.core.limits import check_question
    from engine.methods import method_class, save_result
    from engine.session import Session

    check_question(args.question)  # a bad argument is named before any corpus opens (Session checks again)
    app = AppSettings.from_env()
    from engine.store import open_workspace

    ws = open_workspace(app)
    corpus = ws.open(args.corpus)
    session = Session.for_cli(app, args.model, args.api_base)
    settings = method_settings(
        args.method,
        {"k": args.k, "rounds": args.rounds, "hops": args.hops, "reranker": args.reranker},
        args.preset,
        args.set,
    )
    refuse_unrunnable(args.method, settings)

    def on_step(label: str, payload) -> None:
        if not args.quiet:
            print(f"  .. {shown(label)}", file=sys.stderr)

    # the question check, the deadline and the run's record: Session.answer, as in the app
    result = session.answer(args.method, args.question, corpus, settings=settings, on_step=on_step)
    if args.trace_out:
        save_result(result, Path(args.trace_out))
    if result.error:
        print(f"{args.method} could not answer: {shown(result.error)}", file=sys.stderr)
    print(f"answer: {shown(result.answer)}")
    print(f"method: {args.method}   reasoner: {shown(result.reasoner)}   stop: {shown(result.stop_reason or '-')}")
    print(shown(preset_line(args.method, settings)))
    if result.inputs is not None:  # what it was fed, beside its paper's
        from engine.methods.inputs import describe

        print(shown(describe(result.inputs, method_class(args.method).paper_inputs)))
    for line in method_class(args.method).summarize(result):
        print(f"  {shown(line)}")
    u = result.usage
    cost = "unknown" if u.cost is None else f"${u.cost:.5f}"
    print(
        f"usage: {u.calls} LLM calls ({u.cached_calls} cached), {u.prompt_tokens} prompt + "
        f"{u.completion_tokens} completion tokens needed ({u.billed_prompt_tokens} + {u.billed_completion_tokens} "
        f"billed), {cost}, engine {u.engine_time:.2f}s, LLM {u.llm_time:.2f}s"
    )
    if args.trace_out:
        print(f"trace written to {shown(args.trace_out)}")
    return 1 if result.error else 0


def preset_line(method: str, settings) -> str:
    """`preset: custom; departs from the paper: k=3 (paper: 10)`: the preset, then every setting
    that differs from the paper."""
    from engine.methods.presets import departures, preset_name

    changed = [f"{d.name}={d.value} (paper: {d.paper})" for d in departures(method, settings, fixes=False)]
    tail = f"; departs from the paper: {', '.join(changed)}" if changed else ""
    return f"preset: {preset_name(method, settings)}{tail}"


def register(sub: argparse._SubParsersAction) -> None:
    from engine.methods import METHODS

    p = sub.add_parser("ask", help="answer one question with one method and show how")
    p.add_argument("corpus")
    p.add_argument("question")
    p.add_argument("--method", choices=list(METHODS), default="t2rag")
    p.add_argument("--model", default=None, help="litellm model string; empty/unset = offline reasoner")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint for --model")
    p.add_argument("--k", type=int, default=None, help="chunks per round (T2RAG) / seeds (KG2RAG) / top-k")
    p.add_argument("--rounds", type=int, default=None, help="T2RAG max rounds")
    p.add_argument("--hops", type=int, default=None, help="KG2RAG expansion hops")
    p.add_argument(
        "--reranker",
        default=None,
        help="KG2RAG and rerank baselines: ce:/local/cross-encoder/path or litellm:<rerank model>; "
        "empty = embedding cosine",
    )
    add_preset_flags(p)
    p.add_argument("--trace-out", default=None, metavar="FILE", help="save the full trace as JSON")
    p.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")
    p.set_defaults(func=cmd_ask)
