"""A snapshot's manifest: which corpus, why, when, counts, and the SHA-256 of every file a backup
holds (engine/integrity/bounds.py lists them); written last when a snapshot is made, read and
checked (names, sizes, digests) before a byte of a snapshot is used. The operations on snapshots
are in engine/integrity/backup.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.core.faults import fault_point
from engine.integrity.bounds import BACKUP_FILES, check_listed, is_legacy_derived, size_limit
from engine.integrity.untrusted import check_manifest_name, digest_of, open_regular
from engine.store.errors import CorpusError, validate_name

if TYPE_CHECKING:
    from engine.store import Workspace

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
