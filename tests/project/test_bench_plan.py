"""bench/run_all.py's time plan: every benchmark has an expected time, and an early slow script is
given its time without starving the ones after it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run_all():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench" / "run_all.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_all", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_has_an_expected_time_and_the_plan_fits_the_budget():
    run_all = _run_all()
    scripts = run_all.benchmark_scripts(ROOT / "bench")
    # a module another script imports is not started on its own
    assert "real_recall" not in scripts and "scale_bench" in scripts
    assert set(run_all.SCRIPTS) <= set(scripts)
    assert sorted(run_all.EXPECT) == scripts, "a new bench script needs its EXPECT entry (and ARGS for a short run)"
    assert sum(run_all.EXPECT.values()) < run_all.BUDGET
    assert set(run_all.ARGS) <= set(scripts)


def test_a_slow_first_script_gets_more_than_the_minimum_but_leaves_the_rest_their_time():
    run_all = _run_all()
    later = ["t2rag_bench", "kg2rag_bench"]
    reserve = run_all.EXPECT["t2rag_bench"] + run_all.EXPECT["kg2rag_bench"]
    share = run_all.time_share("index_bench", 1000.0, later)
    assert share == 1000.0 - reserve > run_all.MIN_SHARE
    # nothing left beyond the reserve: the script still gets its own expected time, never more than is left
    assert run_all.time_share("index_bench", 300.0, later) == max(run_all.MIN_SHARE, run_all.EXPECT["index_bench"])
    assert run_all.time_share("index_bench", 50.0, later) == 50.0
