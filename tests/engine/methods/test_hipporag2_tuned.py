"""HippoRAG 2's `tuned` departures (issue 42), each on an invented corpus where it changes the
ranking: `hybrid_facts` (a fact naming the question's rare word is retrieved though a bag of common
words is closer in cosine), `dense_first` (dense retrieval's best passages open the ranking though
the walk favours a passage full of facts), `rank_fusion` (the two orders fused by reciprocal rank).
A hash embedder (bag of words) keeps it instant; `paper()` keeps the authors' order."""

from __future__ import annotations

import numpy as np

from engine.methods.hipporag2 import HippoRAG2, HippoRAG2Settings
from tests.doubles import HashEmbedder, MemoryCorpus, OfflineLikeReasoner, chunk


def _corpus(passages: dict[str, tuple[str, list[tuple[str, str, str]]]]) -> MemoryCorpus:
    chunks, rows = [], []
    for cid, (text, facts) in passages.items():
        chunks.append(chunk(cid, cid, text))
        rows += [(s, p, o, (cid,)) for s, p, o in facts]
    return MemoryCorpus(HashEmbedder(), chunks, rows)


def _run(corpus, question, **settings):
    return HippoRAG2(OfflineLikeReasoner()).answer(question, corpus, HippoRAG2Settings.paper(**settings)).trace


#: many facts share the question's common words (river, flows, past); one names its rare word
RIVERS = _corpus(
    {
        "zorb": ("Zorbatown lies on the Quell.", [("Zorbatown", "lies on", "Quell")]),
        **{
            f"r{i}": (f"The river {i} flows past town {i}.", [(f"river {i}", "flows past", f"town {i}")])
            for i in range(12)
        },
        "snow": ("Snow falls in winter.", [(f"snow {i}", "falls in", "winter") for i in range(4)]),
    }
)
RIVER_Q = "Which river flows past Zorbatown?"


def test_hybrid_facts_retrieves_the_fact_naming_the_questions_rare_word():
    cosine = _run(RIVERS, RIVER_Q, linking_top_k=1)
    hybrid = _run(RIVERS, RIVER_Q, linking_top_k=1, hybrid_facts=True)
    assert cosine.facts_retrieved[0].subject.casefold() != "zorbatown" and cosine.facts_retrieved[0].lexical is None
    top = hybrid.facts_retrieved[0]
    assert (top.subject.casefold(), top.lexical) == ("zorbatown", 1.0)  # the best BM25 score, min-max normalized
    assert 0.5 <= top.score <= 1.0  # the mean of its BM25 half (1.0) and its cosine half


def test_hybrid_facts_with_no_word_in_common_falls_back_to_cosine():
    plain = _run(RIVERS, "Qwerty uiop?", linking_top_k=3)
    hybrid = _run(RIVERS, "Qwerty uiop?", linking_top_k=3, hybrid_facts=True)
    assert [f.line for f in hybrid.facts_retrieved] == [f.line for f in plain.facts_retrieved]
    assert [f.score for f in hybrid.facts_retrieved] == [f.score for f in plain.facts_retrieved]


#: the question's words are all in `born`, but `hub` states many facts about the same person, so the
#: walk from her phrase node ranks `hub` first
PEOPLE = _corpus(
    {
        "born": ("Alma Vey was born in Ostrava in 1901.", [("Alma Vey", "born in", "Ostrava")]),
        "hub": (
            "Alma Vey painted, taught and wrote; Alma Vey married Karel; Alma Vey lived in Brno.",
            [
                ("Alma Vey", "painted", "murals"),
                ("Alma Vey", "married", "Karel"),
                ("Alma Vey", "lived in", "Brno"),
                ("Alma Vey", "taught", "drawing"),
                ("Alma Vey", "wrote", "memoirs"),
            ],
        ),
        "hub2": (
            "Alma Vey exhibited in Prague and met Josef.",
            [("Alma Vey", "exhibited in", "Prague"), ("Alma Vey", "met", "Josef")],
        ),
        "note": ("Born in 1901, where?", []),  # close to the question, but no fact: the walk ranks it low
        **{f"x{i}": (f"Unrelated passage {i} about weather.", [(f"weather {i}", "is", "mild")]) for i in range(4)},
    }
)
PEOPLE_Q = "Where was Alma Vey born in 1901?"


def _dense_order(corpus, question) -> list[str]:
    q = corpus.embed([question])[0]
    ids = [c.chunk_id for c in corpus.chunks()]
    vecs = corpus.embed([f"{c.title}\n{c.text}" for c in corpus.chunks()])
    return [ids[j] for j in np.argsort(-(vecs @ q), kind="stable")]


def test_dense_first_opens_the_ranking_with_dense_retrievals_best():
    walk = _run(PEOPLE, PEOPLE_Q)
    assert walk.ranked[0].chunk_id == "hub" and not any(p.dense_first for p in walk.ranked)
    tuned = _run(PEOPLE, PEOPLE_Q, hybrid_facts=True, dense_first=2)
    dense = _dense_order(PEOPLE, PEOPLE_Q)
    assert dense[0] == "born"
    assert [p.chunk_id for p in tuned.ranked[:2]] == dense[:2] and [p.dense_first for p in tuned.ranked[:3]] == [
        True,
        True,
        False,
    ]
    # the rest is the walk's order, each passage once
    rest = [p.chunk_id for p in tuned.ranked[2:]]
    assert len(set(rest)) == len(rest) and not set(rest) & set(dense[:2])
    assert HippoRAG2Settings().dense_first == 2 and HippoRAG2Settings.paper().dense_first == 0


def test_rank_fusion_fuses_the_walk_with_the_dense_order():
    from engine.methods.hipporag2.method import fuse_ranks

    assert fuse_ranks([1, 2, 3], [3, 2, 1], 60) == [1, 3, 2]  # 1/61 + 1/63 > 2/62
    assert fuse_ranks([1, 2, 3, 4], [4, 3, 2, 1], 1) == [1, 4, 2, 3]  # ties keep the first order's
    walk = [p.chunk_id for p in _run(PEOPLE, PEOPLE_Q).ranked]
    fused = [p.chunk_id for p in _run(PEOPLE, PEOPLE_Q, rank_fusion=1).ranked]
    # dense retrieval's best passage, third in the walk, moves up; nothing is lost
    assert _dense_order(PEOPLE, PEOPLE_Q)[0] == "born" == walk[2]
    assert fused.index("born") < 2 and sorted(fused) == sorted(walk)


def test_dense_first_beyond_the_passages_read_is_allowed():
    # the what-if slider may read one passage under `tuned` (dense_first 2): the one read is dense's best
    tr = HippoRAG2(OfflineLikeReasoner()).answer(PEOPLE_Q, PEOPLE, HippoRAG2Settings(qa_top_k=1)).trace
    assert tr.chunk_ids() == ["born"] and tr.ranked[0].dense_first
