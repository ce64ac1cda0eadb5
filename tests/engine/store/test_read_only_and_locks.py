"""Read-only workspaces serve questions and change nothing; an extraction run never makes
readers (or adds) in other processes wait."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from engine.core.types import Document
from engine.store import CorpusBusyError, CorpusError, Workspace
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

DOCS = [
    Document(f"d{i}", f"Town{i}", f"Town{i} lies on river R{i}. Person{i} was born in Town{i}.", f"t{i}.txt")
    for i in range(6)
]


def _make(root):
    c = Workspace(root, embedder=HashEmbedder()).create("demo")
    c.add_documents(DOCS)
    c.import_triplets([(ch.chunk_id, f"Person{k}", "born in", f"Town{k}") for k, ch in enumerate(c.chunks())])
    c.close()


def _listing(root):
    """Every file with its bytes' identity (SQLite's own -wal/-shm, which a read-only connection
    to a writable folder may create, hold no content)."""
    return sorted(
        (str(p.relative_to(root)), p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    )


@pytest.mark.parametrize("storage", ["forced", "read-only storage"])
def test_read_only_workspace_answers_and_changes_nothing(tmp_path, monkeypatch, storage):
    root = tmp_path / "ws"
    _make(root)
    (root / "demo" / "chunks.index").unlink()  # would be rebuilt and saved by a writable open
    before = _listing(root)
    if storage == "read-only storage":  # os.access is what tells read-only storage (EROFS) apart
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real(p, mode, **kw))
    ws = Workspace(root, embedder=HashEmbedder(), read_only=(storage == "forced"))
    c = ws.open("demo")
    assert c.read_only
    hits = c.search_chunks(c.embed(["Person3 was born in Town3"]), 2)[0]
    assert len(hits) == 2 and c.search_propositions(c.embed(["born in Town2"]), 1)[0]
    assert len(c.triplets()) == 6 and c.check() == []
    for attempt in (
        lambda: c.add_documents([Document("n", "N", "New text here.", "n.txt")]),
        lambda: c.delete_document("d1"),
        lambda: c.add_questions([]),
    ):
        with pytest.raises(CorpusError, match="read-only"):
            attempt()
    if storage == "forced":
        with pytest.raises(CorpusError, match="read-only"):
            ws.drop("demo")
        with pytest.raises(CorpusError, match="read-only"):
            ws.create("other")
    c.close()
    assert _listing(root) == before


def test_questions_go_on_during_an_extraction_in_another_process(tmp_path):
    root = tmp_path / "ws"
    _make(root)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(REPO)!r})
            from engine.store import Workspace
            from engine.core.types import ExtractionStatus
            from tests._fake_embedder import HashEmbedder
            c = Workspace({str(root)!r}, embedder=HashEmbedder()).open("demo")
            with c.extracting():
                chunk = c.chunks()[0]
                c.store_extraction(chunk.chunk_id, [("Town0", "lies on", "river R0")],
                                   ExtractionStatus(chunk.chunk_id, "done", "m", "", 1, 10, 5, 0.0))
                print("extracting", flush=True)
                time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "extracting", holder.stderr.read()
        c = Workspace(root, embedder=HashEmbedder()).open("demo")
        # the new triplet has no vector yet: this reader embeds it, taking the write lock briefly
        hits = c.search_propositions(c.embed(["Town0 lies on river R0"]), 1)[0]
        assert c.get_triplets([hits[0][0]])[0].predicate == "lies on"
        assert c.add_documents([Document("late", "Late", "Added during the run.", "l.txt")]).documents_added == 1
        with pytest.raises(CorpusBusyError, match="already being extracted"):
            with c.extracting(timeout=0.3):
                pass
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_an_interrupted_add_keeps_its_committed_batches(tmp_path):
    class DiesOnThirdBatch(HashEmbedder):
        calls = 0

        def encode(self, texts, batch_size=64):
            type(self).calls += 1
            if type(self).calls == 5:  # the third batch's chunks (a batch encodes its chunks, then their sentences)
                raise KeyboardInterrupt  # the user stops a long add
            return super().encode(texts, batch_size)

    root = tmp_path / "ws"
    c = Workspace(root, embedder=DiesOnThirdBatch()).create("big")
    docs = [Document(f"d{i:02d}", f"T{i}", f"Sentence number {i} about town {i}.", "x") for i in range(10)]
    with pytest.raises(KeyboardInterrupt):
        c.add_documents(docs, batch_size=1, commit_chunks=3)
    kept = {d.doc_id for d in c.documents()}
    assert kept == {f"d{i:02d}" for i in range(6)}  # two batches of three committed
    c2 = Workspace(root, embedder=HashEmbedder()).open("big")
    report = c2.add_documents(docs, commit_chunks=3)  # the same files again: only the rest
    assert (report.documents_added, report.documents_skipped) == (4, 6)
    assert c2.check() == [] and len(c2.search_chunks(c2.embed(["town"]), 20)[0]) == 10
