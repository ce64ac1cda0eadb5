"""Sentence vectors computed once (issue 30): a corpus stores each chunk's sentence vectors when the
chunk is added, so the offline answer step embeds the question and not the context's sentences,
and answers as it did when it embedded every sentence. A corpus made before them still answers,
embedding what is missing and keeping it; deleting a document drops its sentences' vectors.

Real HotpotQA paragraphs and questions (tests/fixtures/qa, copied from the shared samples)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from engine.core.types import Document
from engine.methods.common import format_context
from engine.reasoners import make_reasoner
from engine.reasoners.offline import OfflineReasoner
from engine.store.util import embedding_text
from engine.vectors.sentences import sentence_key, split_for_answers


class CountingEmbedder:
    """The bundled embedder, noting every text it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.dim, self.spec = inner, inner.dim, getattr(inner, "spec", "bundled")
        self.texts: list[str] = []

    def encode(self, texts, batch_size=64):
        self.texts += list(texts)
        return self.inner.encode(texts, batch_size)


@pytest.fixture(scope="module")
def records(shared_data):
    with open(shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json", encoding="utf-8") as fh:
        return json.load(fh)[:6]


def _corpus(workspace, records, name="sv"):
    corpus = workspace.create(name)
    docs = {
        t: Document(f"d{abs(hash(t)) % 10**8}", t, "".join(s), "hotpotqa") for r in records for t, s in r["context"]
    }
    corpus.add_documents(list(docs.values()))
    return corpus


def _context(corpus, record) -> str:
    titles = {t for t, _ in record["context"]}
    return format_context([c for c in corpus.chunks() if c.title in titles])


def test_the_answer_step_embeds_only_the_question_and_answers_as_before(workspace, embedder, records):
    corpus = _corpus(workspace, records)
    stored = corpus._db.execute("SELECT COUNT(*) FROM sentence_vecs").fetchone()[0]
    assert stored >= len(corpus.chunks())  # every chunk's sentences, at add time
    counting = CountingEmbedder(embedder)
    fast = make_reasoner("", embedder=counting, sentence_vectors=corpus.sentence_vectors)
    slow = OfflineReasoner(embedder)
    for record in records:
        context = _context(corpus, record)
        sentences = set(split_for_answers(context))
        counting.texts.clear()
        assert fast.answer(record["question"], context)[0] == slow.answer(record["question"], context)[0]
        assert not sentences & set(counting.texts), "a context sentence was embedded at question time"
    # the stored vectors are the model's (float16 on disk): same sentence ranking
    sents = split_for_answers(_context(corpus, records[0]))
    got, want = corpus.sentence_vectors(sents), embedder.encode(sents)
    assert np.abs(got - want).max() < 2e-3
    q = embedder.encode([records[0]["question"]])[0]
    assert np.argsort(-(got @ q))[:3].tolist() == np.argsort(-(want @ q))[:3].tolist()


def test_a_corpus_made_before_sentence_vectors_answers_and_keeps_what_it_embeds(workspace, embedder, records):
    corpus = _corpus(workspace, records, "old")
    corpus.close()
    with sqlite3.connect(workspace.root / "old" / "corpus.sqlite") as db:  # as an older build left it
        db.execute("DROP TABLE sentence_vecs")
    # read-only first: answers, writes nothing
    ro = type(workspace)(workspace.root, embedder=embedder, read_only=True).open("old")
    sents = split_for_answers(_context(ro, records[1]))
    assert np.abs(ro.sentence_vectors(sents) - embedder.encode(sents)).max() < 1e-4
    ro.close()
    with sqlite3.connect(workspace.root / "old" / "corpus.sqlite") as db:
        assert not db.execute("SELECT 1 FROM sqlite_master WHERE name='sentence_vecs'").fetchone()
    corpus = workspace.open("old")
    counting = CountingEmbedder(embedder)
    fast = make_reasoner("", embedder=counting, sentence_vectors=corpus.sentence_vectors)
    context = _context(corpus, records[1])
    assert (
        fast.answer(records[1]["question"], context)[0]
        == OfflineReasoner(embedder).answer(records[1]["question"], context)[0]
    )
    counting.texts.clear()  # the second time the sentences are stored: only the question is embedded
    fast.answer(records[1]["question"], context)
    assert not set(split_for_answers(context)) & set(counting.texts)
    assert corpus.check() == []
    # one pass fills the rest
    assert corpus.fill_sentence_vectors() > 0
    assert corpus.fill_sentence_vectors() == 0


def test_deleting_a_document_drops_its_sentence_vectors(workspace, records):
    corpus = _corpus(workspace, records, "del")
    gone = corpus.chunks()[0]
    corpus.delete_document(gone.doc_id)
    kept = {s for c in corpus.chunks() for s in split_for_answers(embedding_text(c))}
    stored = {sentence_key(s) for s in kept} | {sentence_key(s) for s in split_for_answers(embedding_text(gone))}
    rows = {r[0] for r in corpus._db.execute("SELECT key FROM sentence_vecs")}
    assert rows == {sentence_key(s) for s in kept}, "the deleted paragraph's sentences are still stored"
    assert len(stored) > len(rows)


def test_a_corpus_made_without_sentence_vectors_embeds_them_when_asked(workspace, embedder, records):
    from engine.store import CorpusSettings

    corpus = workspace.create("lean", CorpusSettings(sentence_vectors=False))
    corpus.add_documents([Document("d1", records[2]["context"][0][0], "".join(records[2]["context"][0][1]), "t")])
    assert corpus._db.execute("SELECT COUNT(*) FROM sentence_vecs").fetchone()[0] == 0  # indexing skipped them
    sents = split_for_answers(embedding_text(corpus.chunks()[0]))
    assert np.abs(corpus.sentence_vectors(sents) - embedder.encode(sents)).max() < 2e-3
    assert corpus._db.execute("SELECT COUNT(*) FROM sentence_vecs").fetchone()[0] == len(set(sents))
