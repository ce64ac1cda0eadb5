"""A cold open that does not checksum a whole index file each time.

An index file's header holds the SHA-256 of its body: checking it reads and hashes every byte
(1.5 GB per index at a million 384-d vectors, seconds per open). A record beside the file
(`<name>.verified`, written when the file is written or after a full check) says "this file, of
this size, last modified at this time, with this header digest, was checked whole", with a digest of
fixed samples of the body (its first and last 1 MiB and 32 blocks of 64 KiB spread over it). An
open whose file still has the recorded size, modification time and header digest checks only the
samples: a cost that does not grow with the index. Any write through the file system moves the
modification time, so a file changed since (a copy, a restore, a damaged write, a tool) gets the
full check; bytes flipped in place with the time kept (bit rot) are caught where they fall in a
sample, and everywhere by `corpus check` (engine/integrity.py), which always checks the whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

_EDGE = 1 << 20  # bytes hashed at each end of the body
_BLOCK = 1 << 16  # bytes per sampled block
_BLOCKS = 32


def record_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + ".verified")


def sample_digest(body: memoryview) -> str:
    """SHA-256 over the body's length, its first and last `_EDGE` bytes and `_BLOCKS` fixed blocks."""
    h = hashlib.sha256(str(len(body)).encode())
    n = len(body)
    if n <= 2 * _EDGE + _BLOCKS * _BLOCK:
        h.update(body)
        return h.hexdigest()
    h.update(body[:_EDGE])
    step = (n - 2 * _EDGE) // _BLOCKS
    for i in range(_BLOCKS):
        at = _EDGE + i * step
        h.update(body[at : at + _BLOCK])
    h.update(body[n - _EDGE :])
    return h.hexdigest()


def write_record(path: Path, header_digest: bytes, body: memoryview) -> None:
    """Record that the file at `path` (just written or checked whole) is sound as it stands.
    Best effort: without the record the next open checks the whole file, nothing worse."""
    try:
        st = os.stat(path)
        data = {
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "digest": header_digest.hex(),
            "sample": sample_digest(body),
        }
        tmp = record_path(path).with_name(record_path(path).name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, record_path(path))
    except OSError:
        pass


def trusted(path: Path, size: int, header_digest: bytes, body: memoryview) -> bool:
    """True when the record says this very file was checked whole and the samples still match."""
    try:
        data = json.loads(record_path(path).read_text(encoding="utf-8"))
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and data.get("size") == size == st.st_size
        and data.get("mtime_ns") == st.st_mtime_ns
        and data.get("digest") == header_digest.hex()
        and data.get("sample") == sample_digest(body)
    )
