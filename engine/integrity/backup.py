"""Snapshots of corpora: backup, restore, and a way back from `drop` and `delete-doc`.

A snapshot is a folder holding a copy of the corpus's files and `manifest.json` (which corpus,
why, when, counts, and the SHA-256 of every file). Snapshots made by the workspace itself live
in `<workspace>/.snapshots/<corpus>/<time>-<reason>/`; `corpus backup --to DIR` writes one anywhere.

Crash safety: every operation is a sequence of renames whose every intermediate state is either the
old one or findable. `drop` writes the manifest into the corpus folder *before* moving it (a kill
leaves the corpus where it was, or in the snapshots with its manifest); undo-drop renames the
snapshot straight into place; restore and backup build aside under names that say what they are
(`.NAME.restore-partial-PID`, `.NAME.replaced-PID`, `.DEST.partial-PID`). Whatever a kill leaves is
finished or rolled back by `engine.integrity.interrupted.sweep` when a workspace opens. Named fault
points (engine/core/faults.py) sit between the steps; tests/reliability/test_backup_kills.py kills at each.

Snapshots are untrusted input (engine.integrity.untrusted): manifest names must be plain file names
of the files a backup writes (engine.integrity.bounds.BACKUP_FILES), each within a size limit from
the manifest's counts, checked before it is read; files are read without following symlinks and
must be regular files.

Consistency: the database is copied with SQLite's online backup API in one read transaction, so
readers and writers in other processes carry on and the copy is one committed state. Index files
and their deltas are copied as they are: each carries the stamp of the database state it was built
from (a delta names the index file it extends), so on restore an index that does not match the
copied database, or a delta copied beside another index file than its own, is rebuilt from the
stored vectors.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from engine.core.faults import fault_point
from engine.integrity.bounds import BACKUP_FILES, size_limit
from engine.integrity.manifest import (  # noqa: F401 - re-exported: the names callers import from here
    AUTOMATIC,
    DATABASE,
    MANIFEST,
    SNAPSHOTS,
    SnapshotInfo,
    _dead,
    _new_snapshot_dir,
    _write_manifest,
    checked_files,
    read_snapshot,
    sha256_file,
    verify,
)
from engine.integrity.untrusted import check_folder_contents, copy_checked
from engine.store.errors import CorpusBusyError, CorpusError, validate_name
from engine.store.lock import folder_lock

if TYPE_CHECKING:  # the store calls into this module (snapshots before drop and delete): types only here
    from engine.store import Corpus, Workspace


def backup(corpus: Corpus, dest: Path | str, reason: str = "manual") -> SnapshotInfo:
    """Write a snapshot of `corpus` into the new folder `dest` (built aside, then renamed), under
    the corpus's write lock: no writer is half-way through a change, and the index files copied are
    the ones of the copied database state."""
    with ExitStack() as held:
        if not corpus.read_only:  # read-only storage: nobody writes to it
            held.enter_context(corpus._lock)
            held.enter_context(corpus._process_lock(30.0))
        return _copy_corpus(corpus.path, corpus.name, dest, reason)


def _copy_corpus(src: Path, name: str, dest: Path | str, reason: str) -> SnapshotInfo:
    """The copy `backup` makes, of the corpus folder `src`, whose write lock the caller holds."""
    dest = Path(dest).expanduser().resolve()
    if dest.exists():
        raise CorpusError(f"backup target {dest} already exists")
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{dest.name}.partial-*"):  # left by a killed backup
        if _dead(stale.name.rsplit("-", 1)[-1]):
            shutil.rmtree(stale, ignore_errors=True)
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        # SQLite's online backup: one read transaction, i.e. one committed state, WAL included (the
        # copy is one file with no log, and that is what gets hashed)
        source = sqlite3.connect(src / DATABASE, timeout=30.0)
        copy = sqlite3.connect(tmp / DATABASE)
        try:
            source.backup(copy)
        finally:
            copy.close()
            source.close()
        fault_point("backup.after_database")
        for fname in BACKUP_FILES:  # the database was copied above, through SQLite
            if not fname.startswith(DATABASE) and (src / fname).is_file():
                shutil.copyfile(src / fname, tmp / fname)
        _write_manifest(tmp, name, reason)
        fault_point("backup.before_rename")
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return read_snapshot(dest)


def list_snapshots(ws: Workspace, name: str | None = None) -> list[SnapshotInfo]:
    """The workspace's snapshots (of one corpus, or all), newest first; unreadable folders skipped."""
    root = ws.root / SNAPSHOTS
    folders = [root / validate_name(name)] if name else sorted(p for p in root.glob("*") if p.is_dir())
    out = []
    for base in folders:
        for snap in base.glob("*") if base.is_dir() else ():
            if snap.is_dir() and not snap.is_symlink() and not snap.name.startswith("."):
                try:
                    out.append(read_snapshot(snap))
                except CorpusError:
                    continue
    return sorted(out, key=lambda s: s.created_at, reverse=True)


