"""Rerankers: score (query, text) pairs; higher is more relevant.

Three backends behind one protocol, built from a spec string by `make_reranker`:

* `""` or `cosine` - embedding cosine with the corpus's own embedder: the fallback, always
  available. (KG2RAG and the baselines avoid even this encoding where stored vectors already
  exist; see `is_cosine`.)
* `ce:/path/to/model` (or a bare existing local path) - a sentence-transformers CrossEncoder
  loaded from a local folder. None is bundled with the product; models are never downloaded.
* `litellm:<model>` - a hosted rerank endpoint through `litellm.rerank` (Cohere, Jina, Voyage,
  an OpenAI-compatible vLLM/Infinity server at `api_base`).

Heavy imports (torch, litellm) happen on first use so importing the engine stays cheap.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np


class RerankerError(RuntimeError):
    """A reranker that cannot be built or called; the message says what to fix."""


@runtime_checkable
class Reranker(Protocol):
    #: Shown in traces ("embedding-cosine", "cross-encoder:/models/ms-marco", "litellm:cohere/...").
    name: str

    def score(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text, in the order given."""
        ...


class EmbeddingCosineReranker:
    """Cosine between the query and each text under an embedder (vectors are unit length)."""

    def __init__(self, embedder: Any):
        self.embedder = embedder
        self.name = f"embedding-cosine ({getattr(embedder, 'spec', 'embedder')})"

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        vecs = np.asarray(self.embedder.encode([query, *texts]), dtype=np.float32)
        return [float(x) for x in vecs[1:] @ vecs[0]]


class CrossEncoderReranker:
    """A local sentence-transformers CrossEncoder (e.g. a copy of ms-marco-MiniLM-L-6-v2)."""

    def __init__(self, model_path: str | Path, device: str = "cpu", batch_size: int = 32):
        path = Path(model_path).expanduser()
        if not path.exists():
            raise RerankerError(
                f"cross-encoder folder {path} does not exist; rerankers load from local "
                "folders only (this product never downloads a model)"
            )
        self.path = path
        self.device = device
        self.batch_size = batch_size
        self.name = f"cross-encoder:{path}"
        self._model = None
        self._lock = threading.Lock()  # predict() is not documented as thread-safe

    def _load(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import CrossEncoder
            except ImportError as exc:  # pragma: no cover - pinned in requirements.txt
                raise RerankerError(
                    "the cross-encoder reranker needs sentence-transformers: pip install sentence-transformers"
                ) from exc
            self._model = CrossEncoder(str(self.path), device=self.device, local_files_only=True)
        return self._model

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:
            model = self._load()
            scores = model.predict(
                [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
            )
        return [float(s) for s in np.asarray(scores).reshape(len(texts), -1)[:, -1]]


class LiteLLMReranker:
    """A hosted rerank model through `litellm.rerank`."""

    def __init__(self, model: str, api_base: str = "", api_key: str | None = None):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key  # memory only; never part of `name`
        self.name = f"litellm:{model}"

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        from engine.llm.base import LLMError
        from engine.llm.litellm_call import call_litellm, env_secrets, scrub

        try:
            resp = call_litellm(
                "rerank",
                model=self.model,
                api_base=self.api_base,
                api_key=self._api_key,
                query=query,
                documents=list(texts),
                top_n=len(texts),
                return_documents=False,
            )
        except LLMError as exc:  # refused at the trust boundary: nothing was sent
            raise RerankerError(f"rerank with {self.model!r}: {exc}") from None
        except Exception as exc:  # name the model and endpoint; a provider may echo the key: scrub it
            where = f" at {self.api_base}" if self.api_base else ""
            detail = scrub(str(exc)[:300], (self._api_key or "",) + env_secrets())
            raise RerankerError(f"rerank with {self.model!r}{where} failed: {type(exc).__name__}: {detail}") from None
        # The provider returns results sorted by relevance; put them back in input order.
        # A text the provider left out scores below every returned one.
        out = [float("-inf")] * len(texts)
        for item in _results(resp):
            idx, score = _get(item, "index"), _get(item, "relevance_score")
            if idx is not None and 0 <= int(idx) < len(texts) and score is not None:
                out[int(idx)] = float(score)
        floor = min((s for s in out if s != float("-inf")), default=0.0) - 1.0
        return [s if s != float("-inf") else floor for s in out]


def _results(resp: Any) -> list[Any]:
    res = _get(resp, "results")
    return list(res or [])


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def is_cosine(reranker: Reranker | None) -> bool:
    """True for the fallback: callers may then score from stored vectors instead of encoding."""
    return reranker is None or isinstance(reranker, EmbeddingCosineReranker)


def make_reranker(spec: str, embedder: Any = None, api_base: str = "") -> Reranker:
    """Build a reranker from its spec string ("" -> embedding cosine over `embedder`)."""
    spec = (spec or "").strip()
    if spec in ("", "cosine"):
        if embedder is None:
            raise RerankerError("the cosine reranker needs the corpus embedder")
        return EmbeddingCosineReranker(embedder)
    if spec.startswith("ce:"):
        return CrossEncoderReranker(spec[3:])
    if spec.startswith("litellm:"):
        return LiteLLMReranker(spec[len("litellm:") :], api_base=api_base)
    if Path(spec).expanduser().exists():
        return CrossEncoderReranker(spec)
    raise RerankerError(
        f"unknown reranker {spec!r}: use '' (embedding cosine), 'ce:/local/cross-encoder/folder' "
        "or 'litellm:<rerank model>'"
    )
