"""A fast deterministic embedder for tests that do not judge retrieval quality (crash and
concurrency tests start many processes; loading the real model in each would dominate)."""
from __future__ import annotations

import hashlib

import numpy as np


class HashEmbedder:
    spec = "bundled"  # stands in for the bundled model in corpora created with the default spec
    dim = 32

    def encode(self, texts, batch_size=64):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for tok in t.lower().split():
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms
