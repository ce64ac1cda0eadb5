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
        epilog="Keys: the command line is run by the machine's own user, so API keys from your environment go "
        "to whatever endpoint you name (--api-base). The app, which visitors may use, sends them only to "
        "the endpoints its operator lists in TRIPLET_LENS_API_BASES.",
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
    from engine.llm.litellm_call import local_user_policy, set_policy

    parser = build_parser(prog)
    args = parser.parse_args(argv)
    previous = set_policy(local_user_policy())  # see the epilog: the CLI's user owns its environment
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


def console_main() -> int:
    """The `triplet-lens` console command (pyproject.toml): the same CLI as `python -m engine`."""
    return main(prog="triplet-lens")
