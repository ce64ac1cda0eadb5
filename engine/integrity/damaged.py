"""Reading rows out of a damaged SQLite database: by rowid ranges around bad pages, off the leaf
pages themselves, and from a copy whose header and schema are patched so SQLite opens it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from engine.integrity.findings import RepairReport


def read_rows(con: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple], int]:
    """(columns, readable rows, unreadable rowid ranges): whole table first, else by rowid ranges
    halved around every error, so one bad page costs only the rows on it."""
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})").fetchall()]
    if not cols:
        raise sqlite3.DatabaseError(f"table {table} is gone")
    sel = f"SELECT rowid, {', '.join(cols)} FROM {table}"
    try:
        return cols, con.execute(sel).fetchall(), 0
    except sqlite3.DatabaseError:
        pass
    try:
        top = con.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        top = 1 << 20
    rows: list[tuple] = []
    bad = 0
    stack = [(1, top)]
    budget = 20000  # queries: a table whose root page is gone errors on every range
    while stack:
        lo, hi = stack.pop()
        budget -= 1
        if budget < 0:
            raise sqlite3.DatabaseError(f"{len(rows)} rows read before the table's structure proved unreadable")
        try:
            rows.extend(con.execute(f"{sel} WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchall())
        except sqlite3.DatabaseError:
            if lo == hi:
                bad += 1
            else:
                mid = (lo + hi) // 2
                stack += [(mid + 1, hi), (lo, mid)]
    return cols, sorted(rows), bad


COLUMNS = {
    "meta": ["key", "value"],
    "documents": ["doc_id", "title", "text", "source", "kind", "sentences", "added_at"],
    "chunks": ["rid", "chunk_id", "doc_id", "position", "title", "text", "sent_start", "sent_end", "vec"],
    "triplets": ["tid", "subject", "predicate", "object", "vec"],
    "triplet_sources": ["tid", "chunk_id"],
    "extraction": [
        "chunk_id",
        "status",
        "model",
        "error",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "updated_at",
    ],
    "questions": ["qid", "position", "data"],
}


def _table_of(v: tuple) -> str | None:
    """Which of the corpus's tables a record of this shape belongs to (None: not one of ours)."""
    kinds = tuple(
        "n"
        if x is None
        else "i"
        if isinstance(x, int)
        else "f"
        if isinstance(x, float)
        else "s"
        if isinstance(x, str)
        else "b"
        for x in v
    )
    # chunks and triplets end with their digest since engine/store/digests.py (a blob, or NULL)
    digest = kinds[-1:] in (("b",), ("n",))
    chunk_width = len(v) == 9 or (len(v) == 10 and digest)
    if kinds[:1] == ("n",) and chunk_width and kinds[1:3] == ("s", "s") and kinds[8] == "b":
        return "chunks"
    if len(v) == 9 and kinds[0] == "s" and v[1] in ("pending", "done", "failed"):
        return "extraction"
    if len(v) == 7 and kinds[:5] == ("s",) * 5 and kinds[6] in ("f", "i"):
        return "documents"
    if len(v) in (5, 6) and digest and kinds[0] == "n" and kinds[1:4] == ("s",) * 3 and kinds[4] in ("b", "n"):
        return "triplets"
    return {("i", "s"): "triplet_sources", ("s", "s"): "meta", ("s", "i", "s"): "questions"}.get(kinds)


def scan_pages(copy: Path) -> dict[str, list[tuple]]:
    """Rows of the corpus's tables read off the leaf pages (engine.integrity.pagescan), as `(rowid, *values)`
    with the integer primary key filled from the rowid."""
    from engine.integrity.pagescan import PageFile

    try:
        pages = PageFile(copy)
    except (OSError, ValueError):
        return {}
    out: dict[str, list[tuple]] = {}
    for _, rowid, values in pages.rows():
        table = _table_of(values)
        if table is None:
            continue
        if table in ("chunks", "triplets"):
            values = (rowid,) + values[1:]
        out.setdefault(table, []).append((rowid,) + values)
    return out


def readable_copy(src_path: Path, tmp: Path, report: RepairReport) -> Path:
    """A copy of the damaged database that SQLite can read as far as possible (the original is
    only read): the copy's header gets the file's true page count, and schema entries pointing past
    the end of the file (and every index, rebuilt later) are dropped, so every table whose b-tree
    still stands can be read by rowid ranges. Rows under a lost b-tree page are not recovered (a
    page scan would need SQLite's `.recover`, which Debian's 3.40 shell fails to run)."""
    copy = tmp / "damaged.sqlite"
    shutil.copyfile(src_path / "corpus.sqlite", copy)
    if (src_path / "corpus.sqlite-wal").is_file():
        shutil.copyfile(src_path / "corpus.sqlite-wal", tmp / "damaged.sqlite-wal")
    data = bytearray(copy.read_bytes())
    if len(data) >= 100 and data[:16] == b"SQLite format 3\x00":
        size = int.from_bytes(data[16:18], "big")
        size = 65536 if size == 1 else size
        if size >= 512:
            data[28:32] = (len(data) // size).to_bytes(4, "big")
            copy.write_bytes(bytes(data))
    try:
        con = sqlite3.connect(copy)
        con.execute("PRAGMA writable_schema=ON")
        pages = len(data) // max(int.from_bytes(data[16:18], "big"), 512) if len(data) >= 100 else 0
        con.execute("DELETE FROM sqlite_master WHERE type='index' OR rootpage > ?", (pages,))
        con.commit()
        con.close()
        report.actions.append("read the damaged database table by table, by rowid ranges")
    except sqlite3.DatabaseError:
        pass
    return copy
