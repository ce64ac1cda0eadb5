"""Pending extraction work read in pages: bounded memory whatever the corpus size.

`pending_pages(corpus, page)` yields the chunks still waiting for extraction, `page` rows per
query (keyset pagination on the chunk's rowid, so each query is an indexed range read and a page
never repeats or skips a chunk while results are being stored between pages). Chunks added after
the first page are left to the next run, so the count taken at the start stays the run's total.
A corpus object without the SQLite store (a test double) is read through its `pending_chunks()`.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.core.faults import fault_point
from engine.core.types import Chunk

#: chunks per page: a page of texts is a few MB at most
PAGE = 512


def _where(skip_failed: bool) -> str:
    return "e.status NOT IN ('done', 'failed')" if skip_failed else "e.status != 'done'"


def count_pending(corpus, skip_failed: bool = False) -> int:
    """Chunks not extracted yet (without the failed ones when `skip_failed`)."""
    if not hasattr(corpus, "_db"):
        return sum(1 for _ in _fallback(corpus, skip_failed))
    with corpus._lock:
        return corpus._db.execute(f"SELECT COUNT(*) FROM extraction e WHERE {_where(skip_failed)}").fetchone()[0]


def count_failed(corpus) -> int:
    if not hasattr(corpus, "_db"):
        return sum(1 for s in corpus.extraction_statuses().values() if s.status == "failed")
    with corpus._lock:
        return corpus._db.execute("SELECT COUNT(*) FROM extraction WHERE status = 'failed'").fetchone()[0]


def pending_pages(corpus, page: int = PAGE, skip_failed: bool = False) -> Iterator[list[Chunk]]:
    """The pending chunks in insertion order, `page` at a time."""
    if page < 1:
        raise ValueError("page must be at least 1")
    if not hasattr(corpus, "_db"):
        chunks = list(_fallback(corpus, skip_failed))
        for i in range(0, len(chunks), page):
            yield chunks[i : i + page]
        return
    cols = ", ".join("c." + c for c in corpus._CHUNK_COLS.split(", "))
    sql = (
        f"SELECT c.rid, {cols} FROM chunks c JOIN extraction e ON e.chunk_id = c.chunk_id "
        f"WHERE c.rid > ? AND c.rid <= ? AND {_where(skip_failed)} ORDER BY c.rid LIMIT ?"
    )
    with corpus._lock:
        last, top = 0, corpus._db.execute("SELECT COALESCE(MAX(rid), 0) FROM chunks").fetchone()[0]
    while True:
        if last:
            fault_point("pending.next_page")  # a kill here: between two pages of the pending list
        with corpus._lock:
            rows = corpus._db.execute(sql, (last, top, page)).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [Chunk(*r[1:]) for r in rows]


def iter_pending(corpus, page: int = PAGE, skip_failed: bool = False) -> Iterator[Chunk]:
    for part in pending_pages(corpus, page, skip_failed):
        yield from part


def _fallback(corpus, skip_failed: bool) -> Iterator[Chunk]:
    statuses = corpus.extraction_statuses() if skip_failed else {}
    for c in corpus.pending_chunks():
        if getattr(statuses.get(c.chunk_id), "status", "") != "failed":
            yield c
