"""The bundled all-MiniLM-L6-v2: a numpy encoder for questions, sentence-transformers for bulk.

A question is a handful of short texts; importing torch for them is most of a cold `ask` (~6 s
of 8.5 s). So calls under `BULK_AT` texts go through `NumpyMiniLM` (numpy + tokenizers, same
weights, vectors within 1e-4 of torch's: tests/engine/llm/test_light_encoder.py), and index building (the
store embeds in blocks of 256) loads sentence-transformers on first use, with the machine's
cores and a batch sized to them. Both read the same verified `model.safetensors`.

The sha256 check of the weights (~0.3 s for 90 MB) runs in a thread while the numpy encoder
loads; no vector leaves `encode` before it has passed.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.embed.coalesce import CoalescingEncoder
from engine.embed.memo import encode_once
from engine.embed.numpy_minilm import NumpyMiniLM
from engine.embed.sentence import (
    BUNDLED_SPEC,
    SentenceTransformerEmbedder,
    bundled_model_dir,
    verify_bundled_weights,
)

#: From this many texts in one call, encode with sentence-transformers (torch): in bulk it runs
#: every step on all threads (numpy's elementwise steps use one), but importing it costs seconds.
#: On one thread the two were within 4% on 200 paragraphs (docs/benchmarks.md).
BULK_AT = 256


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def torch_threads() -> int:
    """Threads for torch: `OMP_NUM_THREADS` when the operator set it (a shared machine), else
    every usable core (torch's own default counts physical cores of the whole machine)."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return usable_cores()


def bulk_batch_size(cores: int | None = None) -> int:
    """Texts per forward pass in bulk: 32 per core, between 32 and 128 (64 on a 2-core machine, the
    size the store used before; larger sizes were not measured to help). Bigger batches pad more
    (texts are sorted by length first, so little) and smaller ones leave cores waiting."""
    return max(32, min(128, 32 * (cores or usable_cores())))


class BundledEmbedder:
    """The default embedder (see the module docstring)."""

    spec = BUNDLED_SPEC

    def __init__(self, model_dir: Path):
        self.model_dir = model_dir
        with ThreadPoolExecutor(1, thread_name_prefix="verify-weights") as pool:
            verified: Future[None] = pool.submit(verify_bundled_weights, model_dir)
            try:
                self._light = NumpyMiniLM(model_dir)
            except Exception:
                verified.result()  # a damaged file: the hash check's message names it and what to do
                raise
            verified.result()  # raises EmbedderError when the weights are not the pinned ones
        self.dim = self._light.dim
        # concurrent questions' small encodes share a forward (engine/embed/coalesce.py)
        self._small = CoalescingEncoder(self._light.encode)
        self._full: SentenceTransformerEmbedder | None = None
        self._full_lock = threading.Lock()

    @property
    def full(self) -> SentenceTransformerEmbedder:
        """The sentence-transformers model (torch), loaded on first use with the machine's cores."""
        with self._full_lock:
            if self._full is None:
                self._full = SentenceTransformerEmbedder(self.model_dir, spec=BUNDLED_SPEC, threads=torch_threads())
            return self._full

    @property
    def model(self):
        """The underlying SentenceTransformer (benchmarks compare against its raw encode)."""
        return self.full.model

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """`batch_size` applies to the numpy path; bulk batches are sized to the machine."""
        if len(texts) >= BULK_AT:
            return self.full.encode(texts, batch_size=bulk_batch_size())
        if len(texts) <= self._small.max_texts:  # a question's texts: once each per question
            return encode_once(self, self._small.encode, list(texts))
        return self._light.encode(list(texts), batch_size=min(batch_size, 32))


@lru_cache(maxsize=1)
def get_bundled_embedder() -> BundledEmbedder:
    """The default embedder, loaded once per process after its weights are verified."""
    return BundledEmbedder(bundled_model_dir())
