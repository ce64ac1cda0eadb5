"""KG2RAG's measured defaults (docs/benchmarks.md, "Retrieval quality (issue 16)") against the
paper's pipeline, on the hand-made corpus of test_kg2rag (bundled embedder, scripted reasoner)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.methods.kg2rag import FILL_SEPARATOR, KG2RAG, TREE_SEPARATOR, KG2RAGSettings, tree_context
from engine.methods.kg2rag.graph import Tree
from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner
from tests.engine.methods.test_kg2rag import CHUNKS, TRIPLETS, Q


@pytest.fixture(scope="module")
def corpus(embedder):
    return MemoryCorpus(embedder, CHUNKS, TRIPLETS)


def test_the_overflowing_top_tree_is_cut_to_its_heaviest_chunks_instead_of_skipped(corpus):
    paper = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings.paper(k=2, hops=1))
    assert not paper.trace.trees[0].selected  # the paper skips it and falls back to seeds
    res = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings(k=2))
    (tree,) = [t for t in res.trace.trees if t.kind == "tree"]
    assert tree.selected and tree.cut_chunk_ids == ["town", "fred"]
    assert "cut to fit k=2: kept 2 of its 4" in tree.note
    assert res.evidence_chunk_ids == ["song", "kris"] and res.trace.fill_chunk_ids == []
    assert "max+chunk" in res.trace.ranker and "no cross-encoder" in res.trace.ranker


def test_the_trace_names_walk_roots_and_seed_triplets_and_the_context_shows_each_tree(corpus):
    reasoner = ScriptedReasoner()
    res = KG2RAG(reasoner).answer(Q, corpus, KG2RAGSettings(k=6))
    tr = res.trace
    by_chunk = {}
    for t in corpus.triplets():
        for cid in t.chunk_ids:
            by_chunk.setdefault(cid, []).append(t.triplet_id)
    assert all(s.triplet_ids == sorted(by_chunk.get(s.chunk_id, [])) for s in tr.seeds)
    assert all(s.n_triplets == len(s.triplet_ids) for s in tr.seeds)
    tree = tr.trees[0]
    assert tree.kind == "tree" and tree.root == "me and bobby mcgee" and tree.kept_edges[0].u == tree.root
    # a seed with no triplet (the chess and volcano distractors) competes as a one-chunk tree
    alone = [t for t in tr.trees if t.kind == "seed"]
    assert [t.chunk_ids for t in alone] == [["d3"], ["d2"]] and all(t.selected for t in alone)
    # the reader sees where each tree starts: trees in rank order, a separator line between them
    assert reasoner.contexts == [tr.context]
    paragraphs = tr.context.split("\n\n")
    seps = [i for i, p in enumerate(paragraphs) if p == TREE_SEPARATOR]
    assert len(seps) == 2 and not tr.context.startswith(TREE_SEPARATOR)
    assert "Fred Foster was a record producer" in paragraphs[seps[0] - 1]
    assert "Chess is a board game" in paragraphs[seps[0] + 1] and "volcano" in paragraphs[seps[1] + 1]


def test_a_chunk_in_two_selected_trees_is_shown_once_and_the_fill_has_its_own_separator(corpus):
    def tree(tid, ids):
        return Tree(tree_id=tid, nodes=[], kept_edges=[], pruned_edges=[], chunk_ids=ids, triplet_form="")

    ctx = tree_context([tree(0, ["song", "kris"]), tree(1, ["kris", "town"])], ["d1"], corpus)
    assert ctx.count("Kris Kristofferson is an American singer") == 1
    assert ctx.split("\n\n") == [
        "Me and Bobby McGee is a song written by Kris Kristofferson and Fred Foster.",
        "Kris Kristofferson is an American singer and actor born in Brownsville.",
        TREE_SEPARATOR,
        "Brownsville, Texas\nBrownsville is a city in Cameron County on the Rio Grande.",
        FILL_SEPARATOR,
        "Banana\nA banana is an elongated edible fruit produced by several kinds of plants.",
    ]
    # only seeds, no tree: no separator at all
    assert tree_context([], ["d1"], corpus).startswith("Banana")


def test_hybrid_seeds_add_a_keyword_match_and_keep_cosine_scores(corpus):
    dense = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings(k=4, seeds="dense")).trace.seeds
    hybrid = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings(k=4)).trace.seeds
    assert [s.chunk_id for s in dense] == ["song", "kris", "d3", "fred"]
    # "county" is a rare word only the Brownsville paragraph holds: BM25 ranks it first, and the
    # fusion lifts it from dense rank 5+ into the seeds
    ids = [s.chunk_id for s in hybrid]
    assert ids[:2] == ["song", "town"] and len(ids) == 4
    qvec = np.asarray(corpus.embed([Q]))[0]
    town = float(np.asarray(corpus.chunk_vectors(["town"]))[0] @ qvec)
    assert hybrid[1].score == pytest.approx(town, abs=1e-5)  # edge weights stay s(q, c)
    assert all(a.score == pytest.approx(b.score) for a, b in zip(hybrid, dense) if a.chunk_id == b.chunk_id)


def test_the_paper_preset_and_the_defaults_differ_only_where_measured():
    p, d = KG2RAGSettings.paper(), KG2RAGSettings()
    assert (p.seeds, p.tree_score, p.overflow, p.seed_trees, p.fill) == ("dense", "text", "skip", False, "rerank")
    assert (p.tree_form, p.expansion, p.question_links) == ("text", "authors", True)
    assert (d.seeds, d.tree_score, d.overflow, d.seed_trees, d.fill) == (
        "hybrid",
        "max+chunk",
        "cut-share",
        True,
        "half",
    )
    assert (p.k, p.hops) == (d.k, d.hops) == (10, 1)
    with pytest.raises(ValueError, match="overflow"):
        KG2RAGSettings(overflow="truncate")
    with pytest.raises(ValueError, match="seeds"):
        KG2RAGSettings(seeds="sparse")


def test_a_default_trace_round_trips_and_the_summary_names_the_cut(corpus):
    from engine.methods.base import result_from_json, result_to_json

    m = KG2RAG(ScriptedReasoner())
    res = m.answer(Q, corpus, KG2RAGSettings(k=2))
    back = result_from_json(result_to_json(res))
    assert back == res and back.trace.trees[0].cut_chunk_ids == ["town", "fred"]
    assert back.trace.seeds[0].triplet_ids == res.trace.seeds[0].triplet_ids != []
    text = "\n".join(m.summarize(res))
    assert "seeds: 2 chunks (hybrid)" in text and "(1 cut to fit k)" in text
