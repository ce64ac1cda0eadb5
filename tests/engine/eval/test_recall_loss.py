"""Where recall was lost: each gold paragraph lands in one bucket, read from small hand-made traces."""

from __future__ import annotations

from engine.core.types import Question
from engine.eval.recall_loss import NOT_RETRIEVED, recall_loss, recall_loss_markdown, summarize_recall_loss
from engine.methods.kg2rag import KG2RAGSettings, KG2RAGTrace, SeedChunk
from engine.methods.kg2rag.graph import Hop, ScoredChunkId, Tree
from engine.methods.kg2rag.loss import (
    EXPANDED_NOT_SELECTED,
    NEVER_CANDIDATE,
    SEED_ALONE_LOW,
    SEED_CUT,
    SEED_NO_TRIPLET,
    SEED_PRUNED,
    SEED_RANKED_LOW,
    SEED_SELF_LOOP,
    SEED_SKIPPED,
)
from engine.methods.t2rag.loss import NEVER as T2_NEVER
from engine.methods.t2rag.loss import NO_NEW_CHUNK as EV_NO_NEW_CHUNK
from engine.methods.t2rag.loss import NO_QUERY_TRIPLET as EV_DECOMPOSITION
from engine.methods.t2rag.loss import QUERY_NO_GOLD as EV_QUERY_NO_GOLD
from tests._kg2rag_helpers import chunk


class Chunks:
    def __init__(self, ids):
        self.by_id = {c: chunk(c, c.upper(), f"text of {c}") for c in ids}

    def get_chunks(self, ids):
        return [self.by_id[c] for c in ids if c in self.by_id]


def _q(*titles):
    return Question("q1", "?", ("a",), supporting_titles=tuple(titles))


def _tree(tid, chunks, **kw):
    return Tree(tree_id=tid, nodes=[], kept_edges=[], pruned_edges=[], chunk_ids=chunks, triplet_form="", **kw)


def test_every_lost_gold_seed_gets_the_step_that_dropped_it():
    ids = ["kept", "bare", "pruned", "cut", "skipped", "low", "loop", "alone", "exp", "gain", "far"]
    corpus = Chunks(ids)
    tr = KG2RAGTrace(question="?", settings=KG2RAGSettings())
    tr.seeds = [
        SeedChunk(c, c.upper(), 0.9, 0 if c in ("bare", "alone") else 2)
        for c in ("kept", "bare", "pruned", "cut", "skipped", "low", "loop", "alone")
    ]
    tr.hops = [
        Hop(
            hop=1,
            frontier=[],
            entities_reached=[],
            triplet_ids=[],
            chunks_added=[ScoredChunkId("exp", 0.5), ScoredChunkId("gain", 0.4)],
        )
    ]
    tr.trees = [
        _tree(0, ["kept", "gain", "cut"], selected=True, cut_chunk_ids=["cut"]),
        _tree(1, ["skipped"], note="skipped: 12 more chunks would exceed k=10 (have 0)"),
        _tree(2, ["low", "exp"], note="not taken: the context already holds k=10 chunks"),
        _tree(3, ["loop"], kind="self-loops"),
        _tree(4, ["alone"], kind="seed"),
    ]
    gold = _q(*[c.upper() for c in ids])
    loss = recall_loss("kg2rag", tr, gold, corpus, ["kept", "gain"])
    assert loss.n_gold == 11 and loss.found == 2 and loss.gained == 1
    assert loss.lost == {
        SEED_NO_TRIPLET: 1,
        SEED_PRUNED: 1,
        SEED_CUT: 1,
        SEED_SKIPPED: 1,
        SEED_RANKED_LOW: 1,
        SEED_SELF_LOOP: 1,
        SEED_ALONE_LOW: 1,
        EXPANDED_NOT_SELECTED: 1,
        NEVER_CANDIDATE: 1,
    }
    assert loss.found + sum(loss.lost.values()) == loss.n_gold


def test_baselines_only_say_not_retrieved_and_no_gold_gives_none():
    corpus = Chunks(["a", "b"])
    loss = recall_loss("semantic", None, _q("A", "B"), corpus, ["a"])
    assert loss.found == 1 and loss.lost == {NOT_RETRIEVED: 1}
    assert recall_loss("semantic", None, _q(), corpus, ["a"]) is None


class _T2RAGJson(dict):
    """A T2RAG trace as plain JSON (an older save) with the trace class's hook: read field by field."""

    def recall_loss(self, units_of, gold, found, missing):
        from engine.methods.t2rag.loss import recall_loss as t2rag_loss

        return t2rag_loss(self, units_of, gold, found, missing)


def test_t2rag_events_count_repeated_rounds_goldless_queries_and_failed_decompositions():
    corpus = Chunks(["g1", "x", "y", "g2"])
    trace = _T2RAGJson(
        {
            "decomposition": {"triplets": []},
            "rounds": [
                {
                    "queries": [{"text": "q0"}, {"text": "q1"}],
                    "walked": [{"query_index": 0, "chunk_ids": ["g1"]}, {"query_index": 1, "chunk_ids": ["x"]}],
                    "chunks": [{"chunk_id": "g1"}, {"chunk_id": "x"}],
                },
                {
                    "queries": [{"text": "q0"}],
                    "walked": [{"query_index": 0, "chunk_ids": ["x"]}],
                    "chunks": [{"chunk_id": "x"}],
                },  # nothing new: a repeated round
            ],
        }
    )
    loss = recall_loss("t2rag", trace, _q("G1", "G2"), corpus, ["g1", "x"])
    assert loss.found == 1 and loss.lost == {T2_NEVER: 1}
    assert loss.events == {EV_DECOMPOSITION: 1, EV_NO_NEW_CHUNK: 1, EV_QUERY_NO_GOLD: 2}


def test_the_summary_table_sums_units_and_counts_questions():
    corpus = Chunks(["a", "b", "c"])
    items = [
        recall_loss("semantic", None, _q("A", "B"), corpus, ["a"]),
        recall_loss("semantic", None, _q("C"), corpus, []),
        recall_loss("semantic", None, _q("A"), corpus, ["a"]),
    ]
    s = summarize_recall_loss("semantic", items)
    assert (s.n_questions, s.n_gold, s.found) == (3, 4, 2)
    assert s.lost_units == {NOT_RETRIEVED: 2} and s.lost_questions == {NOT_RETRIEVED: 2}
    table = "\n".join(recall_loss_markdown([s]))
    assert "| semantic | found in the context | 2 of 4 | 3 |" in table
    assert "| semantic | lost: not retrieved | 2 | 2 |" in table


def test_a_real_kg2rag_run_accounts_for_every_gold_paragraph(embedder):
    from engine.methods.kg2rag import KG2RAG
    from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner
    from tests.engine.methods.test_kg2rag import CHUNKS, TRIPLETS, Q

    corpus = MemoryCorpus(embedder, CHUNKS, TRIPLETS)
    res = KG2RAG(ScriptedReasoner()).answer(Q, corpus, KG2RAGSettings.paper(k=2, hops=1))
    gold = Question(
        "q",
        Q,
        ("Cameron County",),
        supporting_titles=("Me and Bobby McGee", "Kris Kristofferson", "Brownsville, Texas"),
    )
    loss = recall_loss("kg2rag", res.trace, gold, corpus, res.evidence_chunk_ids)
    # the one tree (4 chunks) is skipped for k=2; the fill rule adds the two best seeds back
    assert res.evidence_chunk_ids == ["song", "kris"]
    assert loss.found == 2 and loss.gained == 0 and loss.lost == {EXPANDED_NOT_SELECTED: 1}
