"""T2RAG `tuned`'s chunk channel (issue 42): a round's chunks fuse the proposition walk's chunk order
with a dense and a BM25 search of the chunks themselves, so a chunk whose facts the extractor missed
is still shown; the loop (rounds, placeholders, bindings) works as before. The corpus
(tests/_t2rag_helpers.py, HIDDEN_HOP_*) is invented."""

from __future__ import annotations

import pytest

from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.methods.t2rag.channels import chunk_lists, fuse, walked_for
from engine.methods.t2rag.trace import WalkedProposition
from engine.reasoners.offline import OfflineReasoner
from tests._t2rag_helpers import HIDDEN_HOP_QUESTION as QUESTION
from tests._t2rag_helpers import hidden_hop_corpus


@pytest.fixture(scope="module")
def corpus(embedder):
    return hidden_hop_corpus(embedder)


@pytest.fixture(scope="module")
def offline(embedder):
    return OfflineReasoner(embedder)


def test_fuse_ranks_by_weighted_reciprocal_rank_and_ties_keep_first_appearance():
    walk, dense, bm25 = ["a", "b", "c"], ["d", "a", "e"], ["d", "e", "a"]
    # a: 1/6 + 1/7 + 1/8 = .435; d: 2/6 = .333; e: 1/8 + 1/7 = .268; b: 1/7; c: 1/8
    assert fuse([walk, dense, bm25], 5) == ["a", "d", "e", "b", "c"]
    assert fuse([walk, dense, bm25], 2) == ["a", "d"]
    # the walk's weight counts: at 0.8 its top chunk ranks below a search's top, above its 3rd
    assert fuse([["w"], ["s1", "s2", "s3"]], 4, (0.8, 1.0)) == ["s1", "s2", "w", "s3"]
    # equal scores: the list given first wins (the walk's, in the method)
    assert fuse([["x"], ["y"]], 2) == ["x", "y"]
    # a larger constant flattens the ranks: two 2nd places outrank one 1st place
    assert fuse([["p", "q"], ["r", "q"]], 1, constant=60) == ["q"]
    assert fuse([], 3) == []


def test_chunk_lists_rank_the_chunks_own_text_and_leave_out_skipped_ones(corpus):
    texts = ["Where was Orla Vennick born?"]
    dense, bm25 = chunk_lists(corpus, texts, corpus.embed(texts), skip=set(), depth=3)
    assert dense[0] == "orla#0" and bm25[0] == "orla#0" and len(dense) == len(bm25) == 3
    # skipped chunks are left out and the lists still hold `depth` chunks
    dense, bm25 = chunk_lists(corpus, texts, corpus.embed(texts), skip={"orla#0"}, depth=3)
    assert "orla#0" not in dense + bm25 and len(dense) == len(bm25) == 3
    # several texts: a chunk ranks by its best score over them (each text's own best is on top)
    texts = ["Orla Vennick", "Elsmere mayor"]
    dense, bm25 = chunk_lists(corpus, texts, corpus.embed(texts), skip=set(), depth=4)
    assert {"orla#0", "elsmere#0"} <= set(dense) and {"orla#0", "elsmere#0"} <= set(bm25[:2])


def test_walked_for_keeps_the_propositions_stating_a_shown_chunk_in_walk_order():
    def w(tid: int, cids: list[str]) -> WalkedProposition:
        return WalkedProposition(tid, f"p{tid}", 1.0 - tid / 10, 0, cids, new_chunk_ids=list(cids))

    walked = [w(1, ["a"]), w(2, ["b", "c"]), w(3, ["a", "d"]), w(4, ["e"]), w(5, ["c"])]
    out = walked_for(walked, ["c", "d", "x"])
    # 1 and 4 state no shown chunk; 2 is first to state c, 3 first to state d; 5 restates c only
    assert [p.triplet_id for p in out] == [2, 3, 5]
    assert [p.new_chunk_ids for p in out] == [["c"], ["d"], []]
    assert out[0].chunk_ids == ["b", "c"]  # every source chunk kept, as the walk found it
    # the walk stops once every shown chunk is covered
    assert [p.triplet_id for p in walked_for(walked, ["a"])] == [1]
    assert walked_for(walked, []) == []


def test_a_chunk_the_walk_never_reaches_is_shown_in_round_one_by_its_own_words(corpus, offline):
    """orla#0 has no triplet, so no proposition walk reaches it; the question's words find it."""
    tuned = T2RAG(offline).answer(QUESTION, corpus, T2RAGSettings())
    r1 = tuned.trace.rounds[0]
    shown = {c.chunk_id: c for c in r1.chunks}
    assert "orla#0" in shown and len(r1.chunks) == T2RAGSettings().k
    assert "walk" not in shown["orla#0"].ranks and {"dense", "bm25"} <= set(shown["orla#0"].ranks)
    # the propositions the solver reads still come from the walk, each stating a shown chunk
    assert r1.walked and all(set(w.chunk_ids) & set(shown) for w in r1.walked)

    # the paper's round (and `tuned` without the channel) shows the walk's chunks only
    for settings in (T2RAGSettings(chunk_channel=False), T2RAGSettings.paper()):
        off = T2RAG(offline).answer(QUESTION, corpus, settings)
        assert all("orla#0" not in {c.chunk_id for c in r.chunks} for r in off.trace.rounds)
        assert all(set(c.ranks) == {"walk"} for r in off.trace.rounds for c in r.chunks)


def test_the_bridge_found_by_the_channel_fills_its_placeholder_and_the_next_hop(corpus, offline):
    """Two hops: the town (read off orla#0, which only the channel shows) is bound in round 1 and
    substituted into the second triplet, whose query finds the mayor in round 2."""
    result = T2RAG(offline).answer(QUESTION, corpus, T2RAGSettings())
    trace = result.trace
    assert result.answer == "Tamsin Oakhurst"
    assert len(trace.rounds) >= 2
    first = trace.rounds[0].bindings
    assert [(b.value, b.chunk_ids) for b in first] == [("Brisk Harbor", ["orla#0"])]
    placeholder = first[0].placeholder
    # the binding reached the second hop: round 2 asks for the bound town's mayor
    assert any("Brisk Harbor" in q.text and q.kind == "triplet" for q in trace.rounds[1].queries)
    assert placeholder not in " ".join(q.text for q in trace.rounds[1].queries)
    assert "brisk#0" in {c.chunk_id for r in trace.rounds[1:] for c in r.chunks}
    # without the channel the first hop has no evidence, and the question stays unanswered
    off = T2RAG(offline).answer(QUESTION, corpus, T2RAGSettings(chunk_channel=False))
    assert not any(b.value == "Brisk Harbor" for r in off.trace.rounds for b in r.bindings)
    assert off.answer != "Tamsin Oakhurst"


def test_every_setting_tuned_changes_names_its_reason():
    """The badge and docs/methods.md read the reasons from departures.py; a setting missing there
    would be shown with the generic 'changed in this session's settings'."""
    from dataclasses import fields

    from engine.methods.t2rag.departures import REASONS

    tuned, paper = T2RAGSettings(), T2RAGSettings.paper()
    changed = [f.name for f in fields(T2RAGSettings) if getattr(tuned, f.name) != getattr(paper, f.name)]
    assert "chunk_channel" in changed and tuned.chunk_channel and not paper.chunk_channel
    assert not [name for name in changed if not REASONS.get(name)]
    assert "extractor missed" in REASONS["chunk_channel"]
