"""A snapshot is untrusted input: its manifest may come from anywhere (a backup folder handed over,
a snapshot folder edited by hand). Before a byte of it is used, every name in the manifest must be
a plain file name inside the snapshot (no `..`, no separators, no absolute path), and every file
read must be a regular file reached without following a symlink (no device, FIFO or directory).
Refusals are `CorpusError`s naming the offending entry."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from engine.store.errors import CorpusError

#: a manifest entry: one plain file name, as the corpus folder holds them
_FILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_manifest_name(folder: Path, name: str) -> str:
    """`name` if it is a plain file name inside `folder`; else CorpusError naming it."""
    if not isinstance(name, str) or not _FILE_RE.match(name) or ".." in name:
        raise CorpusError(
            f"snapshot {folder}: manifest entry {name!r} is not a plain file name inside the snapshot "
            "(no '..', no '/', no absolute path); the snapshot is refused"
        )
    return name


def open_regular(folder: Path, name: str, limit: int | None = None, why: str = "its limit") -> int:
    """A read-only descriptor of `folder/name`, refused when that is a symlink or not a regular file,
    or (with `limit`) when it holds more than `limit` bytes: checked before a byte is read."""
    path = folder / check_manifest_name(folder, name)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise CorpusError(f"snapshot {folder} lost its file {name}") from None
    except OSError as exc:  # ELOOP: a symlink
        if path.is_symlink():
            raise CorpusError(f"snapshot {folder}: {name!r} is a symlink; the snapshot is refused") from None
        raise CorpusError(f"snapshot {folder}: {name!r} cannot be read ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise CorpusError(f"snapshot {folder}: {name!r} is not a regular file (a device, FIFO or folder); refused")
    if limit is not None and st.st_size > limit:
        os.close(fd)
        raise _too_large(folder, name, st.st_size, limit, why)
    return fd


def _too_large(folder: Path, name: str, size: int, limit: int, why: str) -> CorpusError:
    return CorpusError(
        f"snapshot {folder}: {name} holds {size:,} bytes, more than {why} ({limit:,} bytes); the snapshot is "
        "refused before the file is read"
    )


def _blocks(folder: Path, name: str, fh, limit: int | None, why: str):
    """The file's bytes in blocks, stopping with a refusal once past `limit` (a file that grows)."""
    seen = 0
    for block in iter(lambda: fh.read(1 << 20), b""):
        seen += len(block)
        if limit is not None and seen > limit:
            raise _too_large(folder, name, seen, limit, why)
        yield block


def digest_of(folder: Path, name: str, limit: int | None = None, why: str = "its limit") -> str:
    h = hashlib.sha256()
    with os.fdopen(open_regular(folder, name, limit, why), "rb") as fh:
        for block in _blocks(folder, name, fh, limit, why):
            h.update(block)
    return h.hexdigest()


def copy_checked(
    folder: Path, name: str, dest_dir: Path, digest: str, limit: int | None = None, why: str = "its limit"
) -> None:
    """Copy `folder/name` to `dest_dir/name`, hashing what is read: a file that changed since the
    manifest (or between a check and the copy), or grew past `limit`, is refused, and the copy removed."""
    h = hashlib.sha256()
    out = dest_dir / name
    try:
        with os.fdopen(open_regular(folder, name, limit, why), "rb") as src, open(out, "xb") as dst:
            for block in _blocks(folder, name, src, limit, why):
                h.update(block)
                dst.write(block)
    except CorpusError:
        out.unlink(missing_ok=True)
        raise
    if h.hexdigest() != digest:
        out.unlink()
        raise CorpusError(f"snapshot {folder}: {name} does not match its checksum (damaged since it was taken)")


def check_folder_contents(folder: Path) -> None:
    """For a snapshot moved whole (undo-drop), which brings along what its manifest does not list
    (the corpus's `runs/` folder, its lock files): no symlink and nothing but files and folders."""
    for entry in os.scandir(folder):
        if entry.is_symlink() or not (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)):
            raise CorpusError(
                f"snapshot {folder}: {entry.name!r} is a symlink or a device, not a file; the snapshot is refused"
            )
