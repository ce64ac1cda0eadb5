"""The Embedder protocol: texts in, L2-normalized float32 vectors out (inner product = cosine)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    #: A stable description stored with a corpus (`bundled:all-MiniLM-L6-v2`, `st:/path`, `litellm:model`).
    spec: str
    dim: int

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Shape (len(texts), dim), float32, each row of unit length."""
        ...


def normalize_rows(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim == 1:
        vecs = vecs[None, :]
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vecs / norms
