"""What every `LLM` does around its one request: the response cache and the `Completion` of a reply
not bought now. DSPy's shape: one base class adds the cache around a single `_forward`.

    class MyLLM(CachedLLM):
        def _forward(self, messages, params) -> Completion: ...   # the one request

`complete` looks the request up in `cache` (keyed by model, endpoint, prompt and sampling params,
never a key), answers a hit with its token counts kept, $0, no latency and `cached=True`, and stores
a non-empty reply. The litellm client, the scripted test client and the what-if replay client are
`CachedLLM`s; only the litellm client is given a cache by default.
"""

from __future__ import annotations

from typing import Any

from engine.llm.base import Completion
from engine.llm.cache import CachedResponse, ResponseCache, cache_key


def not_bought(
    text: str, model: str, prompt_tokens: int, completion_tokens: int, *, replayed: bool = False
) -> Completion:
    """A reply taken from a store (the response cache, or a recorded run when `replayed`): its token
    counts are kept, so a method's size does not depend on a warm cache, but it cost nothing now and
    usage trackers skip it."""
    return Completion(
        text=text,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost=0.0,
        latency=0.0,
        cached=True,
        attempts=0,
        replayed=replayed,
    )


class CachedLLM:
    """An `LLM` whose subclasses implement `_forward` only."""

    model: str = ""
    api_base: str = ""
    cache: ResponseCache | None = None

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> Completion:
        params = self._params(temperature, max_tokens, json_mode)
        key = cache_key(self.model, self.api_base, messages, params) if self.cache is not None else ""
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return not_bought(hit.text, self.model, hit.prompt_tokens, hit.completion_tokens)
        reply = self._forward(messages, params)
        if self.cache is not None and reply.text.strip():
            self.cache.put(key, CachedResponse(reply.text, self.model, reply.prompt_tokens, reply.completion_tokens))
        return reply

    def _params(self, temperature: float, max_tokens: int | None, json_mode: bool) -> dict[str, Any]:
        """Everything besides the prompt that decides the reply (the cache key holds it)."""
        return {"temperature": temperature, "max_tokens": max_tokens, "json_mode": json_mode}

    def _forward(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        """The one request: a reply to `messages` with `params` (from `_params`)."""
        raise NotImplementedError
