"""A digest of each stored row's content, so a silent change is named instead of answered from.

SQLite checks its pages, not what they say: a chunk text edited with another tool, or bytes of a
vector flipped on a disk, pass `PRAGMA integrity_check` and change the answers. Each chunk row
(its ids, position, title, text, sentence range and vector), each triplet with its vector (its
three strings and the vector: written when the vector is), and each sentence vector carry a
16-byte BLAKE2b of that content in their `digest` column, written in the same statement as the
row. `corpus check` recomputes them (`digest_problems`) and names the rows that differ.

Rows written before digests existed (and triplets still waiting for their vector) have none and
are not verified. A corpus made before the column gets it at its first writable open.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct

#: table -> the columns a row's digest covers, in order
COVERED = {
    "chunks": ("chunk_id", "doc_id", "position", "title", "text", "sent_start", "sent_end", "vec"),
    "triplets": ("subject", "predicate", "object", "vec"),
    "sentence_vecs": ("key", "vec"),
}
#: table -> how a finding names a row
_NAMED_BY = {"chunks": "chunk_id", "triplets": "tid", "sentence_vecs": "key"}
_WHAT = {"chunks": "chunk", "triplets": "triplet", "sentence_vecs": "sentence vector"}
_LEN = struct.Struct("<q")


def row_digest(*values) -> bytes:
    """16 bytes over the values, each with its type and length (so "ab", "c" differs from "a", "bc")."""
    h = hashlib.blake2b(digest_size=16)
    for v in values:
        if v is None:
            h.update(b"n")
        elif isinstance(v, bytes):
            h.update(b"b" + _LEN.pack(len(v)) + v)
        elif isinstance(v, str):
            raw = v.encode("utf-8")
            h.update(b"s" + _LEN.pack(len(raw)) + raw)
        else:
            raw = repr(v).encode()  # an int (a float would not be stable: none is covered)
            h.update(b"i" + _LEN.pack(len(raw)) + raw)
    return h.digest()


def has_digests(con: sqlite3.Connection, table: str = "chunks") -> bool:
    return any(r[1] == "digest" for r in con.execute(f"PRAGMA table_info({table})"))


def add_digest_columns(con: sqlite3.Connection) -> None:
    """Inside a write transaction: the `digest` column of every covered table that lacks it."""
    for table in COVERED:
        exists = con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
        if exists and not has_digests(con, table):
            con.execute(f"ALTER TABLE {table} ADD COLUMN digest BLOB")


def mismatched(con: sqlite3.Connection, table: str, page: int = 4096):
    """(name, rowid) of each row of `table` whose content no longer matches its digest."""
    if not has_digests(con, table):
        return
    cols = COVERED[table]
    name = _NAMED_BY[table]
    sql = (
        f"SELECT rowid, {name}, digest, {', '.join(cols)} FROM {table} "
        "WHERE digest IS NOT NULL AND rowid > ? ORDER BY rowid LIMIT ?"
    )
    last = -(1 << 63)
    while rows := con.execute(sql, (last, page)).fetchall():
        for rowid, label, digest, *values in rows:
            if row_digest(*values) != digest:
                yield label, rowid
        last = rows[-1][0]


def digest_problems(con: sqlite3.Connection, shown: int = 5) -> list[str]:
    """One line per table whose rows do not match their digests, naming the first of them."""
    out = []
    for table in COVERED:
        bad = list(mismatched(con, table))
        if bad:
            names = ", ".join(repr(b[0]) for b in bad[:shown])
            names += f" and {len(bad) - shown} more" if len(bad) > shown else ""
            out.append(
                f"{len(bad)} {_WHAT[table]} row(s) no longer match their digest (changed outside Triplet Lens, "
                f"or damaged on disk): {_WHAT[table]} {names}"
            )
    return out
