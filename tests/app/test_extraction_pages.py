"""Extraction streams its pending chunks a page at a time: the rows read per query are bounded
by the page size whatever the corpus size (the whole pending list is never loaded), every chunk is
extracted exactly once, and an interrupted run resumes with the rest, as before."""

from __future__ import annotations

import pytest

import engine.triplets.extraction as extraction
from engine.core.types import Document
from engine.llm.base import LLMCall
from engine.store import Workspace, pending
from tests._fake_embedder import HashEmbedder

PAGE = 7


class Counting:
    """A reasoner that extracts one triplet per chunk and records which chunks it saw; it raises
    KeyboardInterrupt (a Ctrl-C) on call number `stop_at`."""

    name = "counting"
    calls_per_extract = 0

    def __init__(self, stop_at: int | None = None):
        self.seen: list[str] = []
        self.stop_at = stop_at

    def extract(self, title, text):
        if self.stop_at is not None and len(self.seen) + 1 == self.stop_at:
            raise KeyboardInterrupt
        self.seen.append(title)
        return [(title, "born in", text.split()[-1].rstrip("."))], LLMCall(job="extract", model="counting")


def _corpus(tmp_path, n):
    c = Workspace(tmp_path / f"ws{n}", embedder=HashEmbedder(), keep_snapshots=0).create("p")
    c.add_documents([Document(f"doc{i}", f"Person{i}", f"Person{i} was born in City{i}.", "t") for i in range(n)])
    return c


def _spy(monkeypatch):
    pages: list[int] = []
    real = pending.pending_pages

    def counted(corpus, page=pending.PAGE, skip_failed=False):
        for part in real(corpus, page, skip_failed):
            pages.append(len(part))
            yield part

    monkeypatch.setattr(pending, "pending_pages", counted)
    return pages


@pytest.mark.parametrize("n", [20, 90])
def test_rows_read_per_page_do_not_grow_with_the_corpus(tmp_path, monkeypatch, n):
    c = _corpus(tmp_path, n)
    pages = _spy(monkeypatch)
    monkeypatch.setattr(type(c), "pending_chunks", lambda self: pytest.fail("the whole pending list was loaded"))
    reasoner = Counting()
    summary = extraction.run_extraction(c, reasoner, concurrency=3, page=PAGE)
    assert summary.chunks_total == n and summary.chunks_done == n
    assert max(pages) == PAGE and sum(pages) == n and len(pages) == -(-n // PAGE)
    assert sorted(reasoner.seen) == sorted(f"Person{i}" for i in range(n))  # each once
    assert c.counts().pending == 0 and len(c.triplets()) == n


def test_an_interrupted_paged_run_resumes_with_the_rest(tmp_path, monkeypatch):
    n = 30
    c = _corpus(tmp_path, n)
    first = Counting(stop_at=12)
    with pytest.raises(KeyboardInterrupt):
        extraction.run_extraction(c, first, concurrency=1, page=PAGE)
    done = set(first.seen)
    assert len(done) == 11 and c.counts().pending == n - 11
    pages = _spy(monkeypatch)
    second = Counting()
    summary = extraction.run_extraction(c, second, concurrency=2, page=PAGE)
    assert summary.chunks_total == n - 11 and set(second.seen).isdisjoint(done)
    assert len(second.seen) == n - 11 and max(pages) <= PAGE
    assert c.counts().pending == 0


def test_failed_chunks_are_skipped_in_sql_when_not_retried(tmp_path, monkeypatch):
    c = _corpus(tmp_path, 15)
    for i in (2, 9):
        c.mark_extraction_failed(c.pending_chunks()[0 if i == 2 else 7].chunk_id, "boom", "m")
    monkeypatch.setattr(type(c), "extraction_statuses", lambda self: pytest.fail("every status was loaded"))
    summary = extraction.run_extraction(c, Counting(), page=4, retry_failed=False)
    assert summary.chunks_total == 13 and summary.chunks_skipped == 2 and summary.chunks_done == 13
    assert pending.count_pending(c) == 2 and pending.count_pending(c, skip_failed=True) == 0


def test_the_estimate_streams_the_pending_chunks(tmp_path):
    c = _corpus(tmp_path, 25)
    est = extraction.estimate_extraction(pending.iter_pending(c, page=4), "")
    assert est.chunks == 25
    est = extraction.estimate_extraction(pending.iter_pending(c, page=4), "gpt-4o-mini")
    assert est.chunks == 25 and est.calls == 25 and est.prompt_tokens > 25 * 10
