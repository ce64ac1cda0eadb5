"""Two evaluations into one output folder: the second is refused, so no question runs (or is
billed) twice."""

from __future__ import annotations

import fcntl

import pytest

from engine.eval.harness import EvalBusy, run_eval


def test_a_second_run_into_the_same_folder_is_refused(tmp_path):
    out = tmp_path / "ev"
    out.mkdir()
    with open(out / ".run.lock", "a+") as fh:  # a first run holds the folder
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(EvalBusy, match="another evaluation is writing into"):
            run_eval(None, ["none"], None, out_dir=out)
    assert not list(out.glob("*.jsonl"))
