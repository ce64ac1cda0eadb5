"""The test suite's one fake embedder: bag-of-words hashing, deterministic and instant, for tests that
do not judge retrieval quality (those load the bundled model through the `embedder` fixture).

Kept apart from tests/doubles.py and light (numpy and hashlib only): crash and concurrency tests
import it in many child processes, where loading networkx or the real model would dominate.

    corpus = Workspace(root, embedder=HashEmbedder()).create("c")
    vecs = hash_embed(["Alice was born in Paris"])   # lower-cased words; case and "?" do not count
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+")


def hash_embed(texts: list[str], dim: int = 256) -> np.ndarray:
    """Lower-cased words hashed into `dim` buckets, rows scaled to unit length (an empty text stays 0)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in _WORD.findall(t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


class HashEmbedder:
    # "bundled": stands in for the bundled model, so a corpus made with the default spec opens with it
    spec = "bundled"
    # 256: the index tests' 120 look-alike propositions ("PersonN born in TownN") each get a vector
    # of their own (with 32 two of them shared one, and a stored vector must find itself first)
    dim = 256

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        return hash_embed(list(texts), self.dim)
