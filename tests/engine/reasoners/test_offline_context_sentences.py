"""The offline answer step reads its context one passage at a time (issue 42).

A window of a long document is cut wherever its size ends, often in mid-sentence. Split as one text,
the context glued that cut sentence to the next passage's title and first sentence, so a sentence
"about" the bound value could be one that never named it: with ?city = Prague, the window ending "...
stopped working in 1788 or 1789 (as it ... each component being disconnected" ran on into the next
passage's "... 5 April 1868, Prague) was a painter", and the answer was another clock's year. The
passages below are invented, shaped like the MuSiQue long-document windows where this was found.
"""

from __future__ import annotations

from engine.reasoners.offline.spans import context_sentences

CUT = (
    "Old clock\nThe first clock was built between 1352 and 1354. This clock stopped working in 1788 or "
    "1789 (as it apparently stopped working gradually, each component being disconnected"
)
PAINTER = (
    "Karel Purkyne\nKarel Purkyne (15 March 1834, Wroclaw – 5 April 1868, Prague) was a painter in the "
    "Austro-Hungarian Empire. He was the son of the physiologist Jan Evangelista Purkyne."
)
ORLOJ = (
    "Prague astronomical clock\nThe oldest part of the Orloj, the mechanical clock and astronomical dial, "
    "dates back to 1410 when it was made by clockmaker Mikulas of Kadan and Jan Sindel, then later a professor "
    "of mathematics and astronomy at Charles University."
)
QUESTION = "When was the astronomical clock built in the city where Karel Purkyne died?"


def test_a_sentence_never_runs_across_two_passages():
    sentences = context_sentences("\n\n".join([CUT, PAINTER, ORLOJ]))
    assert not any("1788" in s and "Prague" in s for s in sentences), sentences
    assert any(s.endswith("each component being disconnected") for s in sentences)


def test_the_answer_comes_from_a_sentence_that_names_the_bound_value(reasoner):
    facts = ["Karel Purkyne | died in | Prague"]
    for order in ([CUT, PAINTER, ORLOJ], [PAINTER, ORLOJ, CUT]):  # whatever order the chunks come in
        answer, _call = reasoner.answer(QUESTION, "\n\n".join(order), facts=facts)
        assert answer == "1410", (answer, [p.split("\n")[0] for p in order])
