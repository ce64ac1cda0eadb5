"""The stamp of an index file, read from its headers alone (no body read, no FAISS).

`corpus check` asks it of every index file to tell one left behind its database by a killed writer
(a stamp of this corpus at an older generation) without loading gigabytes of vectors."""

from __future__ import annotations

from pathlib import Path

from engine.vectors.faiss_store import _DELTA_HEADER, _DELTA_MAGIC, _HEADER, _MAGIC, delta_path


def read_stamp(path: Path) -> str | None:
    """The stamp of the index file at `path` (its delta's when it has one for this very file);
    None when there is no readable index file there."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER.size)
    except OSError:
        return None
    if len(head) < _HEADER.size or _HEADER.unpack_from(head)[0] != _MAGIC:
        return None
    _, digest, raw_stamp = _HEADER.unpack_from(head)
    try:
        with open(delta_path(Path(path)), "rb") as fh:
            dhead = fh.read(_DELTA_HEADER.size)
    except OSError:
        dhead = b""
    if len(dhead) == _DELTA_HEADER.size:
        magic, _, base, delta_stamp, _ = _DELTA_HEADER.unpack_from(dhead)
        if magic == _DELTA_MAGIC and base == digest:
            raw_stamp = delta_stamp
    return raw_stamp.rstrip(b"\x00").decode("utf-8", "replace")
