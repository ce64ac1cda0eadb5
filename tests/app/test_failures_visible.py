"""A provider that fails (500s after every retry) is an error everywhere, never a silent empty
answer: the result's error, a non-zero CLI exit, an error row in eval counted apart."""

from __future__ import annotations

import pytest

from engine.methods.registry import METHODS
from engine.reasoners import make_reasoner
from engine.session import Session
from engine.store import Workspace
from tests._app_helpers import build_small_corpus


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("fail_ws")
    build_small_corpus(root, "c", questions=2, embedder=embedder)
    return root


@pytest.mark.parametrize("method", list(METHODS))  # every registered method, plug-ins' included
def test_a_failing_provider_sets_the_result_error(corpus_root, embedder, loopback_llm, method):  # noqa: F811
    loopback_llm.fail_after, loopback_llm.fail_mode = 0, "500"
    corpus = Workspace(corpus_root, embedder=embedder).open("c")
    reasoner = make_reasoner(
        "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-fail-1", max_attempts=1
    )
    result = Session(workspace=corpus_root).answer(method, corpus.questions()[0].question, corpus, reasoner=reasoner)
    assert result.error and result.answer == "", (result.answer, result.stop_reason)


def test_cli_exits_1_and_eval_counts_error_rows(corpus_root, loopback_llm, monkeypatch, tmp_path, capsys):  # noqa: F811
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(corpus_root))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fail-2")
    loopback_llm.fail_after, loopback_llm.fail_mode = 0, "500"
    args = ["--model", "openai/gpt-4o-mini", "--api-base", loopback_llm.base_url]
    assert main(["ask", "c", "Who was born in Lisbon?", "--method", "standard", "--quiet", *args]) == 1
    out = capsys.readouterr()
    assert "could not answer" in out.err and "provider error" in out.err
    main(["eval", "c", "--methods", "standard", "--questions", "2", "--out", str(tmp_path / "ev"), *args])
    capsys.readouterr()
    from engine.eval.harness import read_records

    records = read_records(tmp_path / "ev" / "standard.jsonl")
    assert len(records) == 2 and all(r.error and r.failure == "error" for r in records.values())
