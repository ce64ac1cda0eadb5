"""Embeddings through litellm (OpenAI, Gemini, Ollama, any OpenAI-compatible api_base)."""

from __future__ import annotations

import numpy as np

from engine.embed.base import normalize_rows
from engine.embed.sentence import EmbedderError


class LiteLLMEmbedder:
    def __init__(self, model: str, api_base: str = "", api_key: str | None = None, dim: int | None = None):
        self.model = model
        self.api_base = api_base
        self._api_key = api_key  # kept in memory only, never in `spec`
        self.spec = f"litellm:{model}"
        self.dim = dim or len(self.encode(["dimension probe"])[0])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        from engine.llm.base import LLMError
        from engine.llm.litellm_call import call_litellm, env_secrets, scrub

        out: list[list[float]] = []
        for i in range(0, len(texts), batch_size):
            try:
                resp = call_litellm(
                    "embedding",
                    model=self.model,
                    api_base=self.api_base,
                    api_key=self._api_key,
                    input=list(texts[i : i + batch_size]),
                )
            except LLMError as exc:  # refused at the trust boundary: nothing was sent
                raise EmbedderError(f"embedding with {self.model!r}: {exc}") from None
            except Exception as exc:  # name the model and endpoint; a provider may echo the key: scrub it
                detail = scrub(str(exc)[:300], (self._api_key or "",) + env_secrets())
                raise EmbedderError(
                    f"embedding with {self.model!r}{' at ' + self.api_base if self.api_base else ''} "
                    f"failed: {type(exc).__name__}: {detail}"
                ) from None
            out.extend(item["embedding"] for item in resp.data)
        return normalize_rows(np.asarray(out, dtype=np.float32))
