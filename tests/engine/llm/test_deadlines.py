"""A provider that accepts the connection and never answers stops a question within its deadline
(+10%), with the reason in the result, in Python and on the command line."""

from __future__ import annotations

import time

import pytest

from engine.llm.deadline import within
from engine.methods import build_method
from engine.reasoners import make_reasoner
from engine.store import Workspace
from tests._app_helpers import build_small_corpus
from tests._apptest import switch_to

DEADLINE = 3.0


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("deadline_ws")
    build_small_corpus(root, "c", questions=1, embedder=embedder)
    return root


@pytest.mark.parametrize("method", ["standard", "t2rag"])
def test_a_hanging_provider_stops_the_question_at_its_deadline(corpus_root, embedder, loopback_llm, method):  # noqa: F811
    loopback_llm.fail_after, loopback_llm.fail_mode, loopback_llm.hang_seconds = 0, "hang", 30
    corpus = Workspace(corpus_root, embedder=embedder).open("c")
    corpus.search_chunks(corpus.embed(["warm"]), 1)  # index loads outside the measured time
    from engine.llm.litellm_call import import_litellm

    import_litellm()  # litellm's import (seconds, once per process) is not the provider's wait
    reasoner = make_reasoner(
        "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-dl-1", timeout=60.0, max_attempts=4
    )
    start = time.monotonic()
    with within(DEADLINE, "question"):
        result = build_method(method, reasoner).answer(corpus.questions()[0].question, corpus)
    took = time.monotonic() - start
    print(f"{method}: stopped after {took:.2f} s with a {DEADLINE:g} s deadline")
    assert took <= DEADLINE * 1.1 + 0.5, took  # engine work on top of the provider wait is small
    assert result.error and "within 3 s" in (result.error + str(result.trace)), result.error


def test_the_cli_question_deadline(corpus_root, loopback_llm, monkeypatch, capsys):  # noqa: F811
    from engine.cli import main

    loopback_llm.fail_after, loopback_llm.fail_mode, loopback_llm.hang_seconds = 0, "hang", 30
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(corpus_root))
    monkeypatch.setenv("TRIPLET_LENS_QUESTION_DEADLINE", str(DEADLINE))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dl-2")
    start = time.monotonic()
    code = main(
        [
            "ask",
            "c",
            "Who was born in Lisbon?",
            "--method",
            "standard",
            "--quiet",
            "--model",
            "openai/gpt-4o-mini",
            "--api-base",
            loopback_llm.base_url,
        ]
    )
    took = time.monotonic() - start
    assert code == 1 and "did not answer within 3 s" in capsys.readouterr().err
    assert took < DEADLINE * 1.1 + 8  # + loading the embedding model in this process


def test_the_app_question_deadline(corpus_root, loopback_llm, monkeypatch):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    from engine.llm.litellm_call import import_litellm
    from tests._app_helpers import REPO

    import_litellm()
    loopback_llm.fail_after, loopback_llm.fail_mode, loopback_llm.hang_seconds = 0, "hang", 30
    for var, value in (
        ("TRIPLET_LENS_WORKSPACE", str(corpus_root)),
        ("TRIPLET_LENS_QUESTION_DEADLINE", str(DEADLINE)),
        ("TRIPLET_LENS_MODEL", "openai/gpt-4o-mini"),
        ("TRIPLET_LENS_API_BASE", loopback_llm.base_url),
        ("OPENAI_API_KEY", "sk-test-dl-3"),
    ):
        monkeypatch.setenv(var, value)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()
    at.session_state["corpus"] = "c"
    switch_to(at, "ask").run()
    start = time.monotonic()
    at.button(key="ask_go").click().run()
    took = time.monotonic() - start
    assert not at.exception, [e.value for e in at.exception]
    assert any("did not answer within 3 s" in e.value for e in at.error), [e.value for e in at.error]
    assert took < DEADLINE * 1.1 + 3  # + the page's own rendering
