"""Questions and triplet parts are bounded by content, each refusal naming its limit."""

from __future__ import annotations

import pytest

from engine.core.limits import MAX_QUESTION_CHARS, InputRejected, check_question
from engine.triplets.files import filter_reason


@pytest.mark.parametrize(
    "question, message",
    [
        ("", "the question is empty"),
        ("   \n", "the question is empty"),
        ("x" * (MAX_QUESTION_CHARS + 1), f"the limit is {MAX_QUESTION_CHARS:,}"),
        ("Where was \udcff born?", "not valid UTF-8"),  # what a bad byte in argv becomes
    ],
)
def test_bad_questions_are_refused_naming_the_problem(question, message):
    with pytest.raises(InputRejected, match=message):
        check_question(question)


def test_a_normal_question_passes_stripped():
    assert check_question("  Where was Ada born?\n") == "Where was Ada born?"


def test_a_five_megabyte_triplet_part_is_not_stored():
    assert "the limit is 500 per part" in filter_reason("x" * 5_000_000, "born in", "Paris")
    assert filter_reason("Ada Lovelace", "born in", "London") is None


def test_the_cli_refuses_an_empty_question(tmp_path, monkeypatch, capsys):
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path / "ws"))
    assert main(["ask", "nothing", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err
