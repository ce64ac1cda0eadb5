"""Finish or roll back whatever a killed drop, undo-drop, restore, backup, create or repair left.

Every such operation is a sequence of renames between states named on disk (engine/integrity/backup.py), so a
kill at any instruction leaves one of these, each with one safe way forward:

* `NAME/manifest.json` (reason "drop") in a corpus folder: a drop killed before its move, or an
  undo-drop killed after it. The manifest goes; the corpus stays.
* `.snapshots/NAME/<stamp>-drop/` without a manifest: a drop of an older build (move, then hash).
  The manifest is written: `snapshots` and `undo-drop` see it.
* `.manifest.json.PID.tmp`: a manifest write. Deleted.
* `.chunks.index.PID.XXXXXXXX.tmp`, `chunks.index.verified.PID.tmp` (and the propositions'): an
  index file written aside, not yet renamed into place. Deleted. An index file a kill left behind
  the database (killed between a commit and the index update) is brought in step by `corpus check`
  (`Corpus.finish_index_writes`), which can open the corpus.
* `.NAME.replaced-PID`: restore --force killed between its two renames. Back in place if NAME is
  missing, else deleted (it was snapshotted first).
* `.NAME.restoring-PID`: undo-drop of an older build. Back in place if NAME is free, else into the
  snapshots.
* `.NAME.restore-partial-PID`, `.NAME.salvage-PID`, `.X.partial-PID`, `.NAME.creating-PID-*`,
  `.NAME.dropped.PID`, `.NAME.discarded.PID`: copies and trash. Deleted.

Only what a dead process left is touched (the pid is in every name, or in the manifest). Runs when a
workspace opens for writing (engine.store.Workspace) and is reported by `corpus check`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
import time
from pathlib import Path

from engine.integrity.backup import MANIFEST, SNAPSHOTS, _dead, _write_manifest
from engine.store.errors import _NAME_RE

log = logging.getLogger(__name__)

_HIDDEN = re.compile(
    r"^\.(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,63}?)\."
    r"(?P<op>restoring|restore-partial|replaced|salvage|creating|dropped|discarded|partial)[-.](?P<pid>\d+)"
)
_TMP = re.compile(r"^\.manifest\.json\.(?P<pid>\d+)\.tmp$")
#: `.chunks.index.PID.XXXXXXXX.tmp` (an index file or its delta), `chunks.index.verified.PID.tmp`,
#: and earlier builds' `.chunks.index.XXXXXXXX.tmp` (no pid)
_INDEX_TMP = re.compile(
    r"^(?:\.(?:chunks|propositions)\.index(?:\.delta)?\.(?:(?P<pid>\d+)\.)?[A-Za-z0-9_]{8}\.tmp"
    r"|(?:chunks|propositions)\.index\.verified\.(?P<vpid>\d+)\.tmp)$"
)
_COPIES = ("restore-partial", "salvage", "creating", "dropped", "discarded", "partial")


def sweep(root: Path) -> list[str]:
    """Finish or roll back the interrupted operations in workspace `root`; one line per action."""
    actions: list[str] = []
    if not root.is_dir():
        return actions
    for entry in sorted(root.iterdir()):
        try:
            if entry.name.startswith("."):
                _hidden(root, entry, actions)
            elif entry.is_dir() and not entry.is_symlink() and _NAME_RE.match(entry.name):
                _corpus_folder(entry, actions)
        except OSError as exc:  # one stuck entry must not stop the others, nor the workspace
            actions.append(f"could not finish the interrupted operation at {entry.name}: {exc}")
    snaps = root / SNAPSHOTS
    for base in sorted(snaps.iterdir()) if snaps.is_dir() else ():
        for snap in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else ():
            try:
                _snapshot_folder(base, snap, actions)
            except OSError as exc:
                actions.append(f"could not finish the interrupted operation at {snap}: {exc}")
    for a in actions:
        log.warning("workspace %s: %s", root, a)
    return actions


def _stray_tmp(folder: Path, actions: list[str], unnamed_too: bool = False) -> None:
    """Remove temporary manifests of dead writers; `unnamed_too`: also those an older build named
    at random (no pid), when the folder is known to be nobody's (a drop that lost its process)."""
    for tmp in folder.glob(f".{MANIFEST}.*.tmp"):
        m = _TMP.match(tmp.name)
        if (m and _dead(m["pid"])) or (not m and unnamed_too):
            tmp.unlink(missing_ok=True)
            actions.append(f"removed {folder.name}/{tmp.name}, a manifest a killed process did not finish")


