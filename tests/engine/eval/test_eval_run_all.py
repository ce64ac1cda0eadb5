"""bench/run_all.py: runs every script, tolerates missing and failing ones, describes the machine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _load():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench" / "run_all.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def test_run_all_writes_tables_and_notes_missing_and_failing(tmp_path, capsys):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "index_bench.py").write_text("print('| docs | ratio |')\nprint('| 400 | 1.05 |')\n")
    (bench / "kg2rag_bench.py").write_text("import sys\nprint('half a table')\nsys.exit(3)\n")
    (bench / "slow_bench.py").write_text("import time\nif __name__ == '__main__':\n    time.sleep(30)\n")
    (bench / "helper_module.py").write_text("raise SystemExit(9)\n")  # imported by scripts, never started
    out = tmp_path / "benchmarks.md"
    mod = _load()
    mod.MIN_SHARE = 1.0  # keep the test fast: the slow script gets what is left of the budget
    code = mod.main(["--bench-dir", str(bench), "--out", str(out), "--budget", "5"])
    md = out.read_text()
    assert code == 1  # one failed, one timed out
    assert "| 400 | 1.05 |" in md
    assert "`kg2rag_bench` | failed (exit 3)" in md and "half a table" in md
    assert "`t2rag_bench` | missing" in md and "does not exist in this checkout" in md
    assert "`slow_bench` | timed out" in md
    assert "helper_module" not in md
    for key in ("CPU", "cores", "RAM", "python", "torch", "faiss", "date"):
        assert f"| {key} |" in md


def test_run_all_keeps_the_hand_written_sections_below_the_marker(tmp_path, capsys):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "index_bench.py").write_text("print('| docs | ratio |')\nprint('| 400 | 0.97 |')\n")
    mod = _load()
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\n| 400 | 1.50 |\n\n" + mod.KEEP_MARKER + "\n\n## A study written by hand\n\nkept\n")
    assert mod.main(["--bench-dir", str(bench), "--out", str(out), "--only", "index_bench"]) == 0
    md = out.read_text()
    assert "| 400 | 0.97 |" in md and "| 400 | 1.50 |" not in md  # the generated part is new
    assert md.count(mod.KEEP_MARKER) == 1 and md.endswith("## A study written by hand\n\nkept\n")
    assert md.index("| 400 | 0.97 |") < md.index(mod.KEEP_MARKER)
