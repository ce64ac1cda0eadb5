"""`python -m engine eval`: the table, resume, probes and readable errors."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.reasoners import make_reasoner
from engine.triplets.extraction import run_extraction
from tests._eval_helpers import make_hotpot_corpus


@pytest.fixture(scope="module")
def _ws(tmp_path_factory, embedder):
    from engine.store import Workspace

    ws = Workspace(tmp_path_factory.mktemp("ws"), embedder=embedder)
    c = make_hotpot_corpus(ws, n=3, name="hp")
    run_extraction(c, make_reasoner("", embedder=embedder))
    return ws


@pytest.fixture()
def ws_env(_ws, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(_ws.root))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    return _ws


def test_eval_prints_the_table_and_resumes(ws_env, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["eval", "hp", "--methods", "standard,none", "--questions", "2", "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert "| standard | 2/2 |" in first and "| none | 2/2 |" in first
    lines = (out / "standard.jsonl").read_text().splitlines()
    assert len(lines) == 2
    # a rerun over all 3 questions only adds the missing one
    assert main(["eval", "hp", "--methods", "standard", "--out", str(out)]) == 0
    assert "| standard | 3/3 |" in capsys.readouterr().out
    assert (out / "standard.jsonl").read_text().splitlines()[:2] == lines
    # other settings into the same folder would mix two experiments: refused with a message
    assert main(["eval", "hp", "--methods", "standard", "--k", "2", "--out", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err
    assert main(["eval", "hp", "--methods", "standard", "--k", "2", "--questions", "1", "--out", str(out) + "-k2"]) == 0
    assert (
        json.loads((tmp_path / "run-k2" / "summary.json").read_text())["methods"][0]["answer"]["avg_evidence_chunks"]
        == 2.0
    )


def test_eval_on_a_triplet_drop_copy(ws_env, tmp_path, capsys):
    ids = tmp_path / "ids.txt"
    qid = ws_env.open("hp").questions()[0].qid
    ids.write_text(qid + "\n")
    assert (
        main(
            [
                "eval",
                "hp",
                "--methods",
                "t2rag",
                "--ids",
                str(ids),
                "--drop-triplets",
                "0.1",
                "--out",
                str(tmp_path / "d"),
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "| t2rag | 1/1 |" in captured.out and "failure labels" in captured.out
    assert "hp-drop10-s0" in captured.err and ws_env.exists("hp-drop10-s0")
    assert json.loads((tmp_path / "d" / "t2rag.jsonl").read_text())["qid"] == qid


def test_eval_unknown_method_is_a_usage_error(tmp_path, capsys):
    assert main(["eval", "hp", "--methods", "t2rag,nope", "--out", str(tmp_path / "x")]) == 2
    assert "unknown method(s) nope" in capsys.readouterr().err


def test_eval_on_the_shuffled_copy_reuses_it_on_rerun(ws_env, tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["eval", "hp", "--methods", "standard", "--questions", "1", "--shuffle", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "shuffled copy 'hp-shuffled-s0'" in err and "0 questions inconsistent" in err
    shuffled = ws_env.open("hp-shuffled-s0")
    # the question scored is the renamed one
    rec = json.loads((out / "standard.jsonl").read_text().splitlines()[0])
    assert rec["question"] == shuffled.questions()[0].question
    assert main(["eval", "hp", "--methods", "standard", "--questions", "2", "--shuffle", "--out", str(out)]) == 0
    assert "reusing shuffled copy 'hp-shuffled-s0'" in capsys.readouterr().err
    assert len((out / "standard.jsonl").read_text().splitlines()) == 2


def test_eval_shows_where_recall_was_lost_for_kg2rag(ws_env, tmp_path, capsys):
    out = tmp_path / "loss"
    assert main(["eval", "hp", "--methods", "kg2rag,standard", "--k", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Where recall was lost" in text
    rows = [line for line in text.splitlines() if line.startswith("| kg2rag | found in the context |")]
    assert len(rows) == 1
    found, total = (int(x) for x in rows[0].split("|")[3].split(" of "))
    # every gold paragraph is either found or lost at a named step
    lost = sum(int(line.split("|")[3]) for line in text.splitlines() if line.startswith("| kg2rag | lost: "))
    assert total == 6 and found + lost == total
    summary = json.loads((out / "summary.json").read_text())
    assert summary["methods"][0]["recall_loss"]["found"] == found
