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

import hashlib
import json
import os
import re
import shutil
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.core.faults import fault_point
from engine.integrity.bounds import BACKUP_FILES, check_listed, is_legacy_derived, size_limit
from engine.integrity.untrusted import (
    check_folder_contents,
    check_manifest_name,
    copy_checked,
    digest_of,
    open_regular,
)
from engine.store.errors import CorpusError, validate_name

if TYPE_CHECKING:  # the store calls into this module (snapshots before drop and delete): types only here
    from engine.store import Corpus, Workspace

SNAPSHOTS = ".snapshots"
MANIFEST = "manifest.json"
DATABASE = "corpus.sqlite"
#: reasons of the snapshots the workspace takes by itself (pruned to `keep_snapshots` per corpus)
AUTOMATIC = ("drop", "delete-doc", "before-restore")


@dataclass(frozen=True)
class SnapshotInfo:
    path: Path
    corpus: str
    reason: str
    created_at: float
    files: dict[str, str]
    """file name -> SHA-256 of its bytes when the snapshot was taken"""
    counts: dict[str, int]

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def automatic(self) -> bool:
        return self.reason.split(" ", 1)[0] in AUTOMATIC

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created_at))
        c = self.counts
        return (
            f"{self.id}  {when}  {self.reason:24s} {c.get('documents', '?')} docs, {c.get('chunks', '?')} chunks, "
            f"{c.get('triplets', '?')} triplets"
        )


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _counts(db_path: Path) -> dict[str, int]:
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return {
            t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("documents", "chunks", "triplets", "questions")
        }
    except sqlite3.DatabaseError:
        return {}
    finally:
        con.close()


def _slug(reason: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", reason).strip("-")[:40] or "snapshot"


def _new_snapshot_dir(ws: Workspace, name: str, reason: str) -> Path:
    base = ws.root / SNAPSHOTS / validate_name(name)
    base.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S") + f"{time.time() % 1:.6f}"[1:].replace(".", "-")
    return base / f"{stamp}-{_slug(reason)}"


def _write_manifest(folder: Path, corpus: str, reason: str) -> SnapshotInfo:
    """Hash every file of `folder` and write its manifest (a temporary file renamed into place);
    the manifest carries the writer's pid so a sweep can tell a live operation from a dead one."""
    files = {
        name: sha256_file(folder / name)
        for name in BACKUP_FILES
        if (folder / name).is_file()
        and not (folder / name).is_symlink()
        # an empty log holds nothing (the last connection to close deletes it, a reader included)
        and not (name.endswith("-wal") and (folder / name).stat().st_size == 0)
    }  # what else the folder holds (lock files, `.verified` records, runs/) is not part of a backup
    info = SnapshotInfo(folder, corpus, reason, time.time(), files, _counts(folder / "corpus.sqlite"))
    data = {k: v for k, v in asdict(info).items() if k != "path"} | {"pid": os.getpid()}
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1))
        fh.flush()
        os.fsync(fh.fileno())
    fault_point("manifest.before_rename")
    os.replace(tmp, folder / MANIFEST)
    return info


def read_snapshot(folder: Path | str) -> SnapshotInfo:
    folder = Path(folder).expanduser()
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return SnapshotInfo(
            folder,
            str(data["corpus"]),
            str(data["reason"]),
            float(data["created_at"]),
            {check_listed(folder, check_manifest_name(folder, str(k))): str(v) for k, v in data["files"].items()},
            {str(k): _count(v) for k, v in data.get("counts", {}).items()},
        )
    except FileNotFoundError:
        raise CorpusError(f"{folder} is not a snapshot (no {MANIFEST})") from None
    except CorpusError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorpusError(f"snapshot manifest {folder / MANIFEST} is unreadable: {exc}") from None


def _count(value) -> int:
    n = int(value)
    if not 0 <= n <= 10**10:
        raise ValueError(f"a count of {value!r} rows")
    return n


