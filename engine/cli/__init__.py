"""`python -m engine ...`: the command line over the same engine calls the app makes.

Each area registers its own sub-commands (`register(subparsers)` in engine/cli/*.py). Errors a user
can act on print one line on stderr and exit with code 2 (bad input or usage) or 1 (a failure while
running); a traceback is only printed with TRIPLET_LENS_DEBUG=1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: modules providing `register(subparsers)`; a missing one is skipped so a partial install still runs
COMMAND_MODULES = (
    "engine.cli.corpus",
    "engine.cli.extract",
    "engine.cli.ask",
    "engine.cli.eval",
    "engine.cli.app",
    "engine.cli.trace",
)


class UserError(Exception):
    """Raised by commands for problems the user can fix; printed without a traceback."""


def build_parser(prog: str = "python -m engine") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Triplet Lens: T2RAG and KG2RAG over your own documents.",
        epilog="Keys: API keys from your environment go to a provider's default endpoint or to an endpoint you "
        "name: a flag of this command (--api-base, --embedder-api-base, --vectors milvus://...) or "
        "TRIPLET_LENS_API_BASE / TRIPLET_LENS_API_BASES. Endpoints read from disk (a corpus's settings, a "
        "backup, a trace) are used only when you named them that way; otherwise they are refused. "
        "Budget caps (TRIPLET_LENS_CAP_SESSION / _DAY) hold here as in the app: one command is one session, "
        "the day's counts are shared with the app through the workspace's budget.sqlite.",
    )
    from engine.methods.registry import load_plugins

    load_plugins()  # a plug-in's method is a choice of --method like the built-in ones
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m engine") -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from engine.llm.endpoints import local_user_policy, set_policy

    parser = build_parser(prog)
    args = parser.parse_args(argv)
    previous = set_policy(local_user_policy(named_endpoints(args)))  # see the epilog
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished work is saved and a rerun continues from there", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        if os.environ.get("TRIPLET_LENS_DEBUG"):
            raise
        from engine.core.terminal import shown
        from engine.store import CorpusError

        code = 2 if isinstance(exc, (UserError, CorpusError, ValueError, FileNotFoundError)) else 1
        print(f"error: {shown(exc)}", file=sys.stderr)
        return code
    finally:
        set_policy(previous)


def named_endpoints(args: argparse.Namespace, env: dict[str, str] | None = None) -> list[str]:
    """The endpoints the person running this command named: its flags and the environment. Nothing
    read from disk is among them (engine.llm.endpoints)."""
    from engine.core.config import AppSettings

    try:
        out = list(AppSettings.from_env(env).trusted_bases)
    except ValueError:
        out = []  # a malformed variable is reported by the command that reads the settings
    for flag in ("api_base", "embedder_api_base"):
        if getattr(args, flag, None):
            out.append(getattr(args, flag))
    vectors = getattr(args, "vectors", None)
    if isinstance(vectors, str) and vectors.startswith(("milvus://", "http://", "https://")):
        out.append(vectors)
    return out


def console_main() -> int:
    """The `triplet-lens` console command (pyproject.toml): the same CLI as `python -m engine`."""
    return main(prog="triplet-lens")