def _stray_index_tmp(folder: Path, actions: list[str]) -> None:
    """Remove the temporary files of index writes whose writer died (an index file, its delta or
    its `.verified` record written aside, not yet renamed into place); those of earlier builds,
    named without a pid, once they are an hour old (no index write takes that long)."""
    for tmp in folder.glob("*.tmp"):
        m = _INDEX_TMP.match(tmp.name)
        if m is None:
            continue
        pid = m["pid"] or m["vpid"]
        try:
            stale = _dead(pid) if pid else time.time() - tmp.stat().st_mtime > 3600
            if stale:
                tmp.unlink()
        except FileNotFoundError:
            continue
        if stale:
            actions.append(f"removed {folder.name}/{tmp.name}, an index file a stopped writer did not finish")


def _corpus_folder(folder: Path, actions: list[str]) -> None:
    _stray_tmp(folder, actions)
    _stray_index_tmp(folder, actions)
    manifest = folder / MANIFEST
    if not manifest.is_file() or not (folder / "corpus.sqlite").is_file():
        return
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or data.get("reason") != "drop" or not _dead(str(data.get("pid", ""))):
        return
    manifest.unlink()
    actions.append(
        f"corpus {folder.name!r}: a drop killed before its move (or an undo-drop killed after it) was "
        "rolled back; the corpus is in place"
    )


def _hidden(root: Path, entry: Path, actions: list[str]) -> None:
    m = _HIDDEN.match(entry.name)
    if not m or not entry.is_dir() or entry.is_symlink() or not _dead(m["pid"]):
        return
    name, op = m["name"], m["op"]
    target = root / name
    if op in _COPIES:
        shutil.rmtree(entry, ignore_errors=True)
        actions.append(f"removed {entry.name}, left by an interrupted {op.replace('-', ' ')} (a copy)")
    elif op == "replaced" and not target.exists():
        os.replace(entry, target)
        actions.append(f"corpus {name!r}: an interrupted restore was rolled back; the corpus is as before it")
    elif op == "replaced" and (target / "corpus.sqlite").is_file():
        shutil.rmtree(entry, ignore_errors=True)
        actions.append(f"corpus {name!r}: finished an interrupted restore (the replaced copy is a snapshot)")
    elif op == "restoring" and (entry / "corpus.sqlite").is_file():
        if not target.exists():
            os.replace(entry, target)
            (target / MANIFEST).unlink(missing_ok=True)
            actions.append(f"corpus {name!r}: finished an interrupted undo-drop; the corpus is back")
        else:
            dest = root / SNAPSHOTS / name / (time.strftime("%Y%m%dT%H%M%S") + "-recovered")
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(entry, dest)
            _write_manifest(dest, name, "drop")
            actions.append(f"corpus {name!r}: an interrupted undo-drop's copy is kept as snapshot {dest.name}")


def _snapshot_folder(base: Path, snap: Path, actions: list[str]) -> None:
    if snap.is_symlink() or not snap.is_dir():
        return
    if snap.name.startswith("."):
        _hidden(base, snap, actions)
        return
    orphan = not (snap / MANIFEST).is_file() and (snap / "corpus.sqlite").is_file()
    _stray_tmp(snap, actions, unnamed_too=orphan)
    if not orphan:
        return
    # a folder only a drop creates without a manifest (builds before the manifest came first)
    reason = "drop" if snap.name.endswith("-drop") else "recovered"
    _write_manifest(snap, base.name, reason)
    actions.append(
        f"corpus {base.name!r}: an interrupted drop is now a snapshot ({snap.name}); "
        f"bring it back with: corpus undo-drop {base.name}"
    )


def finish_index_writes(ws, name: str) -> list[str]:
    """Index files of corpus `name` a writer killed between its commit and its index update left
    behind the database, brought in step (`Corpus.finish_index_writes`); one line per file. Nothing
    when the corpus does not open (its damage is what `corpus check` then names) or is read-only."""
    from engine.store.errors import CorpusError

    if ws.read_only:
        return []
    try:
        corpus = ws.open(name)
    except (CorpusError, sqlite3.DatabaseError):
        return []
    try:
        return corpus.finish_index_writes()
    except (CorpusError, sqlite3.DatabaseError):
        return []
    finally:
        corpus.close()
