"""KG2RAG end to end on a small hand-made corpus (bundled embedder, scripted reasoner)."""

from __future__ import annotations

import pytest

from engine.methods import build_method
from engine.methods.base import result_from_json, result_to_json
from engine.methods.kg2rag import KG2RAG, KG2RAGSettings, KG2RAGTrace
from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner, chunk

Q = "In which county is the birthplace of the writer of Me and Bobby McGee?"

CHUNKS = [
    chunk("song", "Me and Bobby McGee", "Me and Bobby McGee is a song written by Kris Kristofferson and Fred Foster."),
    chunk("kris", "Kris Kristofferson", "Kris Kristofferson is an American singer and actor born in Brownsville."),
    chunk("town", "Brownsville, Texas", "Brownsville is a city in Cameron County on the Rio Grande."),
    chunk("fred", "Fred Foster", "Fred Foster was a record producer who founded Monument Records."),
    chunk("d1", "Banana", "A banana is an elongated edible fruit produced by several kinds of plants."),
    chunk("d2", "Volcano", "A volcano is a rupture in the crust of a planetary-mass object."),
    chunk("d3", "Chess", "Chess is a board game for two players played on a checkered board."),
]
TRIPLETS = [
    ("Me and Bobby McGee", "written by", "Kris Kristofferson", ("song",)),
    ("Me and Bobby McGee", "written by", "Fred Foster", ("song",)),
    ("Kris Kristofferson", "born in", "Brownsville", ("kris",)),
    ("Brownsville", "located in", "Cameron County", ("town",)),
    ("Fred Foster", "founded", "Monument Records", ("fred",)),
]


@pytest.fixture(scope="module")
def corpus(embedder):
    return MemoryCorpus(embedder, CHUNKS, TRIPLETS)


def test_expansion_brings_the_second_hop_paragraph_into_the_context(corpus):
    reasoner = ScriptedReasoner({Q: "Cameron County"})
    res = KG2RAG(reasoner).answer(Q, corpus, KG2RAGSettings.paper(k=4, hops=1))
    tr: KG2RAGTrace = res.trace
    assert [s.chunk_id for s in tr.seeds] == ["song", "kris", "d3", "fred"]
    # Brownsville is an entity of the seed "kris": one hop reaches the county paragraph
    (hop,) = tr.hops
    assert "brownsville" in hop.frontier and "cameron county" in hop.entities_reached
    assert [c.chunk_id for c in hop.chunks_added] == ["town"]
    # one component -> one tree, walked from the song (heaviest edge) down the chain;
    # the chess distractor seed is left out
    (tree,) = tr.trees
    assert tree.chunk_ids == ["song", "kris", "town", "fred"] and tree.selected
    assert res.evidence_chunk_ids == ["song", "kris", "town", "fred"]
    assert tr.fill_chunk_ids == []
    assert res.answer == "Cameron County"
    # the reasoner saw exactly the trace's context, paragraphs in evidence order
    assert reasoner.contexts == [tr.context]
    positions = [tr.context.index(c.text) for c in corpus.get_chunks(res.evidence_chunk_ids)]
    assert positions == sorted(positions)
    assert "embedding cosine" in tr.ranker and "no cross-encoder" in tr.ranker
    assert res.usage.calls == 1 and res.usage.prompt_tokens > 0


def test_without_hops_the_graph_only_organizes_the_seeds(corpus):
    res = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings.paper(k=4, hops=0))
    assert res.trace.hops == []
    assert "town" not in res.evidence_chunk_ids
    assert res.evidence_chunk_ids[:3] == ["song", "kris", "fred"]


def test_a_tree_too_big_for_k_falls_back_to_the_best_seeds(corpus):
    res = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings.paper(k=2, hops=1))
    tr = res.trace
    (tree,) = tr.trees
    assert not tree.selected and "exceed k=2" in tree.note
    assert tr.tree_chunk_ids == [] and tr.fill_chunk_ids == ["song", "kris"]
    assert "fewer than k//2" in tr.note  # the paper preset's fill: the authors' rerank
    assert res.evidence_chunk_ids == ["song", "kris"]


def test_trees_are_ranked_selected_within_k_and_the_trace_round_trips(corpus):
    res = KG2RAG(ScriptedReasoner({Q: "Cameron County"})).answer(Q, corpus, KG2RAGSettings.paper(k=3, hops=2))
    tr = res.trace
    scores = [t.rank_score for t in tr.trees]
    assert scores == sorted(scores, reverse=True)
    assert len(res.evidence_chunk_ids) <= 3
    assert len(set(res.evidence_chunk_ids)) == len(res.evidence_chunk_ids)
    # every weighted edge carries its relation, source chunk and a weight equal to s(q, chunk)
    assert tr.edges and all(e.predicate and e.chunk_id and -1 <= e.weight <= 1 for e in tr.edges)
    back = result_from_json(result_to_json(res))
    assert back == res
    assert isinstance(back.trace, KG2RAGTrace)


def test_seeds_without_triplets_still_answer_from_seeds_and_say_so(embedder):
    bare = MemoryCorpus(embedder, CHUNKS, [])
    reasoner = ScriptedReasoner({Q: "Cameron County"})
    res = KG2RAG(reasoner).answer(Q, bare, KG2RAGSettings.paper(k=4))
    tr = res.trace
    assert res.answer == "Cameron County"
    assert "no triplets" in tr.note and "seed chunks only" in tr.note
    assert res.evidence_chunk_ids == [s.chunk_id for s in tr.seeds]  # the whole budget, seeds in order
    assert tr.trees == [] and tr.hops == []
    assert any("no triplets" in line for line in KG2RAG(reasoner).summarize(res))


class _FakeCrossEncoder:
    """Prefers the tree that mentions Monument Records, whatever the embedder says."""

    name = "fake-cross-encoder"

    def __init__(self):
        self.seen: list[list[str]] = []

    def score(self, query, texts):
        self.seen.append(list(texts))
        return [1.0 if "Monument" in t else 0.0 for t in texts]


def test_a_configured_reranker_scores_each_trees_triplet_form(corpus):
    rr = _FakeCrossEncoder()
    res = KG2RAG(ScriptedReasoner(), reranker=rr).answer(Q, corpus, KG2RAGSettings.paper(k=10, hops=1))
    tr = res.trace
    assert tr.ranker.startswith("fake-cross-encoder")
    assert rr.seen and all("\n" in t or " " in t for t in rr.seen[0])
    assert "Monument" in tr.trees[0].triplet_form


def test_registry_builds_kg2rag_and_summary_names_each_step(corpus):
    m = build_method("kg2rag", ScriptedReasoner())
    res = m.answer(Q, corpus, KG2RAGSettings.paper(k=2))
    text = "\n".join(m.summarize(res))
    for word in ("seeds:", "expansion:", "components/trees", "selected:", "tokens:"):
        assert word in text


def test_settings_reject_nonsense():
    with pytest.raises(ValueError):
        KG2RAGSettings.paper(k=0)
    with pytest.raises(ValueError):
        KG2RAGSettings(tree_score="median")
