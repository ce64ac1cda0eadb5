"""`ask / eval / trace rerun --preset paper|tuned --set NAME=VALUE`, and `semantic-rerank` refused
without a reranker: what a shell user sees and what the saved traces record."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.methods import load_result
from engine.reasoners import make_reasoner
from engine.triplets.extraction import run_extraction
from tests._eval_helpers import make_hotpot_corpus


@pytest.fixture(scope="module")
def _ws(tmp_path_factory, embedder):
    from engine.store import Workspace

    ws = Workspace(tmp_path_factory.mktemp("ws"), embedder=embedder)
    run_extraction(make_hotpot_corpus(ws, n=2, name="hp"), make_reasoner("", embedder=embedder))
    return ws


@pytest.fixture()
def ws_env(_ws, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(_ws.root))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    return _ws


def _question(ws) -> str:
    return ws.open("hp").questions()[0].question


def test_ask_with_the_paper_preset_records_it_and_only_specs_fixes(ws_env, tmp_path, capsys):
    trace = tmp_path / "kg.json"
    code = main(
        [
            "ask",
            "hp",
            _question(ws_env),
            "--method",
            "kg2rag",
            "--preset",
            "paper",
            "--quiet",
            "--trace-out",
            str(trace),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "preset: paper" in out and "departs" not in out
    tr = load_result(trace).trace
    assert tr.settings.seeds == "dense" and tr.settings.expansion_cap == -1
    assert tr.preset == "paper" and tr.departures and {d.kind for d in tr.departures} <= {"fix", "engine"}

    # --set on top of a preset: the run is custom and the departure is named with the paper's value
    code = main(
        [
            "ask",
            "hp",
            _question(ws_env),
            "--method",
            "kg2rag",
            "--preset",
            "paper",
            "--set",
            "k=3",
            "--quiet",
            "--trace-out",
            str(trace),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "preset: custom; departs from the paper: k=3 (paper: 10)" in out
    assert load_result(trace).trace.preset == "custom"
    # a setting the method does not have is a usage error naming it
    assert main(["ask", "hp", "x?", "--method", "kg2rag", "--set", "rounds=2"]) == 2
    assert "kg2rag has no setting 'rounds'" in capsys.readouterr().err


def test_eval_with_the_paper_preset_runs_each_method_as_the_paper(ws_env, tmp_path, capsys):
    out = tmp_path / "paper"
    code = main(["eval", "hp", "--methods", "t2rag,kg2rag", "--preset", "paper", "--questions", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "t2rag: preset: paper" in captured.err and "kg2rag: preset: paper" in captured.err
    for method in ("t2rag", "kg2rag"):
        record = json.loads((out / f"{method}.jsonl").read_text().splitlines()[0])
        tr = load_result(out / record["trace"]).trace
        assert tr.preset == "paper" and {d.kind for d in tr.departures} <= {"fix", "engine"}
    # --set applies to the methods that have the setting; one no method has is refused
    assert main(["eval", "hp", "--methods", "t2rag", "--set", "seeds=dense", "--out", str(tmp_path / "x")]) == 2
    assert "no method of t2rag has the setting(s) seeds" in capsys.readouterr().err


def test_semantic_rerank_without_a_reranker_is_refused_with_the_reason(ws_env, tmp_path, capsys):
    assert main(["ask", "hp", _question(ws_env), "--method", "semantic-rerank"]) == 2
    assert "semantic-rerank needs a reranker" in capsys.readouterr().err
    assert main(["eval", "hp", "--methods", "semantic,semantic-rerank", "--out", str(tmp_path / "r")]) == 2
    assert "--reranker" in capsys.readouterr().err
    assert not (tmp_path / "r" / "semantic.jsonl").exists()  # refused before anything ran


def test_rerun_onto_the_paper_preset(ws_env, tmp_path, capsys):
    first = tmp_path / "first.json"
    assert main(["ask", "hp", _question(ws_env), "--method", "kg2rag", "--quiet", "--trace-out", str(first)]) == 0
    capsys.readouterr()
    again = tmp_path / "again.json"
    assert main(["rerun", str(first), "--corpus", "hp", "--preset", "paper", "--quiet", "--trace-out", str(again)]) == 0
    assert "seeds hybrid -> dense" in capsys.readouterr().out
    assert load_result(again).trace.preset == "paper"
