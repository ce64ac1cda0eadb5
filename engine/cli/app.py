"""`app [--port N]`: start the Streamlit app (the same as `make run` without the set-up)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engine.core.terminal import shown

ROOT = Path(__file__).resolve().parents[2]  # engine/cli/app.py -> the repository


def app_command(port: int) -> list[str]:
    """`streamlit run app.py` through scripts/serve.py, which warms the model and the default
    corpus in the server process as it starts."""
    return [
        sys.executable,
        str(ROOT / "scripts" / "serve.py"),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
    ]


def cmd_app(args) -> int:
    from engine.cli import UserError

    if not (ROOT / "app.py").exists() or not (ROOT / "pages").is_dir() or not (ROOT / "scripts" / "serve.py").exists():
        raise UserError(
            f"the app's files (app.py, pages/, scripts/serve.py) are not beside the engine in {ROOT}: start the app "
            "from a clone of the repository (pip install -e . keeps them in place)"
        )
    cmd = app_command(args.port)
    if args.dry_run:
        print(shown(" ".join(cmd)))
        return 0
    sys.stdout.flush()
    os.execv(sys.executable, cmd)  # the app replaces this process: Ctrl-C stops Streamlit itself
    return 0  # not reached


def register(sub) -> None:
    p = sub.add_parser("app", help="start the app (Streamlit) at http://localhost:PORT")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    p.set_defaults(func=cmd_app)
