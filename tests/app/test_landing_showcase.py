"""The landing card's showcase (components/shell/landing.py): the questions it offers tell the story they
promise. Checked as properties on the showcase questions' own HotpotQA paragraphs (copied from the
bundled sample_corpora/hotpotqa_30.json into a temp corpus, extracted offline), not as answers, so
a better offline reasoner does not break it: on the first ("Start here") question the two methods
reach different verdicts and T2RAG runs at least two rounds."""

from __future__ import annotations

import json

import pytest

from tests._app_helpers import SAMPLE

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def showcase_corpus(tmp_path_factory, embedder):
    from components.shell.landing import SHOWCASE
    from engine.ingest import load_paths
    from engine.reasoners import make_reasoner
    from engine.store import Workspace
    from engine.triplets.extraction import run_extraction

    root = tmp_path_factory.mktemp("showcase")
    ids = {s.qid for s in SHOWCASE}
    rows = [r for r in json.loads(SAMPLE.read_text(encoding="utf-8")) if r["_id"] in ids]
    assert len(rows) == len(ids), "every showcase question is in the bundled sample"
    path = root / "showcase.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    corpus = Workspace(root / "ws", embedder=embedder).create("hotpotqa-sample")
    batch = load_paths([path])
    corpus.add_documents(batch.documents)
    corpus.add_questions(batch.questions)
    run_extraction(corpus, make_reasoner("", embedder=corpus.embedder))
    corpus.refresh_indexes()
    yield corpus
    corpus.close()


def _compare(corpus, qid: str):
    from engine.methods import build_method
    from engine.reasoners import make_reasoner
    from engine.verdict import chunk_ids_of, compare_verdict, gold_spec

    q = next(q for q in corpus.questions() if q.qid == qid)
    reasoner = make_reasoner("", embedder=corpus.embedder)
    results = [build_method(m, reasoner).answer(q.question, corpus) for m in ("t2rag", "kg2rag")]
    return results, compare_verdict(results, gold_spec(corpus, q, chunk_ids_of(results)))


def test_the_start_here_question_shows_the_methods_differ_and_t2rag_needs_two_rounds(showcase_corpus):
    from components.shell.landing import SHOWCASE

    (t2, kg), v = _compare(showcase_corpus, SHOWCASE[0].qid)
    assert len(t2.trace.rounds) >= 2, t2.trace.stop_reason
    outcomes = {m.method: m.outcome for m in v.methods}
    assert outcomes["t2rag"] != outcomes["kg2rag"], v.headline
    # the strip's story is there to read: gold paragraphs named per method
    assert all(m.gold and "gold" not in m.title for m in v.methods)


def test_every_showcase_question_is_offered_on_the_sample_corpus(showcase_corpus):
    from components.shell.landing import SHOWCASE, showcase_for

    offered = showcase_for(showcase_corpus)
    assert [q.qid for q, _ in offered] == [s.qid for s in SHOWCASE]
    assert all(q.answers and story for q, story in offered)
