"""Reasoners: the four jobs both methods need (base.py: the `Reasoner` protocol and the values it
passes), over a model (llm_reasoner.py with prompts/, parsing.py and free_text.py) or over rules (offline/).

`make_reasoner` is the one entry point the CLI and the app use:

    reasoner = make_reasoner()                                   # offline rules, no model
    reasoner = make_reasoner("openai/gpt-4o-mini", api_key=key, cache_path=ws / "llm_cache.sqlite")
    reasoner = make_reasoner("hosted_vllm/qwen", api_base="http://gpu:8000/v1")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.reasoners.base import Evidence, QueryTriplet, Reasoner, SolveResult

__all__ = ["Evidence", "QueryTriplet", "Reasoner", "SolveResult", "make_reasoner"]


def make_reasoner(
    model: str = "", api_base: str = "", api_key: str | None = None, cache_path: Path | None = None, **opts: Any
) -> Reasoner:
    """A reasoner for `model`; an empty model string gives the offline rules reasoner.

    `opts`: `extraction_style` ("json" | "json+ner" | "kg2rag"), `temperature`, `max_tokens` for the
    reasoner; `timeout`, `max_attempts`, `backoff`, `max_backoff`, `extra_params` for the client;
    `embedder` and `sentence_vectors` (the corpus's stored context-sentence vectors,
    `Corpus.sentence_vectors`) for the offline reasoner. The API key stays in memory (never cached or logged).
    """
    if not model.strip():
        from engine.reasoners.offline import OfflineReasoner

        reasoner = OfflineReasoner(embedder=opts.get("embedder"))
        if opts.get("sentence_vectors") is not None and opts.get("embedder") is not None:
            reasoner.scorer.sentence_vectors = opts["sentence_vectors"]
        return reasoner
    from engine.llm.litellm_client import LiteLLMClient
    from engine.reasoners.llm_reasoner import LLMReasoner

    client_keys = ("timeout", "max_attempts", "backoff", "max_backoff", "extra_params")
    reasoner_keys = ("extraction_style", "temperature", "max_tokens")
    unknown = set(opts) - set(client_keys) - set(reasoner_keys) - {"embedder", "sentence_vectors"}
    if unknown:
        raise TypeError(f"make_reasoner got unknown options: {', '.join(sorted(unknown))}")
    client = LiteLLMClient(
        model, api_base=api_base, api_key=api_key, cache=cache_path, **{k: opts[k] for k in client_keys if k in opts}
    )
    return LLMReasoner(client, **{k: opts[k] for k in reasoner_keys if k in opts})
