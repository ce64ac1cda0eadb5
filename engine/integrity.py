"""`corpus check` and `corpus check --repair` on the files themselves.

`inspect` never stops at the first unreadable part: it opens the database and each index file on
its own and names every damage it finds. `repair` rebuilds what is derived (the index files, from
the vectors stored in SQLite) and, when SQLite itself is damaged, salvages every row SQLite can
still read into a new corpus and reports what was lost; the damaged original is never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.store import _SCHEMA, CorpusError, Workspace, set_aside_non_file
from engine.vectors import FaissVectorStore, IndexFileError

INDEXES = {
    "chunks": ("chunks.index", "chunk_gen", "SELECT rid, vec FROM chunks"),
    "propositions": ("propositions.index", "prop_gen", "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL"),
}
#: tables in the order a salvage copies them (parents before children)
TABLES = ("meta", "documents", "chunks", "triplets", "triplet_sources", "extraction", "questions")


@dataclass(frozen=True)
class Finding:
    part: str
    """`corpus.sqlite`, `chunks.index`, `propositions.index`"""
    message: str
    derived: bool
    """True when rebuilding from the database repairs it (an index file); False for the database."""

    def __str__(self) -> str:
        return f"{self.part}: {self.message}"


@dataclass
class RepairReport:
    actions: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    recovered_into: str = ""
    remaining: list[Finding] = field(default_factory=list)


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


# --- repair ---------------------------------------------------------------------------------


def repair(ws: Workspace, name: str, into: str | None = None) -> RepairReport:
    """Repair corpus `name`: rebuild damaged index files; salvage a damaged database into a new
    corpus (`into`, default `<name>-recovered`)."""
    path = ws.path_of(name)
    report = RepairReport()
    findings = inspect(path)
    if any(not f.derived for f in findings):
        return _salvage(ws, name, into or f"{name}-recovered", findings, report)
    for f in findings:
        file = path / f.part
        aside = set_aside_non_file(file)
        if aside is not None:
            report.actions.append(f"moved the directory standing at {f.part} to {aside.name}")
        elif file.exists():
            file.unlink()
        report.actions.append(f"rebuilt {f.part} from the database ({f.message})")
    if findings:
        corpus = ws.open(name)
        corpus.refresh_indexes()
        corpus.close()
    report.remaining = inspect(path)
    return report


def _read_rows(con: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple], int]:
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


def _salvage(ws: Workspace, name: str, into: str, findings: list[Finding], report: RepairReport) -> RepairReport:
    src_path = ws.path_of(name)
    if ws.exists(into):
        raise CorpusError(f"corpus {into!r} exists: name another target for the recovered corpus (--into)")
    target = ws.path_of(into)
    tmp = ws.root / f".{into}.salvage-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        src = sqlite3.connect(f"file:{_readable_copy(src_path, tmp, report)}?mode=ro", uri=True)
        dst = sqlite3.connect(tmp / "corpus.sqlite", isolation_level=None)
        dst.executescript(_SCHEMA)
        dst.execute("BEGIN")
        copy = Path(src.execute("PRAGMA database_list").fetchone()[2])
        scanned = _scan_pages(copy)
        for table in TABLES:
            try:
                cols, rows, bad = _read_rows(src, table)
            except sqlite3.DatabaseError as exc:
                cols, rows, bad = _COLUMNS[table], [], 0
                note = f"{table}: its b-tree is unreadable ({exc})"
            else:
                note = ""
            have = {r[0] for r in rows}
            extra = [r for r in scanned.get(table, []) if r[0] not in have]
            rows = rows + extra
            dst.executemany(
                f"INSERT OR IGNORE INTO {table}(rowid, {', '.join(cols)}) VALUES ({', '.join('?' * (len(cols) + 1))})",
                rows,
            )
            found = f" ({len(extra)} of them found by a page scan)" if extra else ""
            report.actions.append(f"{table}: {len(rows)} rows recovered{found}")
            if note and not rows:
                report.lost.append(note)
            if bad:
                report.lost.append(f"{table}: {bad} rowids unreadable")
        _drop_dangling(dst, report)
        _compare_with_indexes(src_path, dst, report)
        dst.execute("COMMIT")
        meta = dict(dst.execute("SELECT key, value FROM meta").fetchall())
        if "settings" not in meta or "schema_version" not in meta:
            raise CorpusError(
                f"corpus {name!r}: its settings could not be read, nothing to recover into a corpus; "
                "restore a snapshot instead (corpus snapshots NAME)"
            )
        src.close()
        dst.close()
        for scratch in tmp.glob("damaged*"):
            scratch.unlink()
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    corpus = ws.open(into)  # draws a fresh token: every index file is rebuilt from the recovered rows
    corpus.refresh_indexes()
    corpus.close()
    report.recovered_into = into
    report.remaining = inspect(target)
    report.actions.append(f"the damaged original {name!r} is left as it was ({'; '.join(map(str, findings))})")
    return report


_COLUMNS = {
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
    if kinds[:1] == ("n",) and len(v) == 9 and kinds[1:3] == ("s", "s") and kinds[8] == "b":
        return "chunks"
    if len(v) == 9 and kinds[0] == "s" and v[1] in ("pending", "done", "failed"):
        return "extraction"
    if len(v) == 7 and kinds[:5] == ("s",) * 5 and kinds[6] in ("f", "i"):
        return "documents"
    if len(v) == 5 and kinds[0] == "n" and kinds[1:4] == ("s",) * 3 and kinds[4] in ("b", "n"):
        return "triplets"
    return {("i", "s"): "triplet_sources", ("s", "s"): "meta", ("s", "i", "s"): "questions"}.get(kinds)


def _scan_pages(copy: Path) -> dict[str, list[tuple]]:
    """Rows of the corpus's tables read off the leaf pages (engine.pagescan), as `(rowid, *values)`
    with the integer primary key filled from the rowid."""
    from engine.pagescan import PageFile

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


def _readable_copy(src_path: Path, tmp: Path, report: RepairReport) -> Path:
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


def _compare_with_indexes(src_path: Path, dst: sqlite3.Connection, report: RepairReport) -> None:
    """The old index files list the row ids the database had when they were written: name the rows
    they know that the salvage could not bring back."""
    for which, (fname, _, sql) in INDEXES.items():
        try:
            store, _ = FaissVectorStore.load(src_path / fname, None, None)
        except IndexFileError:
            continue
        known = set(store.ids().tolist())
        got = {r[0] for r in dst.execute(sql).fetchall()}
        if known - got:
            report.lost.append(
                f"{len(known - got)} of the {len(known)} {which} the last {fname} knew "
                f"(ids {sorted(known - got)[:10]}{'...' if len(known - got) > 10 else ''})"
            )


def _drop_dangling(dst: sqlite3.Connection, report: RepairReport) -> None:
    """Rows whose parent was lost cannot stand in a corpus: drop them and say so."""
    for what, sql in (
        ("chunks whose document was lost", "DELETE FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)"),
        (
            "triplet links whose chunk or triplet was lost",
            "DELETE FROM triplet_sources WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks) "
            "OR tid NOT IN (SELECT tid FROM triplets)",
        ),
        (
            "triplets left without a source chunk",
            "DELETE FROM triplets WHERE tid NOT IN (SELECT tid FROM triplet_sources)",
        ),
        (
            "extraction rows of lost chunks",
            "DELETE FROM extraction WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)",
        ),
    ):
        n = dst.execute(sql).rowcount
        if n:
            report.lost.append(f"{n} {what}")
    missing = dst.execute(
        "SELECT COUNT(*) FROM chunks WHERE chunk_id NOT IN (SELECT chunk_id FROM extraction)"
    ).fetchone()[0]
    if missing:  # their triplets are unknown: mark them pending so extraction can redo them
        dst.execute(
            "INSERT INTO extraction(chunk_id, status, model, error, calls, prompt_tokens, completion_tokens, "
            "cost, updated_at) SELECT chunk_id, 'pending', '', '', 0, 0, 0, NULL, ? FROM chunks "
            "WHERE chunk_id NOT IN (SELECT chunk_id FROM extraction)",
            (time.time(),),
        )
        report.lost.append(f"extraction status of {missing} chunks (marked pending)")
    dst.execute("DELETE FROM meta WHERE key IN ('corpus_token', 'edges_built')")  # drawn and built anew
