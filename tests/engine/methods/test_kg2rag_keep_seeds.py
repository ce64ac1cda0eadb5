"""KG2RAG's `keep_seeds` (issue 42): the first stage's best seeds are never left out of the context,
even when the question's cosine ranks them below the chunks the expansion brought in (a BM25 hit,
or one of many alike windows of one long document), which the seed guard (cosine) lets go."""

from __future__ import annotations

from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
from engine.methods.kg2rag.graph import spanning_trees
from engine.methods.kg2rag.select import guard_seeds, select_trees
from tests._kg2rag_helpers import QUESTION, E, Silent, lone_hub_corpus


def test_the_first_stages_best_seeds_keep_their_place_though_less_similar_than_expanded_chunks():
    from engine.methods.kg2rag.select import keep_top_seeds

    # one tree of expanded chunks (x1..x3) around seed s1 fills k = 4; seed s2, second in the first
    # stage, is less similar to the question (0.35) than x1 and x2: the cosine guard lets it go
    tree = spanning_trees(
        [E("a", "b", "s1", 0.9, 1), E("b", "c", "x1", 0.5, 2), E("c", "d", "x2", 0.4, 3), E("d", "e", "x3", 0.3, 4)]
    )
    scores = {"s1": 0.9, "s2": 0.35, "s3": 0.2, "x1": 0.5, "x2": 0.4, "x3": 0.3}
    seeds = ["s1", "s2", "s3"]
    chosen = select_trees(tree, 4, "skip", scores)
    assert guard_seeds(tree, chosen, [], seeds, 4, scores)[2] == []
    kept_chunks, fill, kept = keep_top_seeds(tree, chosen, [], seeds, 2, 4, scores)
    # s2 replaces the least similar expanded chunk (x3); s3 is beyond the first two and stays out
    assert kept == fill == ["s2"] and sorted(kept_chunks) == ["s1", "x1", "x2"]
    assert "x3" in tree[0].cut_chunk_ids and "first-stage seed" in tree[0].note
    # more than k keeps at most k; a context of seeds only gives up its lowest-ranked seed beyond n
    assert keep_top_seeds([], ["s1", "s3"], [], seeds, 5, 2, scores) == (["s1"], ["s2"], ["s2"])
    assert keep_top_seeds([], chosen, [], seeds, 0, 4, scores) == (chosen, [], [])


def test_tuned_keeps_the_first_stages_best_seed_and_the_paper_preset_does_not():
    corpus, q = lone_hub_corpus(), QUESTION
    base = dict(k=3, seeds="dense", seed_trees=False, overflow="skip", tree_score="max", seed_guard=False)
    off = KG2RAG(Silent()).answer(q, corpus, KG2RAGSettings(**base, keep_seeds=0))
    on = KG2RAG(Silent()).answer(q, corpus, KG2RAGSettings(**base, keep_seeds=1))
    assert [s.chunk_id for s in on.trace.seeds][0] == "lone"
    assert "lone" not in off.evidence_chunk_ids and len(off.evidence_chunk_ids) == 3
    assert "lone" in on.evidence_chunk_ids and len(on.evidence_chunk_ids) == 3
    assert "keep_seeds: 1 of the first stage's best 1 seed chunk(s) kept their place" in on.trace.note
    assert KG2RAGSettings().keep_seeds == 5 and KG2RAGSettings.paper().keep_seeds == 0
