"""Small helpers shared by the store's modules."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine.core.types import Chunk


def _chunks(values: list, size: int) -> Iterator[list]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def set_aside_non_file(path: Path) -> Path | None:
    """Move whatever non-file stands at `path` (a directory, say) to `<path>.damaged-<time>` so an
    index can be written there again; the user's thing is kept, never deleted."""
    if path.is_dir() or (path.exists() and not path.is_file()):
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        os.replace(path, aside)
        return aside
    return None


def embedding_text(chunk: Chunk) -> str:
    """What a chunk's vector encodes: its text, headed by its title unless the text already starts
    with it (a paragraph saying "He was born in..." is only findable through its title)."""
    if chunk.title and not chunk.text.startswith(chunk.title):
        return f"{chunk.title}\n{chunk.text}"
    return chunk.text


def _vec_blob(v: np.ndarray) -> bytes:
    return np.ascontiguousarray(v, dtype=np.float32).tobytes()
