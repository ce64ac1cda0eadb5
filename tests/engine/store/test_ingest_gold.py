"""Inputs that used to lose their gold: IRCoT-processed files, MuSiQue paragraph indices in a pooled
corpus, title-only contexts, evidence given as text.

Data under tests/fixtures/qa (copied with attribution): HotpotQA (CC BY-SA 4.0), MuSiQue (CC BY 4.0).
"""

from __future__ import annotations

import json

from engine.ingest import load_paths, load_uploads

BIG = 100 * 1024 * 1024


def _musique(shared_data, n=5) -> list[dict]:
    return json.loads((shared_data / "musique_kag_100" / "musique_qa_100.json").read_text())[:n]


def _as_ircot(rec: dict, dataset: str = "musique") -> dict:
    """A MuSiQue record in IRCoT's processed layout (processed_data/<set>/*.jsonl)."""
    return {
        "dataset": dataset,
        "question_id": rec["id"],
        "question_text": rec["question"],
        "level": None,
        "type": None,
        "answers_objects": [{"number": "", "date": {"day": "", "month": "", "year": ""}, "spans": [rec["answer"]]}],
        "contexts": [dict(p) for p in rec["paragraphs"]],
    }


def test_musique_gold_paragraphs_flow_to_the_question_as_their_documents(shared_data):
    recs = _musique(shared_data)
    batch = load_paths([shared_data / "musique_kag_100" / "musique_qa_100.json"], BIG, limit_questions=5)
    docs = {d.doc_id: d for d in batch.documents}
    for rec, q in zip(recs, batch.questions):
        gold = [p for p in rec["paragraphs"] if p["is_supporting"]]
        assert len(q.supporting_docs) == len(gold)
        for doc_id, p in zip(q.supporting_docs, gold):
            assert docs[doc_id].title == p["title"] and docs[doc_id].text == p["paragraph_text"].strip()
        assert q.answerable


def test_ircot_processed_records_are_read_with_answers_paragraphs_and_gold(shared_data, tmp_path):
    recs = _musique(shared_data, 4)
    lines = [_as_ircot(r) for r in recs]
    lines[1]["answers_objects"] = [{"number": "1923", "date": {"day": "", "month": "", "year": ""}, "spans": []}]
    lines[2]["answers_objects"] = [{"number": "", "date": {"day": "4", "month": "July", "year": "1776"}, "spans": []}]
    path = tmp_path / "dev_subsampled.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    batch = load_paths([path], BIG)
    assert batch.errors == []
    assert [q.qid for q in batch.questions] == [r["id"] for r in recs]
    q0 = batch.questions[0]
    assert q0.question == recs[0]["question"] and q0.answer == recs[0]["answer"]
    assert q0.dataset == "musique" and q0.qtype == "2hop"
    assert batch.questions[1].answers == ("1923",) and batch.questions[2].answers == ("4 July 1776",)
    assert len(q0.supporting_docs) == sum(p["is_supporting"] for p in recs[0]["paragraphs"])
    assert len({d.doc_id for d in batch.documents}) == len(
        {(p["title"], p["paragraph_text"]) for r in recs for p in r["paragraphs"]}
    )
    # the same records from MuSiQue's own file give the same documents and gold
    native = load_paths([shared_data / "musique_kag_100" / "musique_qa_100.json"], BIG, limit_questions=4)
    assert {d.doc_id for d in native.documents} == {d.doc_id for d in batch.documents}
    assert [q.supporting_docs for q in native.questions] == [q.supporting_docs for q in batch.questions]


def test_ircot_hotpotqa_and_2wiki_records_keep_title_gold(shared_data):
    rec = json.loads((shared_data / "hoprag_quickstart" / "hotpot_example.jsonl").read_text().splitlines()[0])
    gold = {t for t, _ in rec["supporting_facts"]}
    ircot = {
        "dataset": "2wikimultihopqa",
        "question_id": "w1",
        "question_text": rec["question"],
        "answers_objects": [{"spans": [rec["answer"]]}],
        "contexts": [
            {"idx": i, "title": t, "paragraph_text": "".join(s), "is_supporting": t in gold}
            for i, (t, s) in enumerate(rec["context"])
        ],
    }
    batch = load_uploads([("dev.json", json.dumps([ircot]).encode())])
    q = batch.questions[0]
    assert batch.errors == [] and q.dataset == "2wiki" and q.answer == rec["answer"]
    assert set(q.supporting_titles) == gold and q.supporting_docs == ()  # scored by title, as 2Wiki's script
    assert len(batch.documents) == len(rec["context"])
    # IIRC in IRCoT's layout: the pinned passage the question is asked about joins the documents
    pinned = dict(
        ircot,
        dataset="iirc",
        question_id="i1",
        pinned_contexts=[{"idx": 0, "title": "Main", "paragraph_text": "The main passage."}],
    )
    batch = load_uploads([("iirc.json", json.dumps([pinned]).encode())])
    assert "Main" in {d.title for d in batch.documents} and len(batch.documents) == len(rec["context"]) + 1


def test_title_only_context_keeps_its_gold_and_names_titles_with_no_passage(shared_data, tmp_path):
    recs = json.loads((shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text())[:3]
    corpus = [{"title": t, "text": "".join(s)} for r in recs for t, s in r["context"]]
    questions = [
        {
            "_id": r["_id"],
            "question": r["question"],
            "answer": r["answer"],
            "context": sorted({t for t, _ in r["supporting_facts"]}),
        }
        for r in recs
    ]
    questions[1]["context"] = [[t, []] for t in questions[1]["context"]]  # [[title, []]] form
    questions[2]["context"].append("A Title Nowhere In The Corpus")
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    batch = load_paths([tmp_path / "corpus.json", tmp_path / "questions.json"], BIG)
    for r, q in zip(recs, batch.questions):
        assert {t for t, _ in r["supporting_facts"]} <= set(q.supporting_titles)
    assert len(batch.errors) == 1
    name, msg = batch.errors[0]
    assert name.endswith("questions.json") and "1 of" in msg and "A Title Nowhere In The Corpus" in msg
    # limit_questions keeps the corpus passages the title-only context names
    small = load_paths([tmp_path / "corpus.json", tmp_path / "questions.json"], BIG, limit_questions=1)
    assert {d.title for d in small.documents} == set(questions[0]["context"])


def test_evidence_given_as_text_is_kept_as_spans():
    recs = [
        {"id": "e1", "question": "Who?", "answer": "x", "evidence": "  a quoted span. "},
        {"id": "e2", "question": "Who?", "answer": "x", "evidence": ["one", "two", "one", 3]},
        {
            "id": "e3",
            "query": "-",
            "question": "Who?",
            "answer": "x",
            "evidence_list": [{"fact": "a fact", "title": "T"}],
        },
    ]
    batch = load_uploads([("ev.json", json.dumps(recs).encode())])
    assert [q.evidence for q in batch.questions] == [("a quoted span.",), ("one", "two"), ("a fact",)]
