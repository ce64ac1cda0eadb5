"""T2RAG against its authors' round loop (tests/reference/trag.py, restated from rockcor/T2RAG
src/TRAG.py): on the same corpus, embedder and solver replies, our method asks the same queries per
round, walks the same propositions in the same order, shows the same chunks, runs the same number
of rounds and ends with the same clues.

Our side runs the `paper` preset (engine/methods/presets.py: k = 5, N = 3, the reference's prompts,
proposed triplets adopted, the paper's forced-stop context). Where SPEC.md fixes a bug of the
reference code, a test names the fix and asserts that our behaviour differs exactly there:

- "(ours: the reference code removes substrings, turning "show" into "s")": wh-words as whole words;
- "(ours: the reference code keeps only the last one)": a proposition stated by several chunks
  covers all of them;
- "(ours: the reference code silently drops them)": a triplet the solver did not return stays queued.
"""

from __future__ import annotations

import re

import pytest

from engine.methods.presets import preset_settings
from engine.methods.t2rag import T2RAG
from engine.reasoners.base import SolveResult
from tests._t2rag_helpers import BOBBY_CHUNKS, BOBBY_TRIPLETS, FakeCorpus, Q, ScriptedReasoner
from tests.doubles import hash_embed
from tests.reference import trag as ref

#: the shared Bobby McGee corpus with one more chunk; three triplets reworded so that no two
#: propositions tie (the reference's tie order, np.argsort reversed, is not a decision; ours is by
#: triplet id), and the two-chunk "song by" triplet left out (test_a_triplet_stated_twice adds it)
CHUNKS = BOBBY_CHUNKS + [("show#0", "Friends", "Friends is a show created by David Crane and Marta Kauffman.")]
_REWORDED = {
    ("Janis Joplin", "hit", "Me and Bobby McGee"): ("Janis Joplin", "had a posthumous hit with", "Me and Bobby McGee"),
    ("Film B", "director", "Bob Jones"): ("Film B", "director", "Bob Jones Jr"),
    ("Bob Jones", "born in", "Canada"): ("Bob Jones Jr", "was born in", "Canada"),
}
TRIPLETS = [(*_REWORDED.get((s, p, o), (s, p, o)), cids) for s, p, o, cids in BOBBY_TRIPLETS if len(cids) == 1] + [
    ("Friends", "created by", "David Crane", ("show#0",))
]


def clue(s, p, o) -> dict:
    return {"subject": s, "predicate": p, "object": o}


def _words(text: str) -> str:
    """What the embedder sees (tests.doubles.hash_embed: lower-cased words), so case and '?' do not count."""
    return " ".join(re.findall(r"\w+", text.lower()))


def _reference(question, triples, replies, triplets=TRIPLETS, k=5):
    props = [f"{s} {p} {o}" for s, p, o, _ in triplets]
    passage_of = {}
    for s, p, o, cids in triplets:  # one passage per proposition: the last document's
        for cid in cids:
            passage_of[f"{s} {p} {o}"] = cid

    def resolve(it, traceable, fuzzy, walked, passages):
        return replies[it - 1] if it - 1 < len(replies) else ([], [])

    return ref.trag_qa(
        question,
        [clue(*t) for t in triples],
        props,
        hash_embed(props),
        passage_of,
        lambda texts: hash_embed(list(texts)),
        resolve,
        k=k,
    )


def _ours(question, triples, solves, triplets=TRIPLETS, settings=None):
    reasoner = ScriptedReasoner(decomposition=[Q(*t) for t in triples], solves=solves, answers=["x"])
    return T2RAG(reasoner).answer(question, FakeCorpus(CHUNKS, triplets), settings or preset_settings("t2rag", "paper"))


BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"
BRIDGE_TRIPLES = [("Me and Bobby McGee", "performer", "?performer"), ("?performer", "child", "?")]
# the solver's replies as the reference parses them: (fully resolved clues, newly traceable clues)
BRIDGE_REPLIES = [
    ([clue("Me and Bobby McGee", "performer", "Kris Kristofferson")], [clue("Kris Kristofferson", "child", "?")]),
    ([clue("Kris Kristofferson", "child", "Tracy Kristofferson")], []),
]
# the same replies in our solve format: the rewritten triplets
BRIDGE_SOLVES = [
    SolveResult(
        triplets=(Q("Me and Bobby McGee", "performer", "Kris Kristofferson"), Q("Kris Kristofferson", "child", "?"))
    ),
    SolveResult(triplets=(Q("Kris Kristofferson", "child", "Tracy Kristofferson"),)),
]


def test_the_same_decisions_round_by_round_on_a_bridge_question():
    rounds, final = _reference(BRIDGE, BRIDGE_TRIPLES, BRIDGE_REPLIES)
    result = _ours(BRIDGE, BRIDGE_TRIPLES, BRIDGE_SOLVES)
    trace = result.trace
    assert len(trace.rounds) == len(rounds) == 2
    for theirs, mine in zip(rounds, trace.rounds):
        # same queries per round: the searchable triplets' known parts, then the stripped question
        assert [_words(q) for q in theirs["queries"]] == [_words(q.text) for q in mine.queries]
        # same propositions walked, in the same order, and the same chunks shown
        assert theirs["walked"] == [w.text for w in mine.walked]
        assert theirs["passages"] == [c.chunk_id for c in mine.chunks]
        # the same open clues going in
        assert sorted(_words(" ".join(c.values())) for c in theirs["traceable"]) == sorted(
            _words(" ".join(t.query.parts)) for t in mine.state_before.searchable
        )
    # both end complete with the same facts
    assert result.stop_reason == "complete"
    assert sorted(_words(" ".join(c.values())) for c in final) == sorted(
        _words(f.replace("|", " ")) for f in trace.synthesis.facts
    )


