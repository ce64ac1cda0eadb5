"""The VectorStore protocol: integer ids -> unit vectors, inner-product search, atomic persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class VectorStore(Protocol):
    dim: int
    kind: str

    def __len__(self) -> int: ...

    def add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        """Add vectors under int64 ids (ids must not be present already)."""

    def remove(self, ids: np.ndarray) -> None:
        """Remove ids; unknown ids are ignored."""

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each of shape (len(queries), k); missing slots have id -1."""

    def save(self, path: Path, stamp: str) -> None:
        """Write atomically with `stamp` (the database state it was built from, at most 64 bytes);
        a crash mid-write leaves the previous file intact."""
