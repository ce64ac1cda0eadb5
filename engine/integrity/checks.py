"""`corpus check`: find every damage of a corpus folder without stopping at the first.

The database and each index file are opened on their own, so an unreadable part never hides the
damage of another."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from engine.integrity.findings import INDEXES, Finding
from engine.store.digests import digest_problems
from engine.vectors import FaissVectorStore, IndexFileError


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path / "corpus.sqlite", timeout=30.0)


def inspect_database(path: Path) -> tuple[list[Finding], sqlite3.Connection | None]:
    """Findings about `corpus.sqlite`, and an open connection when it is healthy enough to read."""
    db = path / "corpus.sqlite"
    part = "corpus.sqlite"
    if not db.is_file():
        return [Finding(part, "missing (or not a file)", False)], None
    try:
        con = _connect(path)
        result = [r[0] for r in con.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        return [Finding(part, f"unreadable: {exc}", False)], None
    findings = []
    if result != ["ok"]:
        first = "; ".join(result[:3]) + (f" (+{len(result) - 3} more)" if len(result) > 3 else "")
        findings.append(Finding(part, f"damaged: {first}", False))
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        for key in ("schema_version", "settings", "chunk_gen", "prop_gen"):
            if key not in meta:
                findings.append(Finding(part, f"meta has no {key!r}", False))
        q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        for n_sql, what in (
            (
                "SELECT COUNT(*) FROM triplet_sources WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)",
                "triplet source links point at missing chunks",
            ),
            (
                "SELECT COUNT(*) FROM triplets WHERE tid NOT IN (SELECT tid FROM triplet_sources)",
                "triplets have no source chunk",
            ),
            (
                "SELECT COUNT(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)",
                "chunks belong to missing documents",
            ),
        ):
            if n := q(n_sql):
                findings.append(Finding(part, f"{n} {what}", False))
        # each row against the digest written with it: a text or vector changed in place is named
        findings += [Finding(part, line, False) for line in digest_problems(con)]
    except sqlite3.DatabaseError as exc:
        findings.append(Finding(part, f"cannot read its tables: {exc}", False))
    if any(not f.derived for f in findings):
        con.close()
        return findings, None
    return findings, con


def _has_rows(con: sqlite3.Connection, which: str) -> bool:
    return con.execute(INDEXES[which][2] + " LIMIT 1").fetchone() is not None


def _expected_stamp(con: sqlite3.Connection, which: str) -> str:
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    token = json.loads(meta["corpus_token"]) if "corpus_token" in meta else "legacy"
    return f"{token}/{which}/{json.loads(meta[INDEXES[which][1]])}"


def inspect_index(path: Path, which: str, con: sqlite3.Connection | None) -> list[Finding]:
    fname, _, sql = INDEXES[which]
    file = path / fname
    if file.is_dir():
        return [Finding(fname, "a directory stands where the index file should be", True)]
    if not file.exists():
        if con is not None and not _has_rows(con, which):
            return []  # nothing to index yet: the file is written with the first vector
        return [Finding(fname, "missing (rebuilt from the database when the corpus opens)", True)]
    rows: dict[Any, Any] = dict(con.execute(sql).fetchall()) if con is not None else {}
    dim = len(next(iter(rows.values()))) // 4 if rows else None
    try:
        store, stamp = FaissVectorStore.load(file, dim, None, full_check=True)  # every byte, not samples
    except IndexFileError as exc:
        return [Finding(fname, str(exc).replace(str(file), "the file"), True)]
    if con is None:
        return []
    expected = _expected_stamp(con, which)
    if stamp != expected:
        token, _, rest = stamp.partition("/")
        if token != expected.split("/")[0]:
            why = "belongs to another corpus"
        elif rest.split("/")[0] != which:
            why = f"is the {rest.split('/')[0]} index (files swapped)"
        else:
            why = (
                "was built from another state of the database (the database was restored, copied back or lost "
                "its last writes)"
            )
            ahead = set(store.ids().tolist()) - set(rows)
            if ahead:
                why += f"; it holds {len(ahead)} vectors of rows the database does not have (writes lost)"
        return [Finding(fname, f"stale: {why}; it is rebuilt from the database, never searched", True)]
    ids, vecs = store.vectors()
    have = set(ids.tolist())
    if have != set(rows):
        return [Finding(fname, f"holds {len(have)} vectors for {len(rows)} rows", True)]
    differ = sum(
        1 for i, v in zip(ids.tolist(), vecs) if not np.allclose(v, np.frombuffer(rows[i], np.float32), atol=1e-5)
    )
    return [Finding(fname, f"{differ} vectors differ from the database's", True)] if differ else []


def inspect(path: Path | str) -> list[Finding]:
    """Every damage of the corpus folder at `path` (empty list = healthy)."""
    path = Path(path)
    findings, con = inspect_database(path)
    try:
        backend = (
            json.loads(dict(con.execute("SELECT key, value FROM meta").fetchall())["settings"]).get("vectors", "")
            if con is not None
            else ""
        )
        for which in INDEXES:
            findings += inspect_milvus(path, which, con) if backend and con else inspect_index(path, which, con)
    finally:
        if con is not None:
            con.close()
    return findings


def inspect_milvus(path: Path, which: str, con: sqlite3.Connection) -> list[Finding]:
    """A Milvus-backed corpus: the sidecar stamp must be this database state's (the collection's
    contents are compared with the database by `Corpus.check`, which connects to Milvus)."""
    from engine.vectors.milvus_store import MilvusVectorStore

    fname = f"{which}.milvus.json"
    try:
        stamp = MilvusVectorStore.read_stamp(path / fname)
    except IndexFileError:
        if not _has_rows(con, which):
            return []
        return [Finding(fname, "missing: the Milvus collection is re-synced by ids when the corpus opens", True)]
    if stamp != _expected_stamp(con, which):
        return [
            Finding(
                fname,
                "stale: the Milvus collection missed the database's last writes (a crash between "
                "the two?); it is re-synced by ids",
                True,
            )
        ]
    return []
