"""Placeholders count anywhere in a part, not only at its start (issue 16)."""

from __future__ import annotations

from engine.methods.t2rag.state import State, apply_solve, classify, known_parts_query
from engine.methods.t2rag.trace import StateTriplet
from engine.reasoners.base import QueryTriplet, SolveResult, is_placeholder, placeholder_tokens


def test_a_placeholder_inside_a_part_keeps_the_triplet_open():
    t = StateTriplet("t1", "director of ?film", "born in", "Paris")
    assert classify(t) == "searchable" and t.placeholders == ("?film",)
    assert known_parts_query(t) == "director of born in Paris"
    assert classify(StateTriplet("t2", "?performer's child", "born in", "?city")) == "fuzzy"
    assert placeholder_tokens("?performer's child") == ["?performer"]
    assert not is_placeholder("Who? (film)") and not is_placeholder("What is it?")
    assert QueryTriplet("?x", "sister of ?x", "?y").placeholders == ("?x", "?y")


def test_a_binding_reaches_a_placeholder_inside_a_part():
    state = State(
        triplets=[
            StateTriplet("t1", "Roger Miller", "performer of", "?performer"),
            StateTriplet("t2", "?performer's child", "born in", "?city"),
        ]
    )
    out = apply_solve(state, SolveResult(bindings={"?performer": "Kris Kristofferson"}))
    assert [r.applied_to for r in out.bindings] == [["t1", "t2"]]
    assert state.triplets[0].subject == "Kris Kristofferson's child"  # t1 resolved, t2 searchable now
    assert [t.text() for t in state.resolved] == ["(Roger Miller, performer of, Kris Kristofferson)"]


def test_a_returned_triplet_fills_a_placeholder_with_words_around_it():
    state = State(triplets=[StateTriplet("t1", "director of ?film", "born in", "?city")])
    apply_solve(state, SolveResult(triplets=(QueryTriplet("director of Jaws", "born in", "?city"),)))
    assert state.triplets[0].subject == "director of Jaws" and classify(state.triplets[0]) == "searchable"