def test_the_same_decisions_when_a_round_resolves_nothing():
    # round 1 resolves nothing and returns nothing: the reference keeps its clues (nothing retrieved
    # is not the case here, so it drops them and stops); ours early-stops with the clue open. Both
    # end after one round with the same single retrieval.
    triples = [("Roger Miller", "child", "?")]
    rounds, final = _reference("Who is Roger Miller's child?", triples, [([], [])])
    result = _ours("Who is Roger Miller's child?", triples, [SolveResult()])
    assert len(rounds) == len(result.trace.rounds) == 1
    assert rounds[0]["walked"] == [w.text for w in result.trace.rounds[0].walked]
    assert rounds[0]["passages"] == [c.chunk_id for c in result.trace.rounds[0].chunks]
    assert result.stop_reason == "early_stop"


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_the_walk_stops_at_k_distinct_chunks_as_the_reference_does(k):
    rounds, _ = _reference(BRIDGE, BRIDGE_TRIPLES, BRIDGE_REPLIES, k=k)
    result = _ours(BRIDGE, BRIDGE_TRIPLES, BRIDGE_SOLVES, settings=preset_settings("t2rag", "paper", k=k))
    first = result.trace.rounds[0]
    assert rounds[0]["walked"] == [w.text for w in first.walked]
    assert rounds[0]["passages"] == [c.chunk_id for c in first.chunks]
    assert len(first.chunks) == min(k, 4)  # 4 chunks hold a proposition sharing a word with a query


# --- SPEC's fixes of the reference code: the difference is exactly the fix ---------------------


def test_fix_wh_words_are_removed_as_whole_words():
    """SPEC 3a (ours): the reference removes substrings, turning "show" into "s"."""
    q = "Who created the show Friends?"
    rounds, _ = _reference(q, [("Friends", "created by", "?")], [([], [])])
    result = _ours(q, [("Friends", "created by", "?")], [SolveResult()])
    theirs, mine = rounds[0]["queries"], [x.text for x in result.trace.rounds[0].queries]
    assert _words(theirs[0]) == _words(mine[0]) == "friends created by"  # the triplet query agrees
    assert theirs[1] == "created the s friends"  # the reference's bug
    assert _words(mine[1]) == "created the show friends"  # the fix, and the only difference
    assert len(theirs) == len(mine) == 2


def test_fix_a_proposition_stated_by_several_chunks_covers_all_of_them():
    """SPEC 0 (ours): the reference maps a proposition to the last chunk stating it only."""
    shared = TRIPLETS + [("Me and Bobby McGee", "song by", "Kris Kristofferson", ("song#0", "kris#0"))]
    rounds, _ = _reference(BRIDGE, BRIDGE_TRIPLES, BRIDGE_REPLIES, triplets=shared)
    result = _ours(BRIDGE, BRIDGE_TRIPLES, BRIDGE_SOLVES, triplets=shared)
    walked = result.trace.rounds[0].walked
    both = next(w for w in walked if w.text == "Me and Bobby McGee song by Kris Kristofferson")
    assert both.chunk_ids == ["song#0", "kris#0"]  # ours: every chunk stating it
    assert "Me and Bobby McGee song by Kris Kristofferson" in rounds[0]["walked"]
    # the same walk order: only the chunks a multi-chunk proposition covers differ
    assert rounds[0]["walked"][: len(walked)] == [w.text for w in walked]


def test_fix_a_triplet_the_solver_omits_stays_queued():
    """SPEC 5 (ours): the reference drops every clue the solver did not return."""
    q = "Were the directors of Film A and Film B born in the same country?"
    triples = [("Film A", "director", "?dirA"), ("Film B", "director", "?dirB")]
    replies = [([clue("Film A", "director", "Alice Smith")], [])]  # Film B's clue not returned
    rounds, final = _reference(q, triples, replies)
    result = _ours(q, triples, [SolveResult(triplets=(Q("Film A", "director", "Alice Smith"),)), SolveResult()])
    # the reference: round 1 only, Film B's director forgotten
    assert len(rounds) == 1 and all("Film B" not in c["subject"] for c in final)
    # ours: the same round 1, and Film B's clue is still open after it; the round found nothing
    # new, so the loop stops early (SPEC 6) and the answer step is told what is still unresolved
    r1 = result.trace.rounds[0]
    assert rounds[0]["walked"] == [w.text for w in r1.walked]
    assert [t.subject for t in r1.state_after.searchable] == ["Film B"]
    assert result.stop_reason == "early_stop" and len(result.trace.rounds) == 1
    # the paper's forced stop answers from the resolved facts and the remaining searchable triplets
    assert "Film B | director | ?dirB" in result.trace.synthesis.facts