def find_snapshot(ws: Workspace, name: str, snapshot: str | None = None) -> SnapshotInfo:
    """`snapshot`: a snapshot id (folder name) of corpus `name`, a path to a snapshot folder, or
    None for the newest snapshot of `name`."""
    if snapshot and (os.sep in snapshot or Path(snapshot).expanduser().is_dir()):
        return read_snapshot(snapshot)
    snaps = list_snapshots(ws, name)
    if snapshot:
        snaps = [s for s in snaps if s.id == snapshot]
    if not snaps:
        what = f"snapshot {snapshot!r} of" if snapshot else "snapshot of"
        raise CorpusError(f"no {what} corpus {name!r} in {ws.root / SNAPSHOTS}")
    return snaps[0]


def prune(ws: Workspace, name: str) -> list[Path]:
    """Delete the automatic snapshots of `name` beyond the newest `ws.keep_snapshots`."""
    autos = [s for s in list_snapshots(ws, name) if s.automatic]
    gone = [s.path for s in autos[max(ws.keep_snapshots, 0) :]]
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone


def snapshot_before(ws: Workspace, corpus: Corpus, reason: str) -> SnapshotInfo:
    """The automatic snapshot taken before a destructive change (`delete-doc ...`)."""
    info = backup(corpus, _new_snapshot_dir(ws, corpus.name, reason), reason)
    prune(ws, corpus.name)
    return info


def keep_dropped(ws: Workspace, name: str) -> SnapshotInfo:
    """`drop` with a way back. Under the corpus's write lock (waiting for a writer to finish its
    change, or refusing after `ws.lock_timeout`): fold the WAL into the database (TRUNCATE, so the
    log hashed is empty and no later reader's close changes what was hashed), write the manifest
    into the corpus folder (the intent record: a kill now leaves the corpus in place, the sweep
    removes the manifest), then move the folder whole into the snapshots (one rename, instant
    whatever the corpus's size), where it arrives with its manifest: `snapshots` and `undo-drop`
    see it at once. A writer that waited for the lock finds its corpus gone and stops."""
    path = ws.path_of(name)
    with folder_lock(path, ws.lock_timeout, ws.on_wait, "drop it"):
        _fold_wal(path, ws.lock_timeout)
        dest = _new_snapshot_dir(ws, name, "drop")
        _write_manifest(path, name, "drop")
        fault_point("drop.after_manifest")
        try:
            os.replace(path, dest)
        except BaseException:
            (path / MANIFEST).unlink(missing_ok=True)
            raise
    fault_point("drop.after_move")
    prune(ws, name)
    return read_snapshot(dest)


def _fold_wal(path: Path, timeout: float) -> None:
    """Checkpoint the corpus's WAL fully (TRUNCATE), waiting up to `timeout` for readers still on
    an older state; CorpusBusyError if they stay. The caller holds the write lock: no writer adds
    to the log meanwhile. A damaged database moves as it is, its log listed in the manifest."""
    wal = path / f"{DATABASE}-wal"
    deadline = time.monotonic() + timeout
    try:
        con = sqlite3.connect(path / DATABASE, timeout=min(timeout, 5.0))
        try:
            while con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] or (
                wal.is_file() and wal.stat().st_size
            ):
                if time.monotonic() >= deadline:
                    raise CorpusBusyError(
                        f"corpus {path.name!r}: readers kept its database busy for {timeout:.0f} s, so its log "
                        "could not be folded in before hashing; nothing was changed; try again"
                    )
                time.sleep(0.05)
        finally:
            con.close()
    except sqlite3.DatabaseError:
        pass


