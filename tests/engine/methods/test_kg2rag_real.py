"""KG2RAG on a real HotpotQA question in a real corpus (the store, the bundled embedder).

"From 1945-1949 Dick Humbert played for an NFL team based in what state?" needs two paragraphs:
Dick Humbert (he played for the Philadelphia Eagles) and Philadelphia Eagles (based in
Philadelphia, Pennsylvania). The second one is not among the seeds, whose similarity to the
question is low; the entity "Philadelphia Eagles" of the first seed reaches it in one hop.
The triplets below were written by hand from the paragraphs' text and checked against it.
"""

from __future__ import annotations

import json

import pytest

from engine.core.types import ExtractionStatus
from engine.ingest.datasets import read_dataset
from engine.methods.base import result_from_json, result_to_json
from engine.methods.baselines import SemanticRAG, SemanticRAGSettings
from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
from tests._kg2rag_helpers import ScriptedReasoner

QUESTION_ID = "5ae3b0005542992f92d82341"
HAND_TRIPLETS = {
    "Dick Humbert": [
        ("Dick Humbert", "played for", "Philadelphia Eagles"),
        ("Dick Humbert", "born on", "December 31, 1918"),
    ],
    "Philadelphia Eagles": [
        ("Philadelphia Eagles", "based in", "Philadelphia, Pennsylvania"),
        ("The Eagles", "compete in", "National Football League"),
    ],
    "1946 NFL season": [
        ("Bert Bell", "co-founder of", "Philadelphia Eagles"),
        ("Elmer Layden", "resigned as", "NFL Commissioner"),
    ],
    "Dallas Texans (NFL)": [
        ("Dallas Texans", "played in", "National Football League"),
        ("Dallas Texans", "based in", "Hershey, Pennsylvania"),
    ],
    "Kansas City Chiefs": [("Kansas City Chiefs", "based in", "Kansas City, Missouri")],
}


@pytest.fixture(scope="module")
def humbert(tmp_path_factory, embedder, shared_data):
    from engine.store import Workspace

    workspace = Workspace(tmp_path_factory.mktemp("kg2rag_real"), embedder=embedder)
    records = json.loads((shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text("utf-8"))
    (rec,) = [r for r in records if r["_id"] == QUESTION_ID]
    data = read_dataset("hotpotqa_train.json", json.dumps([rec]))
    corpus = workspace.create("humbert")
    corpus.add_documents(data.documents)
    corpus.add_questions(data.questions)
    by_title = {c.title: c.chunk_id for c in corpus.chunks()}
    for title, trips in HAND_TRIPLETS.items():
        corpus.store_extraction(by_title[title], trips, ExtractionStatus(by_title[title], "done", model="hand"))
    corpus.refresh_indexes()
    return corpus, data.questions[0], by_title


def test_the_second_gold_paragraph_is_reached_through_the_graph(humbert):
    corpus, q, by_title = humbert
    eagles, dick = by_title["Philadelphia Eagles"], by_title["Dick Humbert"]
    reasoner = ScriptedReasoner({q.question: "Pennsylvania"})
    res = KG2RAG(reasoner).answer(q.question, corpus, KG2RAGSettings.paper(k=3))
    tr = res.trace
    seeds = [s.chunk_id for s in tr.seeds]
    assert seeds[0] == dick and eagles not in seeds
    (hop,) = tr.hops
    assert "philadelphia eagles" in tr.seed_entities
    assert eagles in [c.chunk_id for c in hop.chunks_added]
    assert "philadelphia pennsylvania" in hop.entities_reached
    # one tree joins Humbert, the Eagles and the 1946 season (Bert Bell co-founded the Eagles);
    # the walk starts at the heaviest edge (Humbert's chunk) and takes heavier branches first: the
    # paper preset weighs the Eagles' chunk by the authors' entity score (Humbert's and the 1946
    # season's similarity, averaged with the seeds' mean), above the 1946 season's own similarity
    tree = tr.trees[0]
    seed_score = {x.chunk_id: x.score for x in tr.seeds}
    avg = sum(seed_score.values()) / len(seed_score)
    want = (seed_score[dick] + seed_score[by_title["1946 NFL season"]] + avg) / 3
    assert hop.chunks_added[0].score == pytest.approx(want)
    assert tree.selected and tree.chunk_ids == [dick, eagles, by_title["1946 NFL season"]]
    assert res.evidence_chunk_ids == tree.chunk_ids
    assert "based in Philadelphia, Pennsylvania" in tr.context
    assert res.answer == "Pennsylvania"

    # semantic RAG with the same number of chunks misses the Eagles paragraph
    sem = SemanticRAG(reasoner).answer(q.question, corpus, SemanticRAGSettings(k=len(res.evidence_chunk_ids)))
    assert eagles not in sem.evidence_chunk_ids

    back = result_from_json(result_to_json(res))
    assert back == res


def test_hop_zero_does_not_reach_it(humbert):
    corpus, q, by_title = humbert
    res = KG2RAG(ScriptedReasoner()).answer(q.question, corpus, KG2RAGSettings.paper(k=3, hops=0))
    assert by_title["Philadelphia Eagles"] not in res.evidence_chunk_ids
