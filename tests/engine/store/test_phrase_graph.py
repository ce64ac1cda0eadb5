"""HippoRAG 2's phrase graph kept with the corpus (engine/store/phrase_graph.py): stored after an
import, read back by a new process without embedding a phrase, updated when documents come and go
(only new phrases embedded, the result the same as a build from scratch), built on first use for a
corpus from before the tables (with progress), computed in memory on a read-only corpus, and
checked by `corpus check`."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.chunking import make_doc_id
from engine.core.phrases import synonym_pairs, text_processing
from engine.core.types import Document

DOCS = {
    "Kris Kristofferson": "Kris Kristofferson is a singer. His child is Tracy Kristofferson.",
    "The Beatles": "The Beatles formed in Liverpool. John Lennon was a member. Lennon was born in Liverpool, England.",
    "Obama": "Barack Obama visited New York City. President Barack Obama was born in Honolulu.",
}
TRIPLETS = {
    "Kris Kristofferson": [
        ("Kris Kristofferson", "child", "Tracy Kristofferson"),
        ("Me and Bobby McGee", "performer", "Kristofferson"),
    ],
    "The Beatles": [
        ("The Beatles", "formed in", "Liverpool"),
        ("John Lennon", "member of", "Beatles"),
        ("Lennon", "born in", "Liverpool, England"),
    ],
    "Obama": [
        ("Barack Obama", "visited", "New York City"),
        ("President Barack Obama", "born in", "Honolulu"),
        ("Lennon", "died in", "New York"),
    ],
}


class CountingEmbedder:
    """The bundled embedder, counting the texts it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.spec, self.dim, self.texts = inner, inner.spec, inner.dim, []

    def encode(self, texts):
        self.texts.extend(texts)
        return self.inner.encode(texts)


def _add(corpus, titles, *, refresh=True) -> None:
    corpus.add_documents([Document(make_doc_id(t, DOCS[t]), t, DOCS[t], "test", "text") for t in titles])
    by_title = {c.title: c.chunk_id for c in corpus.chunks()}
    rows = [(by_title[t], s, p, o) for t in titles for s, p, o in TRIPLETS[t]]
    corpus.import_triplets(rows, refresh=refresh)


def _reference(embedder, titles) -> tuple[tuple[str, ...], dict[tuple[str, str], float]]:
    """The graph built from scratch, as the authors' code does, for the triplets of `titles`."""
    phrases = sorted({text_processing(x) for t in titles for s, _, o in TRIPLETS[t] for x in (s, o)})
    return tuple(phrases), {(a, b): s for a, b, s in synonym_pairs(phrases, embedder.encode(phrases))}


def _same(graph, reference) -> None:
    phrases, edges = reference
    assert graph.phrases == phrases
    got = {(a, b): s for a, b, s in graph.synonyms}
    assert set(got) == set(edges)
    assert all(got[k] == pytest.approx(edges[k], abs=1e-5) for k in edges)


@pytest.fixture()
def ws(tmp_path, embedder):
    from engine.store import Workspace

    counting = CountingEmbedder(embedder)
    return Workspace(tmp_path / "ws", embedder=counting), counting


def test_an_import_stores_the_graph_and_a_new_process_reads_it_without_embedding(ws, embedder, tmp_path):
    from engine.store import Workspace

    workspace, _ = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson", "The Beatles"])
    n = corpus._db.execute("SELECT COUNT(*) FROM hippo_phrases").fetchone()[0]
    assert n == len(_reference(embedder, ["Kris Kristofferson", "The Beatles"])[0])
    corpus.close()
    fresh = CountingEmbedder(embedder)
    again = Workspace(tmp_path / "ws", embedder=fresh).open("c")
    graph = again.phrase_graph()
    assert graph.how == "stored" and fresh.texts == []
    _same(graph, _reference(embedder, ["Kris Kristofferson", "The Beatles"]))
    assert ("the beatles", "beatles") in {(a, b) for a, b, _ in graph.synonyms}  # a synonym edge kept


def test_added_and_deleted_documents_update_only_what_they_touch_and_match_a_build_from_scratch(ws, embedder):
    workspace, counting = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson", "The Beatles"])
    before = set(corpus.phrase_graph().phrases)
    counting.texts.clear()
    _add(corpus, ["Obama"])
    graph = corpus.phrase_graph()
    new = set(graph.phrases) - before
    # the added document's chunk and sentences, its propositions, and only the phrases that are new
    embedded = set(counting.texts)
    assert new <= embedded and not (before & embedded)
    assert "new york" in new and ("new york city", "new york") in {(a, b) for a, b, _ in graph.synonyms}
    _same(graph, _reference(embedder, ["Kris Kristofferson", "The Beatles", "Obama"]))
    counting.texts.clear()
    beatles = next(d.doc_id for d in corpus.documents() if d.title == "The Beatles")
    corpus.delete_document(beatles)
    graph = corpus.phrase_graph()
    assert counting.texts == []  # a delete embeds nothing
    assert "the beatles" not in graph.phrases and "lennon" in graph.phrases  # Lennon is still stated by Obama's
    _same(graph, _reference(embedder, ["Kris Kristofferson", "Obama"]))
    assert corpus.check() == []


