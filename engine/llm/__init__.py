"""LLM layer: the `LLM` / `Reasoner` protocols (base.py), the litellm client with its response
cache, a scripted LLM for tests, all prompts, tolerant parsing, and the two reasoners.

`make_reasoner` is the one entry point the CLI and the app use:

    reasoner = make_reasoner()                                   # offline rules, no model
    reasoner = make_reasoner("openai/gpt-4o-mini", api_key=key, cache_path=ws / "llm_cache.sqlite")
    reasoner = make_reasoner("hosted_vllm/qwen", api_base="http://gpu:8000/v1")

Submodules are imported lazily: litellm takes seconds to import and the offline path never needs it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.llm.base import LLM, Completion, LLMCall, LLMError, Reasoner

__all__ = ["LLM", "Completion", "LLMCall", "LLMError", "Reasoner", "make_reasoner", "list_ollama_models"]


def make_reasoner(model: str = "", api_base: str = "", api_key: str | None = None,
                  cache_path: Path | None = None, **opts: Any) -> Reasoner:
    """A reasoner for `model`; an empty model string gives the offline rules reasoner.

    `opts`: `extraction_style` ("json" | "json+ner" | "kg2rag"), `temperature`, `max_tokens` for the
    reasoner; `timeout`, `max_attempts`, `backoff`, `max_backoff`, `extra_params` for the client;
    `embedder` for the offline reasoner. The API key stays in memory (never cached or logged).
    """
    if not model.strip():
        from engine.llm.offline import OfflineReasoner

        return OfflineReasoner(embedder=opts.get("embedder"))
    from engine.llm.litellm_client import LiteLLMClient
    from engine.llm.reasoner import LLMReasoner

    client_keys = ("timeout", "max_attempts", "backoff", "max_backoff", "extra_params")
    reasoner_keys = ("extraction_style", "temperature", "max_tokens")
    unknown = set(opts) - set(client_keys) - set(reasoner_keys) - {"embedder"}
    if unknown:
        raise TypeError(f"make_reasoner got unknown options: {', '.join(sorted(unknown))}")
    client = LiteLLMClient(model, api_base=api_base, api_key=api_key, cache=cache_path,
                           **{k: opts[k] for k in client_keys if k in opts})
    return LLMReasoner(client, **{k: opts[k] for k in reasoner_keys if k in opts})


def list_ollama_models(base: str = "http://127.0.0.1:11434", timeout: float = 0.5) -> list[str]:
    """Models a local Ollama serves, as litellm model strings; [] when none is running."""
    from engine.llm.litellm_client import list_ollama_models as _list

    return _list(base, timeout)