def checked_files(info: SnapshotInfo) -> list[str]:
    """The files of a snapshot a restore reads: the database first, then the rest in the manifest's
    order (entries of earlier builds' derived files are left out)."""
    names = [n for n in info.files if not is_legacy_derived(n)]
    return sorted(names, key=lambda n: n != DATABASE)


def verify(info: SnapshotInfo, cap: int | None = None) -> None:
    """Raise CorpusError naming the first file that is too large for the manifest's counts (or
    `cap`), checked on every file before any is read, then the first whose bytes no longer match
    the manifest, or whose name or kind makes it unsafe (a path, a symlink, a device)."""
    if DATABASE not in info.files:
        raise CorpusError(f"snapshot {info.path} holds no database")
    names = checked_files(info)
    for name in names:
        os.close(open_regular(info.path, name, *size_limit(name, info.counts, cap)))
    for name in names:
        if digest_of(info.path, name, *size_limit(name, info.counts, cap)) != info.files[name]:
            raise CorpusError(f"snapshot {info.path}: {name} does not match its checksum (damaged since it was taken)")


def _dead(pid: str) -> bool:
    return not (pid.isdigit() and (int(pid) == os.getpid() or Path(f"/proc/{pid}").exists()))


def backup(corpus: Corpus, dest: Path | str, reason: str = "manual") -> SnapshotInfo:
    """Write a snapshot of `corpus` into the new folder `dest` (built aside, then renamed)."""
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
        src = sqlite3.connect(corpus.path / "corpus.sqlite", timeout=30.0)
        dst = sqlite3.connect(tmp / "corpus.sqlite")
        try:
            src.backup(dst)  # one step: a single read transaction, i.e. one committed state
        finally:
            dst.close()
            src.close()
        fault_point("backup.after_database")
        for name in BACKUP_FILES:  # the database was copied above, through SQLite
            if not name.startswith(DATABASE) and (corpus.path / name).is_file():
                shutil.copyfile(corpus.path / name, tmp / name)
        _write_manifest(tmp, corpus.name, reason)
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
    """`drop` with a way back: fold the WAL into the database, write the manifest into the corpus
    folder (the intent record: a kill now leaves the corpus in place, the sweep removes the
    manifest), then move the folder whole into the snapshots (one rename, instant whatever the
    corpus's size), where it arrives with its manifest: `snapshots` and `undo-drop` see it at once."""
    path = ws.path_of(name)
    try:
        con = sqlite3.connect(path / "corpus.sqlite", timeout=5.0)
        try:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            con.close()
    except sqlite3.DatabaseError:
        pass  # a damaged or busy database moves as it is, WAL included
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


def restore(
    ws: Workspace, info: SnapshotInfo, as_name: str | None = None, *, force: bool = False, move: bool = False
) -> Corpus:
    """Bring a snapshot back as corpus `as_name` (default: the corpus it was taken from). An
    existing corpus of that name is replaced only with `force`, and is snapshotted first. `move`
    consumes the snapshot (undo-drop: one rename into place) instead of copying it; a copy is
    built aside (`.NAME.restore-partial-PID`), checked against the manifest while it is read."""
    verify(info, ws.backup_max_bytes)  # refused before anything changes (a copy is checked again as it is read)
    if move:
        check_folder_contents(info.path)
        _claim(info)
    name = validate_name(as_name or info.corpus)
    target = ws.path_of(name)
    if ws.exists(name):
        if not force:
            raise CorpusError(
                f"corpus {name!r} exists: restore it under another name (--as) or replace it "
                "(--force; the current one is snapshotted first)"
            )
        snapshot_before(ws, ws.open(name), "before-restore")
    built = info.path if move else _copy_aside(ws, name, info)
    _put_in_place(ws, name, built, target, move)
    (target / MANIFEST).unlink(missing_ok=True)  # a moved snapshot's manifest; the sweep does it after a kill
    corpus = ws.open(name)
    corpus.refresh_indexes()  # index copies that do not match the restored database are rebuilt here
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
