"""The project installs as a package with a `triplet-lens` command (issue 13): the wheel built from
pyproject.toml holds the engine and the app's components, declares the console command, and takes
its dependencies from the exact lock in requirements.txt; the command is the same CLI as
`python -m engine`, plus `app`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_engine_the_command_and_the_locked_dependencies(tmp_path):
    # built from a copy: a build writes build/ and *.egg-info beside the sources
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "workspace", "bench", "tests", "screenshots", "__pycache__", "*.egg-info", "build"
        ),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("triplet_lens-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert (
        "engine/cli/__init__.py" in names
        and "engine/methods/t2rag/method.py" in names
        and "components/graphs/graph.py" in names
    )
    assert not any(n.startswith("tests/") for n in names)
    assert "triplet-lens = engine.cli:console_main" in entry
    locked = [
        ln.split("==")[0]
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in ln and not ln.startswith("#")
    ]
    for name in ("streamlit", "faiss-cpu", "litellm", "networkx"):
        assert name in locked and f"Requires-Dist: {name}==" in meta


def test_the_command_is_the_same_cli_and_starts_the_app(capsys):
    from engine.cli import build_parser, console_main, main

    assert set(build_parser()._subparsers._group_actions[0].choices) >= {"corpus", "ask", "eval", "extract", "app"}
    sys_argv = sys.argv
    try:
        sys.argv = ["triplet-lens", "app", "--port", "8599", "--dry-run"]
        assert console_main() == 0
    finally:
        sys.argv = sys_argv
    cmd = capsys.readouterr().out.strip()
    assert cmd.endswith(f"{ROOT / 'scripts' / 'serve.py'} --server.port 8599 --server.headless true")
    assert main(["app", "--dry-run"]) == 0 and "--server.port 8501" in capsys.readouterr().out
