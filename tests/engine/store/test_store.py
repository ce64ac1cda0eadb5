"""The corpus store: persistence, search, add/delete, triplet sources, index crash safety, names, locks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from engine.core.chunking import ChunkingSettings
from engine.core.types import Document, ExtractionStatus, Question
from engine.store import CorpusBusyError, CorpusError, CorpusSettings, Workspace


class CountingEmbedder:
    """Wraps the bundled embedder and counts texts encoded: a reopen must encode nothing."""

    def __init__(self, inner):
        self.inner, self.spec, self.dim, self.encoded = inner, inner.spec, inner.dim, 0

    def encode(self, texts, batch_size=64):
        self.encoded += len(texts)
        return self.inner.encode(texts, batch_size)


DOCS = [
    Document(
        "d-beatles",
        "The Beatles",
        "The Beatles were an English rock band formed in Liverpool in 1960. "
        "The band consisted of John Lennon, Paul McCartney, George Harrison and Ringo Starr.",
        "t.txt",
    ),
    Document("d-lennon", "John Lennon", "John Lennon was born in Liverpool. He co-founded the Beatles.", "t.txt"),
    Document("d-paris", "Paris", "Paris is the capital of France. The Eiffel Tower stands in Paris.", "t.txt"),
]


@pytest.fixture()
def counting(embedder):
    return CountingEmbedder(embedder)


@pytest.fixture()
def corpus(tmp_path, counting):
    ws = Workspace(tmp_path / "ws", embedder=counting)
    c = ws.create("demo")
    c.add_documents(DOCS)
    return c


def _extract(corpus, chunk_id, triplets):
    corpus.store_extraction(chunk_id, triplets, ExtractionStatus(chunk_id, "done", model="test"))


def test_add_search_and_counts(corpus):
    counts = corpus.counts()
    assert (counts.documents, counts.pending, counts.extracted) == (3, counts.chunks, 0)
    hits = corpus.search_chunks(corpus.embed(["What is the capital of France?"]), 2)[0]
    assert corpus.get_chunks([hits[0][0]])[0].doc_id == "d-paris"
    assert hits[0][1] > hits[1][1]


def test_same_document_twice_is_skipped(corpus):
    report = corpus.add_documents([DOCS[0]])
    assert (report.documents_added, report.documents_skipped) == (0, 1)
    assert corpus.counts().documents == 3


def test_proposition_from_two_chunks_maps_to_both(corpus):
    beatles = corpus.chunks("d-beatles")[0].chunk_id
    lennon = corpus.chunks("d-lennon")[0].chunk_id
    _extract(corpus, beatles, [("John Lennon", "member of", "The Beatles"), ("The Beatles", "formed in", "Liverpool")])
    _extract(corpus, lennon, [("John Lennon", "member of", "The Beatles"), ("John Lennon", "born in", "Liverpool")])
    shared = [t for t in corpus.triplets() if t.predicate == "member of"]
    assert len(shared) == 1 and set(shared[0].chunk_ids) == {beatles, lennon}
    hits = corpus.search_propositions(corpus.embed(["Lennon member of band"]), 1)[0]
    assert corpus.get_triplets([hits[0][0]])[0].chunk_ids == shared[0].chunk_ids
    graph = corpus.entity_graph()
    assert graph.has_edge("john lennon", "beatles") and graph.nodes["liverpool"]["label"] == "Liverpool"


def test_reopen_costs_no_embedding(tmp_path, counting):
    ws = Workspace(tmp_path / "ws", embedder=counting)
    c = ws.create("demo")
    c.add_documents(DOCS)
    _extract(c, c.chunks()[0].chunk_id, [("The Beatles", "formed in", "Liverpool")])
    c.refresh_indexes()
    c.close()
    before = counting.encoded
    reopened = Workspace(tmp_path / "ws", embedder=counting).open("demo")
    q = np.asarray(counting.inner.encode(["Liverpool band"]))  # the query itself, encoded outside the count
    assert reopened.search_chunks(q, 3) and reopened.search_propositions(q, 1)
    assert counting.encoded == before
    assert reopened.counts().triplets == 1 and reopened.check() == []


def test_delete_document_leaves_nothing_behind(corpus):
    beatles = corpus.chunks("d-beatles")[0].chunk_id
    lennon = corpus.chunks("d-lennon")[0].chunk_id
    _extract(corpus, beatles, [("John Lennon", "member of", "The Beatles"), ("The Beatles", "formed in", "Liverpool")])
    _extract(corpus, lennon, [("John Lennon", "member of", "The Beatles")])
    corpus.delete_document("d-beatles")
    assert not corpus.chunks("d-beatles") and corpus.get_document("d-beatles") is None
    triplets = corpus.triplets()
    # the shared triplet survives with its other source; the Beatles-only one is gone
    assert [(t.predicate, t.chunk_ids) for t in triplets] == [("member of", (lennon,))]
    hits = corpus.search_chunks(corpus.embed(["English rock band formed in Liverpool"]), 10)[0]
    assert all(not cid.startswith("d-beatles") for cid, _ in hits)
    assert len(hits) == corpus.counts().chunks
    assert corpus.check() == []
    with pytest.raises(CorpusError, match="no document"):
        corpus.delete_document("d-beatles")


def test_stale_or_broken_index_is_rebuilt_without_embedding(tmp_path, counting):
    ws = Workspace(tmp_path / "ws", embedder=counting)
    c = ws.create("demo")
    c.add_documents(DOCS)
    path = c.path / "chunks.index"
    good = path.read_bytes()
    c.add_documents([Document("d-x", "X", "Rome is the capital of Italy.", "x.txt")])
    c.close()
    path.write_bytes(good)  # as if the process died after the commit, before the index save
    before = counting.encoded
    c2 = Workspace(tmp_path / "ws", embedder=counting).open("demo")
    assert c2.check() == []
    assert len(c2.search_chunks(np.asarray(counting.inner.encode(["Italy"])), 10)[0]) == c2.counts().chunks
    c2.close()
    path.write_bytes(good[: len(good) // 2])  # torn file
    c3 = Workspace(tmp_path / "ws", embedder=counting).open("demo")
    assert c3.check() == [] and counting.encoded == before


def test_index_save_is_atomic(tmp_path, corpus, monkeypatch):
    path = corpus.path / "chunks.index"
    before = path.read_bytes()
    import os

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        corpus.add_documents([Document("d-y", "Y", "Berlin is the capital of Germany.", "y.txt")])
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert not [p for p in corpus.path.iterdir() if p.name.endswith(".tmp")]


def test_questions_round_trip(corpus):
    q = Question(
        "q1",
        "Where was John Lennon born?",
        ("Liverpool", "Liverpool, England"),
        "bridge",
        (("John Lennon", 0),),
        ("John Lennon",),
        "test",
    )
    assert corpus.add_questions([q, q]) == 1
    assert corpus.questions() == [q] and corpus.get_question("q1") == q


@pytest.mark.parametrize("name", ["../evil", "/etc", "a/b", "", ".hidden", "x" * 65, "na me", "..", "a..b"])
def test_corpus_names_cannot_escape(tmp_path, name):
    ws = Workspace(tmp_path / "ws")
    with pytest.raises(CorpusError, match="invalid corpus name"):
        ws.create(name)
    assert list((tmp_path / "ws").iterdir()) == []


def test_open_unknown_and_drop(tmp_path, corpus):
    ws = Workspace(corpus.path.parent)
    with pytest.raises(CorpusError, match="no corpus named 'nope'.*demo"):
        ws.open("nope")
    ws.drop("demo")
    assert ws.list() == []


def test_sentence_chunking_setting_is_stored(tmp_path, counting):
    ws = Workspace(tmp_path / "ws", embedder=counting)
    ws.create("sents", CorpusSettings(chunking=ChunkingSettings(mode="sentence"))).add_documents(DOCS[:1])
    c = Workspace(tmp_path / "ws", embedder=counting).open("sents")
    assert c.settings.chunking.mode == "sentence"
    assert [ch.text.startswith("The Beatles: ") for ch in c.chunks()] == [True, True]


def test_second_writer_is_told_corpus_is_busy(corpus):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import fcntl, sys, time
        fh = open({str(corpus.path / "write.lock")!r}, 'a+')
        fcntl.flock(fh, fcntl.LOCK_EX)
        print('locked', flush=True)
        time.sleep(30)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(CorpusBusyError, match="busy"):
            with corpus.writing(timeout=0.3):
                pass
    finally:
        holder.kill()
        holder.wait()
    # the lock is free again once the other process is gone
    report = corpus.add_documents([Document("d-z", "Z", "Madrid is the capital of Spain.", "z.txt")])
    assert report.documents_added == 1
