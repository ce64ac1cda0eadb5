"""The operator's budget caps hold on the command line as in the app (issue 38, break 4).

Before: with `TRIPLET_LENS_CAP_DAY=questions=2`, eight concurrent `python -m engine ask` all answered
and no budget database was created (`Session.for_cli` built no budget). Now they book against the
workspace's one budget database, as the app's sessions do: two answers, six refusals naming the cap.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.cli import main
from tests._app_helpers import REPO, build_small_corpus

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


@pytest.fixture(scope="module")
def capped_ws(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("caps_ws")
    build_small_corpus(root, "caps", questions=2, embedder=embedder)
    return root


def test_eight_concurrent_cli_asks_under_a_day_cap_of_two(capped_ws, tmp_path):
    ws = tmp_path / "ws"
    import shutil

    shutil.copytree(capped_ws, ws)
    env = dict(
        os.environ,
        TRIPLET_LENS_WORKSPACE=str(ws),
        TRIPLET_LENS_CAP_DAY="questions=2",
        PYTHONPATH=str(REPO),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
    )
    cmd = [sys.executable, "-m", "engine", "ask", "caps", QUESTION, "--method", "semantic", "--quiet"]
    procs = [
        subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    outs = [(p.wait(timeout=600), *p.communicate()) for p in procs]
    answered = [o for o in outs if o[0] == 0]
    refused = [o for o in outs if o[0] != 0]
    assert len(answered) == 2, outs
    assert len(refused) == 6 and all("budget for this server today is used up" in err for _, _, err in refused), outs
    assert (ws / "budget.sqlite").exists()


def test_a_cli_eval_is_refused_when_the_cap_cannot_hold_its_questions(capped_ws, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(capped_ws))
    monkeypatch.setenv("TRIPLET_LENS_CAP_SESSION", "questions=3")
    out = tmp_path / "eval"
    # two questions x two methods = 4 > 3: nothing runs
    assert main(["eval", "caps", "--methods", "semantic,bm25", "--out", str(out)]) == 1
    assert "budget for this session is used up (questions: 3)" in capsys.readouterr().err
    assert not (out / "semantic.jsonl").exists()
    # one method fits
    assert main(["eval", "caps", "--methods", "semantic", "--out", str(out)]) == 0
