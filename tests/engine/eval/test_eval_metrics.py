"""Metrics pinned against hand-computed cases (SPEC section 4)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.types import Chunk, Question
from engine.eval.metrics import (
    PARAGRAPH,
    SENTENCE,
    QuestionMetrics,
    RetrievalScore,
    answer_score,
    average_metrics,
    failed_question_metrics,
    normalize_answer,
    score_question,
)


def test_normalization_drops_case_punctuation_articles_and_spaces():
    assert normalize_answer("  The  Beatles! ") == "beatles"
    assert normalize_answer("A Tale of Two Cities.") == "tale of two cities"
    assert normalize_answer("an apple, the pear") == "apple pear"
    # articles only as whole words: "Thea" and "another" keep their letters
    assert normalize_answer("Thea another") == "thea another"
    assert normalize_answer("") == ""


def test_exact_match_and_token_f1_hand_computed():
    s = answer_score("the Eiffel Tower", ["Eiffel Tower"])
    assert (s.em, s.f1) == (1.0, 1.0)
    # pred tokens [eiffel, tower, paris], gold [eiffel, tower]: P=2/3 R=1 F1=0.8
    s = answer_score("Eiffel Tower, Paris", ["Eiffel Tower"])
    assert s.em == 0.0
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(1.0)
    assert s.f1 == pytest.approx(0.8)
    # repeated tokens count as a multiset: pred [new, new, york] vs gold [new, york] -> P=2/3 R=1
    assert answer_score("New New York", ["New York"]).f1 == pytest.approx(0.8)


def test_max_over_aliases():
    s = answer_score("NYC", ["New York City", "NYC"])
    assert (s.em, s.f1) == (1.0, 1.0)
    # partial overlap against the better alias: pred [new, york] vs [new, york, city] -> F1 = 0.8
    s = answer_score("New York", ["Big Apple", "New York City"])
    assert s.em == 0.0 and s.f1 == pytest.approx(0.8)


def test_yes_no_rule_gives_zero_when_they_differ():
    assert answer_score("no", ["no answer"]).f1 == 0.0  # would be 2/3 by token overlap
    assert answer_score("yes", ["yes"]).em == 1.0
    assert answer_score("yes, it is", ["yes"]).f1 == 0.0  # normalized "yes it is" != "yes"
    assert answer_score("noanswer", ["no"]).f1 == 0.0
    assert answer_score("Yes.", ["yes"]).f1 == 1.0  # normalization happens before the rule


def test_empty_prediction_and_missing_gold():
    assert answer_score("", ["Paris"]) == answer_score("", ["Paris"])
    assert answer_score("", ["Paris"]).f1 == 0.0
    assert answer_score(None, ["Paris"]).em == 0.0  # type: ignore[arg-type]
    assert answer_score("Paris", []).f1 == 0.0


def _q(**kw) -> Question:
    base: dict[str, Any] = dict(
        qid="q1",
        question="?",
        answers=("Paris",),
        supporting_facts=(("France", 0), ("Paris", 2)),
        supporting_titles=("France", "Paris"),
    )
    base.update(kw)
    return Question(**base)


def test_sentence_and_paragraph_units_from_chunks():
    q = _q()
    # one paragraph chunk covering France sentences 0-2, one sentence chunk Paris 1 (not gold)
    chunks = [Chunk("a#0", "a", 0, "France", "...", 0, 3), Chunk("b#1", "b", 1, "Paris", "...", 1, 2)]
    m = score_question("Paris", q, chunks, k=1)
    # paragraph units {France, Paris} vs gold {France, Paris}: all right
    assert (m.paragraph.precision, m.paragraph.recall, m.paragraph.f1) == (1.0, 1.0, 1.0)
    # sentence units {(France,0),(France,1),(France,2),(Paris,1)} vs gold {(France,0),(Paris,2)}
    assert m.sentence.precision == pytest.approx(1 / 4)
    assert m.sentence.recall == pytest.approx(1 / 2)
    assert m.sentence.f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    # recall@1: the first chunk alone covers France only
    assert m.paragraph.recall_at_k == pytest.approx(0.5)
    assert m.sentence.recall_at_k == pytest.approx(0.5)
    assert m.n_evidence_chunks == 2


def test_no_retrieval_scores_zero_and_no_gold_is_unscored():
    m = score_question("Paris", _q(), [], k=5)
    assert m.paragraph == RetrievalScore(0.0, 0.0, 0.0, 0.0, 0, 2)
    m = score_question("Paris", _q(supporting_facts=(), supporting_titles=()), [], k=5)
    assert m.paragraph is None and m.sentence is None
    # titles fall back to the supporting facts' titles when supporting_titles is empty
    m = score_question("x", _q(supporting_titles=()), [Chunk("c", "d", 0, "Paris", "t", 0, 1)], k=5)
    assert m.paragraph.recall == 0.5


def test_averages_run_over_all_questions_including_missing_and_errors():
    q = _q()
    good = score_question("Paris", q, [Chunk("a", "a", 0, "France", "", 0, 1), Chunk("b", "b", 0, "Paris", "", 2, 3)])
    assert good.em == 1.0 and good.paragraph.f1 == 1.0
    errored = failed_question_metrics(q)
    avg = average_metrics([good, errored, None, QuestionMetrics(em=0.0, f1=0.5)], PARAGRAPH)
    assert avg.n == 4
    assert avg.em == pytest.approx(1 / 4)
    assert avg.f1 == pytest.approx(1.5 / 4)
    # retrieval: good=1, errored=0, missing=0; the fourth has no gold support and is not scored
    assert avg.retrieval_n == 3
    assert avg.retrieval_f1 == pytest.approx(1 / 3)
    assert avg.retrieval_recall == pytest.approx(1 / 3)
    s = average_metrics([good, errored], SENTENCE)
    assert s.retrieval_precision == pytest.approx(0.5)
    assert average_metrics([], PARAGRAPH).retrieval_f1 is None