def test_a_corpus_made_before_the_graph_builds_it_on_first_use_and_says_so(ws, embedder):
    workspace, _ = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson", "The Beatles"], refresh=False)  # as a corpus from an older build
    assert not corpus._phrase_tables()
    heard = []
    graph = corpus.phrase_graph(on_progress=lambda done, total, label: heard.append((done, total, label)))
    labels = {label for _, _, label in heard}
    assert {"HippoRAG 2 graph: embedding phrases", "HippoRAG 2 graph: synonym edges"} <= labels
    assert heard[-1][0] == heard[-1][1]  # the last report is the finished step
    assert graph.how.startswith("updated:") and corpus._phrase_tables()
    _same(graph, _reference(embedder, ["Kris Kristofferson", "The Beatles"]))
    assert corpus.phrase_graph().how == "stored"


def test_a_read_only_corpus_computes_a_stale_graph_in_memory_and_writes_nothing(ws, embedder, tmp_path):
    from engine.store import Workspace

    workspace, _ = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson"], refresh=False)
    corpus.close()
    ro = Workspace(tmp_path / "ws", embedder=embedder, read_only=True).open("c")
    graph = ro.phrase_graph()
    assert graph.how.startswith("computed in memory") and not ro._phrase_tables()
    _same(graph, _reference(embedder, ["Kris Kristofferson"]))


def test_other_synonym_settings_come_from_the_stored_phrase_vectors(ws, embedder):
    workspace, counting = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson", "The Beatles", "Obama"])
    counting.texts.clear()
    strict = corpus.phrase_graph(threshold=0.95)
    assert counting.texts == [] and strict.threshold == 0.95
    assert {(a, b) for a, b, _ in strict.synonyms} < {(a, b) for a, b, _ in corpus.phrase_graph().synonyms}
    assert all(s >= 0.95 for _, _, s in strict.synonyms)
    assert corpus.phrase_graph(threshold=0.95) is strict  # the next question's: not computed again


def test_corpus_check_names_a_damaged_graph(ws):
    workspace, _ = ws
    corpus = workspace.create("c")
    _add(corpus, ["The Beatles"])
    assert corpus.check() == []
    with corpus._write():
        corpus._db.execute("INSERT INTO hippo_synonyms(a, b, score) VALUES (99999, 1, 0.9)")
        corpus._db.execute("UPDATE hippo_phrases SET vec = ? WHERE pid = (SELECT MIN(pid) FROM hippo_phrases)", (b"x",))
    problems = corpus.check()
    assert any("synonym edges name missing phrases" in p for p in problems)
    assert any("phrase vectors are not" in p for p in problems)


def test_a_synonym_row_depends_only_on_the_phrases_and_their_vectors():
    """Why an update may recompute only the rows a change touches: a row is a function of the set."""
    from engine.core.phrases import synonym_row

    phrases = ["a phrase", "another", "b"]
    vecs = np.eye(3, dtype=np.float32)
    vecs[1] = vecs[0]  # "another" is "a phrase"'s synonym (cosine 1)
    assert synonym_row(0, vecs @ vecs[0], phrases, 2047, 0.8) == [(1, 1.0)]
    assert synonym_row(2, vecs @ vecs[2], phrases, 2047, 0.8) == []  # two alphanumerics or fewer: no row


def test_a_question_while_another_writer_holds_the_corpus_answers_from_memory_and_a_refresh_stores_it(
    ws, embedder, tmp_path
):
    """A long extraction in another process holds the write lock for its whole run: a question does
    not wait for it (nor fail); the graph it computed serves this corpus state, and is stored later."""
    import time

    from engine.store import Workspace

    workspace, _ = ws
    corpus = workspace.create("c")
    _add(corpus, ["Kris Kristofferson", "The Beatles"], refresh=False)
    corpus.load_indexes()  # what a refresh did before the graph was kept: vectors and index files
    writer = Workspace(tmp_path / "ws", embedder=embedder).open("c")  # its own lock file handle
    with writer.writing():
        t0 = time.monotonic()
        graph = corpus.phrase_graph()
        assert time.monotonic() - t0 < 25  # not the 30 s a write waits for the lock
    assert graph.how.startswith("computed in memory (the corpus is busy") and not corpus._phrase_tables()
    _same(graph, _reference(embedder, ["Kris Kristofferson", "The Beatles"]))
    assert corpus.phrase_graph() is graph  # the same state: not computed again
    corpus.refresh_indexes()
    assert corpus._phrase_tables() and corpus.phrase_graph().how == "stored"
    _same(corpus.phrase_graph(), _reference(embedder, ["Kris Kristofferson", "The Beatles"]))