def restore(
    ws: Workspace, info: SnapshotInfo, as_name: str | None = None, *, force: bool = False, move: bool = False
) -> Corpus:
    """Bring a snapshot back as corpus `as_name` (default: the corpus it was taken from). An
    existing corpus of that name is replaced only with `force`, under its write lock, and is
    snapshotted first. `move` consumes the snapshot (undo-drop: one rename into place, under the
    snapshot's own lock, so two undo-drops never race) instead of copying it; a copy is built
    aside (`.NAME.restore-partial-PID`), checked against the manifest while it is read."""
    name = validate_name(as_name or info.corpus)
    target = ws.path_of(name)
    with ExitStack() as held:
        if move:
            held.enter_context(folder_lock(info.path, ws.lock_timeout, ws.on_wait, "bring it back", name))
        verify(info, ws.backup_max_bytes)  # refused before anything changes (a copy is checked again as it is read)
        if move:
            check_folder_contents(info.path)
            _claim(info)
        if ws.exists(name):
            if not force:
                raise CorpusError(
                    f"corpus {name!r} exists: restore it under another name (--as) or replace it "
                    "(--force; the current one is snapshotted first)"
                )
            held.enter_context(folder_lock(target, ws.lock_timeout, ws.on_wait, "replace it"))
            _copy_corpus(target, name, _new_snapshot_dir(ws, name, "before-restore"), "before-restore")
        built = info.path if move else _copy_aside(ws, name, info)
        _put_in_place(ws, name, built, target, move)
        (target / MANIFEST).unlink(missing_ok=True)  # a moved snapshot's manifest; the sweep does it after a kill
    prune(ws, name)  # after the copy: the snapshot being restored may be the oldest automatic one
    corpus = ws.open(name)
    # index copies that do not match the restored database are rebuilt here, from the stored vectors
    # only: a restore sends no request anywhere (its settings are data, engine.llm.endpoints)
    corpus.finish_index_writes()
    return corpus


def _claim(info: SnapshotInfo) -> None:
    """Put this process's pid into a snapshot's manifest before moving it into place: were the
    process killed after the move, the sweep knows the manifest left in the corpus folder is dead."""
    path = info.path / MANIFEST
    data = json.loads(path.read_text(encoding="utf-8")) | {"pid": os.getpid()}
    tmp = info.path / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    fault_point("manifest.before_rename")
    os.replace(tmp, path)


def _copy_aside(ws: Workspace, name: str, info: SnapshotInfo) -> Path:
    built = ws.root / f".{name}.restore-partial-{os.getpid()}"
    shutil.rmtree(built, ignore_errors=True)
    built.mkdir()
    try:
        for fname in checked_files(info):
            limit = size_limit(fname, info.counts, ws.backup_max_bytes)
            copy_checked(info.path, fname, built, info.files[fname], *limit)
            fault_point("restore.mid_copy")
    except BaseException:
        shutil.rmtree(built, ignore_errors=True)
        raise
    return built


def _put_in_place(ws: Workspace, name: str, built: Path, target: Path, move: bool) -> None:
    """Rename `built` to `target`; an existing target goes aside first (`.NAME.replaced-PID`) and is
    deleted once the new one is in place. On an error the old one comes back."""
    aside = ws.root / f".{name}.replaced-{os.getpid()}"
    try:
        if target.exists():
            os.replace(target, aside)
            fault_point("restore.after_aside")
        os.replace(built, target)
        fault_point("restore.after_move")
    except BaseException:
        if aside.exists() and not target.exists():
            os.replace(aside, target)
        if not move:
            shutil.rmtree(built, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def undo_drop(ws: Workspace, name: str, as_name: str | None = None) -> Corpus:
    """Bring back the most recently dropped corpus `name`."""
    drops = [s for s in list_snapshots(ws, name) if s.reason == "drop"]
    if not drops:
        raise CorpusError(f"no dropped corpus {name!r} to bring back in {ws.root / SNAPSHOTS}")
    return restore(ws, drops[0], as_name, move=True)
