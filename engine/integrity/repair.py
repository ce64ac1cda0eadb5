"""`corpus check --repair`: rebuild damaged index files from the database, or salvage a damaged
database into a new corpus and say what was lost. The damaged original is never overwritten."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

from engine.core.faults import fault_point
from engine.integrity.checks import inspect
from engine.integrity.damaged import COLUMNS, read_rows, readable_copy, scan_pages
from engine.integrity.findings import INDEXES, TABLES, Finding, RepairReport
from engine.store import _SCHEMA, CorpusError, Workspace, set_aside_non_file
from engine.store.digests import COVERED, mismatched
from engine.store.lock import folder_lock
from engine.vectors import FaissVectorStore, IndexFileError


def repair(ws: Workspace, name: str, into: str | None = None) -> RepairReport:
    """Repair corpus `name`: rebuild damaged index files; salvage a damaged database into a new
    corpus (`into`, default `<name>-recovered`)."""
    path = ws.path_of(name)
    report = RepairReport()
    findings = inspect(path)
    if any(not f.derived for f in findings):
        with folder_lock(path, ws.lock_timeout, ws.on_wait, "repair it"):  # the rows read are one state
            return _salvage(ws, name, into or f"{name}-recovered", findings, report)
    if findings:
        corpus = ws.open(name)
        try:
            # under the write lock: no writer saves an index file between its removal and its rebuild
            with corpus._lock, corpus._process_lock(ws.lock_timeout):
                _rebuild_derived(path, findings, report)
                corpus.refresh_indexes()
        finally:
            corpus.close()
    report.remaining = inspect(path)
    return report


def _rebuild_derived(path: Path, findings: list[Finding], report: RepairReport) -> None:
    """Remove (or set aside) each damaged index file; the caller rebuilds them from the database."""
    for f in findings:
        file = path / f.part
        aside = set_aside_non_file(file)
        if aside is not None:
            report.actions.append(f"moved the directory standing at {f.part} to {aside.name}")
        elif file.exists():
            file.unlink()
            fault_point("repair.after_unlink")
        report.actions.append(f"rebuilt {f.part} from the database ({f.message})")


def _salvage(ws: Workspace, name: str, into: str, findings: list[Finding], report: RepairReport) -> RepairReport:
    src_path = ws.path_of(name)
    if ws.exists(into):
        raise CorpusError(f"corpus {into!r} exists: name another target for the recovered corpus (--into)")
    target = ws.path_of(into)
    tmp = ws.root / f".{into}.salvage-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        src = sqlite3.connect(f"file:{readable_copy(src_path, tmp, report)}?mode=ro", uri=True)
        dst = sqlite3.connect(tmp / "corpus.sqlite", isolation_level=None)
        dst.executescript(_SCHEMA)
        dst.execute("BEGIN")
        copy = Path(src.execute("PRAGMA database_list").fetchone()[2])
        scanned = scan_pages(copy)
        for table in TABLES:
            _copy_table(src, dst, table, scanned.get(table, []), report)
        _drop_mismatched(dst, report)
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
        fault_point("repair.before_rename")
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


def _copy_table(
    src: sqlite3.Connection, dst: sqlite3.Connection, table: str, scanned: list[tuple], report: RepairReport
) -> None:
    """Copy every row of `table` SQLite can still read, plus the rows only the page scan found."""
    try:
        cols, rows, bad = read_rows(src, table)
    except sqlite3.DatabaseError as exc:
        cols, rows, bad = COLUMNS[table], [], 0
        note = f"{table}: its b-tree is unreadable ({exc})"
    else:
        note = ""
    have = {r[0] for r in rows}
    width = len(cols) + 1  # a scanned record has as many values as it was written with: fit it to the columns
    extra = [r[:width] + (None,) * (width - len(r)) for r in scanned if r[0] not in have]
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


def _drop_mismatched(dst: sqlite3.Connection, report: RepairReport) -> None:
    """Rows whose content no longer matches their digest are not recovered: named as lost."""
    for table in COVERED:
        bad = list(mismatched(dst, table))
        if bad:
            dst.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(rowid,) for _, rowid in bad])
            names = ", ".join(repr(label) for label, _ in bad[:5]) + (" ..." if len(bad) > 5 else "")
            report.lost.append(f"{len(bad)} {table} rows whose content no longer matched their digest ({names})")


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
