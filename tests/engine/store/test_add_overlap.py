"""Adding documents embeds the next batch while the previous one is written: nothing is lost or
reordered by that, progress is reported on the caller's thread (where the app draws it), and a
failure part-way keeps every batch before it (adding the same files again finishes the job)."""

from __future__ import annotations

import threading

import pytest

from engine.core.types import Document
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder


class FailingEmbedder(HashEmbedder):
    """Fails on its `fail_at`-th encode call (a provider error, a killed model server)."""

    def __init__(self, fail_at: int):
        self.calls, self.fail_at = 0, fail_at

    def encode(self, texts, batch_size=64):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("embedding service went away")
        return super().encode(texts, batch_size)


def _docs(n: int) -> list[Document]:
    return [
        Document(f"d{i}", f"Title {i}", f"Paragraph number {i} talks about topic {i}.", "t", "text") for i in range(n)
    ]


def test_every_batch_is_stored_in_order_with_progress_on_the_callers_thread(tmp_path):
    corpus = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("many")
    threads: set[int] = set()
    seen: list[int] = []

    def on_progress(done: int, total: int, label: str) -> None:
        threads.add(threading.get_ident())
        seen.append(done)

    report = corpus.add_documents(_docs(7), on_progress=on_progress, commit_chunks=1)  # 7 commit batches
    assert report.documents_added == 7 and report.chunks_added == 7
    assert [d.doc_id for d in corpus.documents()] == [f"d{i}" for i in range(7)]
    assert threads == {threading.get_ident()}
    assert seen == sorted(seen) and seen[-1] == 7
    hits = corpus.search_chunks(HashEmbedder().encode(["Paragraph number 5 talks about topic 5."]), 1)[0]
    assert corpus.get_chunks([hits[0][0]])[0].doc_id == "d5"  # stored with its own vector


def test_a_failure_part_way_keeps_the_batches_before_it(tmp_path):
    # each batch makes two encode calls (its chunks, then its sentences' vectors): call 7 is the
    # fourth batch's chunks
    ws = Workspace(tmp_path / "ws", embedder=FailingEmbedder(fail_at=7))
    corpus = ws.create("partial")
    with pytest.raises(RuntimeError, match="went away"):
        corpus.add_documents(_docs(6), commit_chunks=1)
    assert [d.doc_id for d in corpus.documents()] == ["d0", "d1", "d2"]  # batches 1-3 committed whole
    corpus.close()

    again = Workspace(tmp_path / "ws", embedder=HashEmbedder()).open("partial")
    report = again.add_documents(_docs(6), commit_chunks=1)
    assert (report.documents_skipped, report.documents_added) == (3, 3)
    assert len(again.documents()) == 6
