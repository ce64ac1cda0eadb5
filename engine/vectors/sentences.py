"""Sentence vectors for the offline answer step: what a chunk's sentences are, how one is keyed
and how its vector is stored.

The answer step ranks the sentences of its context by similarity to the question. Embedding every
sentence of 5-10 chunks per question cost ~1 s on one core; the corpus now embeds each chunk's
sentences once, when the chunk is added (engine/store/sentences.py), and the answer step embeds only
the question. A sentence is keyed by a 64-bit hash of its text, not by chunk: the answer step sees
the context as text (chunks joined, the title on the first line of each), and the same sentence in
two chunks is stored once. The sentences of a chunk are those of its context form (`embedding_text`:
the title line, then the text), split the way the answer step splits its context.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: stored as float16: half the disk of float32, and a cosine moves by ~1e-3 at most (the answer
#: step keeps the top three sentences; docs/benchmarks.md compares the answers both ways)
STORED_DTYPE = np.float16


def sentence_key(text: str) -> int:
    """A signed 64-bit key of the sentence's text (SQLite's INTEGER PRIMARY KEY)."""
    return int.from_bytes(hashlib.blake2b(text.strip().encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def split_for_answers(text: str) -> list[str]:
    """The sentences of `text` as the offline answer step splits its context."""
    from engine.core.chunking import split_sentences

    return [s.strip() for s in split_sentences(text) if s.strip()]


def pack(vec: np.ndarray) -> bytes:
    return np.ascontiguousarray(vec, dtype=STORED_DTYPE).tobytes()


def unpack(blobs: list[bytes], dim: int) -> np.ndarray:
    """(len(blobs), dim) float32 rows."""
    if not blobs:
        return np.zeros((0, dim), np.float32)
    return np.frombuffer(b"".join(blobs), STORED_DTYPE).reshape(len(blobs), dim).astype(np.float32)
