"""Issue 29, fourth stop: readings of a question and its evidence that no decomposition shape gives.
An analogy's condition, a possessive that names a work's maker, and the answer a sentence puts right
after the question's own words. Each is pinned by the real HotpotQA question it was written for and
run on invented names (tests/fixtures/qa holds the real questions with their attribution)."""

from __future__ import annotations

from engine.reasoners.base import Evidence, QueryTriplet
from tests.engine.reasoners.test_offline_hops import _solve_on_one_chunk


def test_an_analogy_asks_what_the_thing_is_in_the_condition_s_sense(reasoner, real_questions):
    """ "If Gallu is a demon Lilu is what?": the condition sets up the category; the question proper
    is "Lilu is what?", answered with the "is" fact nearest the category, and a "word for X" is X."""
    q = "If Gallu is a demon Lilu is what?"  # HotpotQA
    assert q in real_questions
    ts, _ = reasoner.decompose(q)
    assert [t.parts for t in ts] == [("Lilu", "is", "?answer")]
    text = (
        "Brennick\nBrennick is mentioned in many old harbour songs. Brennick is a Vennish word for a sea ghost, "
        "related to the drowned."
    )
    question = "If Orla is a demon, Brennick is what?"
    res, _call = reasoner.solve(
        question, [], [QueryTriplet("Brennick", "is", "?answer")], Evidence(propositions=(), chunks=(("c1", text),))
    )
    assert res.bindings == {"?answer": "Vennish word for a sea ghost"}
    answer, _call = reasoner.answer(question, text, facts=["Brennick | is | Vennish word for a sea ghost"])
    assert answer == "a sea ghost"


def test_a_possessive_before_a_work_names_its_maker(reasoner, real_questions):
    """ "... the 1968 album "A Man Without Love" by an English pop singer": the album's paragraph does
    not say "by"; the singer's sentence says "in his 1968 album ...", and the maker is its subject."""
    q = (
        '"Wonderland by Night" is a song included in the 1968 album "A Man Without Love" by an English pop '
        "singer that has sold more than how many records worldwide?"
    )  # HotpotQA (stored with a leading space)
    assert q in {x.strip() for x in real_questions}
    ts, _ = reasoner.decompose(q)
    assert [t.parts for t in ts] == [("A Man Without Love", "by", "?singer"), ("?singer", "sold more than", "?answer")]
    text = 'Harbour Lights\nTamsin Oakhurst also recorded the tune in her 1971 album "Harbour Lights".'
    assert _solve_on_one_chunk(reasoner, text, ("Harbour Lights", "by", "?singer")).bindings == {
        "?singer": "Tamsin Oakhurst"
    }
    pronoun = 'Tamsin Oakhurst\nTamsin Oakhurst is a singer. She recorded it again for her album "Harbour Lights".'
    assert _solve_on_one_chunk(reasoner, pronoun, ("Harbour Lights", "by", "?singer")).bindings == {
        "?singer": "Tamsin Oakhurst"
    }
    # a possessive that does not modify the work ("their dismay at the ...") names no maker
    text = "Harbour Lights\nThe Brisk Harbor critics expressed their dismay at the Harbour Lights tour."
    assert _solve_on_one_chunk(reasoner, text, ("Harbour Lights", "by", "?singer")).bindings == {}


def test_the_answer_is_the_name_a_sentence_puts_after_the_question_s_own_words(reasoner, real_questions):
    """ "... he was an Anglo-Saxon Earl of which location": a context sentence with the same words
    ("was an Anglo-Saxon Earl of Northumbria") holds the answer right after them."""
    q = (
        "Rhiwallon ap Cynfyn, was a Welsh King, following the 1063 invasion of Wales by Harold and Tostig "
        "Godwinson, he was an Anglo-Saxon Earl of which location, that overthrew Gruffydd, Rhiwallon and "
        "Bleddyn jointly?"
    )  # HotpotQA
    assert q in real_questions
    context = (
        "Orla Vennick\nOrla Vennick (1026 - 1066) was a Harbour Warden of Brisk Harbor and sister of Tamsin "
        "Oakhurst.\n\nSaltlight\nSaltlight is a town on the coast, raided in 1063 by Orla Vennick."
    )
    answer, call = reasoner.answer(
        "Following the 1063 raid on Saltlight by Orla Vennick, she was a Harbour Warden of which town?", context
    )
    assert answer == "Brisk Harbor", call.parsed
    # a phrase of common words alone is no evidence: "the city of which" matches nothing
    assert reasoner.answer("Saltlight is the town of which county?", context)[0] != "Brisk Harbor"


def test_the_sides_of_a_first_or_last_comparison_take_dates(reasoner, real_questions):
    """ "Which magazine was published first, Guitar World or Science News?": each side's value is a
    date, never the founder a sentence names after "founded by" (the placeholders ?a and ?b say
    nothing of their type; the comparison does)."""
    q = "Which magazine was published first, Guitar World or Science News?"  # HotpotQA (held out)
    assert q in real_questions
    chunks = (
        ("c1", "Harbour Weekly\nHarbour Weekly is a monthly magazine, published since July 1980."),
        (
            "c2",
            'Saltlight Review\nSaltlight Review is an American weekly magazine. "Saltlight Review" has been '
            "published since 1922 by Harbour Society for Letters & the Public, a non-profit organization founded "
            "by Orla Vennick in 1920.",
        ),
    )
    question = "Which magazine was published first, Harbour Weekly or Saltlight Review?"
    open_triplets = [
        QueryTriplet("Harbour Weekly", "published", "?a"),
        QueryTriplet("Saltlight Review", "published", "?b"),
    ]
    res, _call = reasoner.solve(question, [], open_triplets, Evidence(propositions=(), chunks=chunks))
    # the year the sentence's last date gives (its founder's society's, as in the real paragraph), not the founder
    assert res.bindings == {"?a": "July 1980", "?b": "1920"}, res.bindings
    facts = [f"{t.subject} | {t.predicate} | {res.bindings[t.object]}" for t in open_triplets]
    assert reasoner.answer(question, "", facts=facts)[0] == "Saltlight Review"


def test_what_year_is_answered_with_the_year_of_a_full_date(reasoner, real_questions):
    """ "... produced by a man born in what year?" answered "May 17, 1965" misses a gold "1965": the
    question asks for the year."""
    q = 'The soundtrack from the film "Natural Born Killers" was produced by a man born in what year?'  # HotpotQA
    assert q in real_questions
    context = "Tamsin Oakhurst\nTamsin Oakhurst (born May 17, 1965) is a harbour pilot of Brisk Harbor."
    assert reasoner.answer("Tamsin Oakhurst was born in what year?", context)[0] == "1965"
    assert reasoner.answer("When was Tamsin Oakhurst born?", context)[0] == "May 17, 1965"  # "when" keeps the date
