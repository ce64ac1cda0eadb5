"""`make test` runs `make check` first (ruff lint and format, mypy over engine/), with the tools
pinned in the lock `make` installs; ruff's lint and format check also run here, so a plain pytest
run sees a regression too."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _lock() -> dict[str, str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if "==" in line and not line.startswith("#"))


def _ruff(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "ruff", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_check_tools_are_pinned_in_the_lock():
    lock = _lock()
    for tool in ("ruff", "mypy"):
        assert re.fullmatch(r"\d+(\.\d+)+", lock.get(tool, "")), f"{tool} is not pinned in requirements.txt"


def test_make_test_runs_the_checks_over_the_engine():
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: check$", make, re.M)
    check = make.split("\ncheck:", 1)[1].split("\n\n", 1)[0]
    code = re.search(r"^CODE := (.*)$", make, re.M)
    assert code and "engine" in code.group(1).split(), "the checks must cover the engine"
    assert "ruff check $(CODE)" in check and "ruff format --check $(CODE)" in check and "mypy" in check
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "engine" in mypy["files"]
    # no engine module is let off: the engine is type-checked as a whole
    let_off = [m for o in mypy.get("overrides", []) if o.get("ignore_errors") for m in o["module"]]
    assert not [m for m in let_off if m.startswith("engine")], let_off


def test_ruff_finds_nothing_in_the_engine():
    lint = _ruff("check", "--no-cache", "engine")
    assert lint.returncode == 0, lint.stdout[-3000:]
    fmt = _ruff("format", "--check", "--no-cache", "engine")
    assert fmt.returncode == 0, fmt.stdout[-3000:]


def test_ruff_would_report_a_broken_rule(tmp_path):
    # the check above can fail: the same configuration flags an unused import and a long line
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx = '" + "a" * 130 + "'\n")
    lint = _ruff("check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad))
    assert lint.returncode == 1 and "F401" in lint.stdout and "E501" in lint.stdout
