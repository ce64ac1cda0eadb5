"""Budget caps hold under concurrency (issue 26): a question is booked, with an estimated token and
dollar share, in one locked transaction before it runs, and settled after. Before, the cap was only
checked before a question and usage recorded after it: 5 browser sessions asking at once against
`questions=2` per day all got answers."""

from __future__ import annotations

import threading
import time

import pytest

from engine.session import Session
from engine.session.budget import Budget, BudgetExceeded
from tests.doubles import HashEmbedder, MemoryCorpus, ScriptedReasoner, chunk

CORPUS = MemoryCorpus(
    HashEmbedder(),
    [chunk("a#0", "Lisbon", "Ada Vale was born in Lisbon.")],
    [("Ada Vale", "born in", "Lisbon", ("a#0",))],
)


class SlowReasoner(ScriptedReasoner):
    """Answers after a pause, so every question is in flight before any finishes."""

    def answer(self, question, context, *, facts=None):
        time.sleep(0.5)
        return super().answer(question, context, facts=facts)


def _ask_at_once(sessions: list[Session]) -> tuple[list, list[str]]:
    answers, refusals, start = [], [], threading.Barrier(len(sessions))

    def ask(session: Session) -> None:
        start.wait()
        try:
            answers.append(
                session.answer(
                    "standard", "Where was Ada Vale born?", CORPUS, reasoner=SlowReasoner(answers=["Lisbon"])
                )
            )
        except BudgetExceeded as exc:
            refusals.append(str(exc))

    threads = [threading.Thread(target=ask, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return answers, refusals


def test_eight_concurrent_questions_against_a_day_cap_of_two_give_two_answers_and_six_refusals(tmp_path):
    path = tmp_path / "budget.sqlite"
    # eight browser sessions of one server (each its own Budget object, as separate processes would)
    sessions = [Session(workspace=tmp_path, budget=Budget(path, {}, {"questions": 2})) for _ in range(8)]
    answers, refusals = _ask_at_once(sessions)
    assert len(answers) == 2 and all(a.answer == "Lisbon" for a in answers), [a.answer for a in answers]
    assert len(refusals) == 6, refusals
    assert all(
        r == "the operator's budget for this server today is used up (questions: 2); it resets at 00:00 UTC"
        for r in refusals
    ), refusals
    assert Budget(path).day_usage().questions == 2


def test_a_token_cap_counts_the_estimated_share_of_questions_in_flight(tmp_path):
    path = tmp_path / "budget.sqlite"
    b = Budget(path, {}, {"tokens": 100})
    first = b.reserve("s1")
    b.settle(first, tokens=60)  # the day's mean is now 60 tokens a question
    held = b.reserve("s2")  # in flight: 60 estimated, 120 booked in all
    assert held.tokens == 60 and b.day_usage().tokens == 120
    with pytest.raises(BudgetExceeded, match="this server today is used up \\(tokens: 100\\)"):
        b.reserve("s3")  # refused while s2 runs, not after
    b.settle(held, tokens=10)
    assert b.day_usage().tokens == 70 and b.day_usage().questions == 2
    b.reserve("s3")


def test_a_failed_question_is_still_settled(tmp_path):
    path = tmp_path / "budget.sqlite"
    session = Session(workspace=tmp_path, budget=Budget(path, {"questions": 5}, {}))
    with pytest.raises(RuntimeError, match="boom"):
        session.answer(
            "standard", "Where was Ada Vale born?", CORPUS, reasoner=ScriptedReasoner(answers=[RuntimeError("boom")])
        )
    assert session._reserved == {}  # settled, nothing left booked for this thread
    assert session.budget.session_usage(session.session_id).questions == 1
