"""MuSiQue gold paragraphs (scored by paragraph, not title) survive what the engine does to a
corpus: a pooled corpus file next to the questions, and the renamed copy the shuffle probe builds.

Data under tests/fixtures/qa (copied with attribution): MuSiQue (CC BY 4.0).
"""

from __future__ import annotations

import json

from engine.eval.metrics import PARAGRAPH, score_retrieval
from engine.eval.shuffle import shuffle_corpus
from engine.ingest import load_paths

BIG = 100 * 1024 * 1024


def _gold_chunks(corpus, q):
    return [c for d in q.supporting_docs for c in corpus.chunks(d)]


def test_idx_scoring_in_a_pooled_corpus_and_its_shuffled_copy(workspace, shared_data, tmp_path):
    recs = json.loads((shared_data / "musique_kag_100" / "musique_qa_100.json").read_text())[:3]
    corpus_file = tmp_path / "corpus.json"  # HippoRAG layout: passages apart from the questions
    corpus_file.write_text(
        json.dumps([{"title": p["title"], "text": p["paragraph_text"]} for r in recs for p in r["paragraphs"]])
    )
    q_file = tmp_path / "musique.json"
    q_file.write_text(json.dumps(recs))
    batch = load_paths([corpus_file, q_file], BIG)
    corpus, _, _ = workspace.create_from("mq", batch.documents, batch.questions)
    stored = {d.doc_id for d in corpus.documents()}
    for q in corpus.questions():
        assert q.supporting_docs and set(q.supporting_docs) <= stored  # every gold paragraph is a stored passage
        m = score_retrieval(_gold_chunks(corpus, q), q, PARAGRAPH, k=5)
        assert (m.recall, m.precision, m.em) == (1.0, 1.0, 1.0)

    copy, _ = shuffle_corpus(workspace, corpus, "musique-shuffled", seed=3)
    renamed = {d.doc_id for d in copy.documents()}
    assert renamed != stored
    for q in copy.questions():
        assert q.supporting_docs and set(q.supporting_docs) <= renamed
        m = score_retrieval(_gold_chunks(copy, q), q, PARAGRAPH, k=5)
        assert (m.recall, m.precision, m.em) == (1.0, 1.0, 1.0)
