"""Gold evidence given as text: spans located in the chunks (tolerant of case, whitespace and
punctuation, across chunk boundaries), retrieval scored against them, unlocated spans reported.

Data under tests/fixtures/qa (copied with attribution): HotpotQA (CC BY-SA 4.0).
"""

from __future__ import annotations

import json

import pytest

from engine.core.chunking import ChunkingSettings
from engine.eval.evidence import locate_evidence, normalize_span
from engine.eval.harness import read_records, run_eval
from engine.eval.metrics import PARAGRAPH, score_question
from engine.ingest.datasets import read_dataset
from engine.methods.base import Result, Usage
from engine.store import CorpusSettings
from tests._eval_helpers import hotpot_records

NOWHERE = "This sentence appears in no passage of the corpus at all."


def _messy(s: str) -> str:
    """The same text as an annotator might quote it: other case, spacing and punctuation."""
    return "  " + s.upper().replace(",", " ").replace(" ", "\n ", 2).rstrip(".") + " ..."


def _evidence_records(n: int) -> tuple[list[dict], dict[str, list[tuple[str, int]]]]:
    recs: list[dict] = []
    facts: dict[str, list[tuple[str, int]]] = {}
    for r in hotpot_records(n):
        sents = {t: s for t, s in r["context"]}
        spans = [_messy(sents[t][i]) for t, i in r["supporting_facts"] if i < len(sents[t])]
        facts[r["_id"]] = [(t, i) for t, i in r["supporting_facts"] if i < len(sents[t])]
        first_t, first_i = r["supporting_facts"][0]
        if first_i + 1 < len(sents[first_t]):  # two sentences in one quote: may cross a chunk boundary
            spans.append(sents[first_t][first_i] + " " + sents[first_t][first_i + 1])
        recs.append(
            {
                "_id": r["_id"],
                "question": r["question"],
                "answer": r["answer"],
                "context": r["context"],
                "evidence": spans + ([NOWHERE] if not recs else []),
            }
        )
    return recs, facts


@pytest.fixture(scope="module")
def corpus_and_facts(tmp_path_factory, embedder):
    from engine.store import Workspace

    recs, facts = _evidence_records(5)
    data = read_dataset("evidence.json", json.dumps(recs))
    assert all(q.evidence and not q.supporting_facts and not q.supporting_titles for q in data.questions)
    ws = Workspace(tmp_path_factory.mktemp("ws"), embedder=embedder)
    corpus, _, _ = ws.create_from(
        "ev", data.documents, data.questions, CorpusSettings(ChunkingSettings(max_words=25))
    )  # several chunks per paragraph
    return corpus, facts


def test_normalize_span_ignores_case_whitespace_and_punctuation():
    assert normalize_span(" The  Beatles,\nformed in\tLiverpool (1960). ") == "the beatles formed in liverpool 1960"
    assert normalize_span("Ａｂｃ—déf") == "abc déf"
    assert normalize_span("...") == ""


def test_spans_are_located_in_the_chunks_holding_their_sentence(corpus_and_facts):
    corpus, facts = corpus_and_facts
    report = locate_evidence(corpus, corpus.questions())
    assert report.n_questions == 5 and report.n_unlocated == 1
    assert report.unlocated_examples[0][1] == NOWHERE
    assert (
        "could not be located" in report.message() and f"{report.n_spans - 1} of {report.n_spans}" in report.message()
    )
    by_title = {}
    for c in corpus.chunks():
        by_title.setdefault(c.title, []).append(c)
    crossing = 0
    for q in corpus.questions():
        gold = report.by_qid[q.qid]
        for (title, i), occ in zip(facts[q.qid], gold.occurrences):
            holding = {c.chunk_id for c in by_title[title] if c.sent_start <= i < c.sent_end}
            assert occ and holding & {cid for o in occ for cid, _, _ in o.chunks}, (q.qid, title, i)
        if len(gold.spans) > len(facts[q.qid]) and gold.spans[len(facts[q.qid])] != NOWHERE:
            two = gold.occurrences[len(facts[q.qid])]
            assert two
            crossing += all(len(o.chunks) > 1 for o in two)
    assert crossing >= 1  # some two-sentence quotes run across a chunk boundary


def test_retrieval_is_scored_on_located_spans(corpus_and_facts):
    corpus, facts = corpus_and_facts
    report = locate_evidence(corpus, corpus.questions())
    for q in corpus.questions():
        gold = report.by_qid[q.qid]
        all_gold = corpus.get_chunks(sorted(gold.gold_chunk_ids))
        m = score_question(q.answer, q, all_gold, k=100, evidence=gold)
        assert m.paragraph.recall == 1.0 and m.paragraph.precision == 1.0 and m.paragraph.n_gold == gold.n_located
        others = [c for c in corpus.chunks() if c.chunk_id not in gold.gold_chunk_ids][:5]
        m = score_question(q.answer, q, others, k=5, evidence=gold)
        assert m.paragraph.recall == 0.0 and m.paragraph.precision == 0.0
        assert score_question(q.answer, q, others).paragraph is None  # without locating: nothing to score


class _FirstGoldChunk:
    """Uses the chunks holding the first evidence span, plus the corpus's first chunk."""

    name = "first"

    def __init__(self, gold):
        self.gold = gold

    def answer(self, question, corpus, settings=None, on_step=None):
        q = next(q for q in corpus.questions() if q.question == question)
        first = next(o for o in self.gold.by_qid[q.qid].occurrences if o)[0]
        ids = [cid for cid, _, _ in first.chunks] + [c.chunk_id for c in corpus.chunks()[:1]]
        return Result("first", question, q.answer, Usage(), ids, "complete", reasoner="fake")


def test_eval_scores_evidence_questions_and_reports_unlocated_spans(corpus_and_facts, tmp_path):
    corpus, _ = corpus_and_facts
    gold = locate_evidence(corpus, corpus.questions())
    summary = run_eval(
        corpus, ["first"], None, out_dir=tmp_path / "run", method_factory=lambda n, r: _FirstGoldChunk(gold)
    )
    avg = summary.methods[0].by_unit[PARAGRAPH]
    assert avg.retrieval_n == 5 and 0.0 < avg.retrieval_recall < 1.0
    assert "could not be located" in summary.evidence and "could not be located" in summary.markdown()
    recs = read_records(tmp_path / "run" / "first.jsonl")
    assert all(r.metrics.paragraph is not None and r.metrics.paragraph.recall > 0 for r in recs.values())
