"""The on-disk bookkeeping of LightRAG's storage in a corpus folder (storage.py builds and loads it):

    lightrag/
      manifest.json     the build: the corpus state it was built from (`stamp`), the LightRAG
                        workspace folder, every file with its size and SHA-256, the chunk id map
      build.lock        held while a process builds (two processes never build at once)
      <workspace>/      LightRAG's own files, exactly as the library writes them

`check(corpus)` says whether the folder holds a complete build of the corpus's current state (for
`corpus check` and backups); a manifest whose stamp differs, or a file missing or whose hash
differs, means the next LightRAG question rebuilds it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from engine.core import serde
from engine.methods.lightrag.library import PINNED_VERSION

#: Bumped when what the builder writes changes (an older build is then rebuilt).
BUILD_FORMAT = 1
FOLDER = "lightrag"
MANIFEST = "manifest.json"
LOCK = "build.lock"
#: How long a process waits for another one's build before it gives up with a clear message.
BUILD_WAIT_SECONDS = 1800.0


class StorageError(RuntimeError):
    """LightRAG's storage could not be built or read."""


def corpus_stamp(corpus: Any) -> dict[str, Any]:
    """What the storage is built from. A SQLite corpus: its token and change generations; another
    view (in memory): its identity and sizes."""
    embedder = corpus.embedder
    out: dict[str, Any] = {
        "format": BUILD_FORMAT,
        "lightrag": PINNED_VERSION,
        "embedder": str(getattr(embedder, "spec", "") or type(embedder).__name__),
        "dim": int(getattr(embedder, "dim", 0) or 0),
    }
    meta = getattr(corpus, "_get_meta", None)
    token = str(getattr(corpus, "token", "") or "")
    if callable(meta) and token:
        out.update(token=token, chunk_gen=int(meta("chunk_gen")), prop_gen=int(meta("prop_gen")))
    else:
        c = corpus.counts()
        out.update(view=f"{type(corpus).__name__}-{id(corpus)}", chunks=int(c.chunks), triplets=int(c.triplets))
    return out


def stamp_key(stamp: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:16]


def corpus_folder(corpus: Any) -> Path | None:
    """The corpus's own folder, when it has one on disk."""
    path = getattr(corpus, "path", None)
    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        return Path(path)
    return None


def hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest if it is readable and well formed (data read from disk is untrusted)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(data, dict)
        and isinstance(data.get("stamp"), dict)
        and isinstance(data.get("workspace"), str)
        and isinstance(data.get("files"), dict)
        and isinstance(data.get("chunk_map"), dict)
    )
    ws = data.get("workspace", "") if ok else ""
    if not ok or not ws or "/" in ws or "\\" in ws or ws.startswith("."):
        return None
    return data


def why_not_usable(folder: Path, stamp: dict[str, Any]) -> str:
    """ "" when the folder holds a complete build of this corpus state; else what is wrong."""
    data = read_manifest(folder)
    if data is None:
        return "no build" if not (folder / MANIFEST).exists() else "the manifest is unreadable"
    if data["stamp"] != stamp:
        return "the corpus changed since the build"
    ws = folder / data["workspace"]
    for name, want in data["files"].items():
        path = ws / str(name)
        if not isinstance(want, dict) or "/" in str(name) or not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != want.get("size") or hash_file(path) != want.get("sha256"):
            return f"{name} is damaged (its size or hash differs from the build's)"
    return ""


def check(corpus: Any) -> str:
    """For `corpus check` and backups: "" when `<corpus>/lightrag/` holds a complete build of the
    corpus's current state, else why not ("no build", "the corpus changed since the build", "X is
    damaged ..."). Whatever it says, the next LightRAG question rebuilds what is missing."""
    home = corpus_folder(corpus)
    if home is None:
        return "the corpus has no folder"
    return why_not_usable(home / FOLDER, corpus_stamp(corpus))


def write_manifest(folder: Path, ws: str, stamp: dict[str, Any], kg_counts: dict, skipped: dict, chunk_map) -> None:
    files = {
        p.name: {"size": p.stat().st_size, "sha256": hash_file(p)}
        for p in sorted((folder / ws).iterdir())
        if p.is_file() and not p.name.startswith(".")
    }
    manifest = {
        "stamp": stamp,
        "workspace": ws,
        "files": files,
        "counts": kg_counts,
        "skipped": skipped,
        "chunk_map": chunk_map,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    serde.atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))


class process_lock:
    """flock on lightrag/build.lock: one process builds, the others wait and then load its build."""

    def __init__(self, folder: Path):
        self.path = folder / LOCK

    def __enter__(self) -> None:
        self.fh = open(self.path, "a+")
        deadline = time.monotonic() + BUILD_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.fh.close()
                    raise StorageError(
                        f"another process has been building LightRAG's storage in {self.path.parent} for "
                        f"{BUILD_WAIT_SECONDS:.0f} s; try again when it finishes"
                    ) from None
                time.sleep(0.2)

    def __exit__(self, *exc: Any) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()
