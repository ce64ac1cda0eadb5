"""LLM clients: the `LLM` protocol and call record (base.py), the litellm client with its response
cache and retries (litellm_client.py), the one door every litellm request passes with the endpoint
policy and key scrubbing (litellm_call.py), a scripted LLM for tests, and question deadlines.

This layer knows nothing of reasoners or methods (engine/reasoners builds on it, never the other
way round). Submodules are imported lazily: litellm takes seconds to import and the offline path
never needs it.
"""

from __future__ import annotations

from engine.llm.base import LLM, Completion, LLMCall, LLMError

__all__ = ["LLM", "Completion", "LLMCall", "LLMError", "list_ollama_models"]


def list_ollama_models(base: str = "http://127.0.0.1:11434", timeout: float = 0.5) -> list[str]:
    """Models a local Ollama serves, as litellm model strings; [] when none is running."""
    from engine.llm.litellm_client import list_ollama_models as _list

    return _list(base, timeout)
