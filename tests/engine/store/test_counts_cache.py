"""`Corpus.counts()` is asked per question by the methods: it is cached until the database
changes, by this connection or another process's, and never stale."""

from __future__ import annotations

from engine.core.types import Document, Question
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder


def _docs(n, start=0):
    return [Document(f"d{i}", f"T{i}", f"Person{i} was born in City{i}.", "t") for i in range(start, start + n)]


def test_counts_are_cached_until_any_write(tmp_path):
    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).create("c")
    c.add_documents(_docs(5))
    first = c.counts()
    statements = []
    c._db.set_trace_callback(statements.append)
    assert c.counts() is first and not [s for s in statements if "COUNT" in s]  # cached: no scan
    c._db.set_trace_callback(None)
    c.add_questions([Question("q1", "Where?", ("City1",))])
    assert c.counts().questions == 1
    other = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("c")  # another connection writes
    other.add_documents(_docs(2, start=10))
    other.close()
    assert c.counts().documents == 7 and c.counts().chunks == 7
    chunk = c._db.execute("SELECT chunk_id FROM chunks LIMIT 1").fetchone()[0]
    c.mark_extraction_failed(chunk, "boom", "m")
    assert c.counts().failed == 1
    c.delete_document("d0")
    assert c.counts().documents == 6
