"""The LLM client protocol and the record of one call.

* `LLM` is a chat-completion client: messages in, `Completion` out (text, usage, cost, latency,
  cached). The litellm client and the scripted test client implement it.
* `LLMCall` is what a reasoner job puts into a method's trace: prompt, raw reply, parsed result,
  tokens, cost, latency and whether it was cached.

The reasoners (engine/reasoners) sit above this layer: the four jobs both papers need, over any `LLM`
or over rules. This package never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


class LLMError(RuntimeError):
    """A provider failure that retrying will not fix (auth, unknown model, unreachable server).

    The message names the provider and what to check; it never contains an API key.
    """

    def __init__(self, message: str, *, kind: str = "error", retryable: bool = False):
        super().__init__(message)
        # auth | not_found | unreachable | rate_limit | server | timeout | deadline | too_large | bad_request | error
        self.kind = kind
        self.retryable = retryable

    @property
    def fatal(self) -> bool:
        """The provider cannot serve any request (bad key, unknown model, nothing listening): a
        run or question stops at once instead of failing the same way for every call."""
        return self.kind in ("auth", "not_found", "unreachable")


@dataclass(frozen=True)
class Completion:
    """One chat completion as the client returns it."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # dollars from the provider's price table; None when unknown
    latency: float = 0.0  # seconds spent waiting for the provider (0 for a cache hit)
    cached: bool = False
    attempts: int = 1  # provider requests this completion took (retries included; 0 for a cache hit)
    replayed: bool = False  # taken from an earlier run's recorded call (a what-if re-run), not asked


#: The `model` of a step the offline reasoner did by rules: recorded in the trace like a call, but
#: no LLM was asked (no tokens, $0), so usage, the timeline and what-if replay skip it.
OFFLINE_MODEL = "offline-rules"


@dataclass
class LLMCall:
    """The trace record of one job call (an LLM call, or an offline-rules step).

    `messages` is the prompt exactly as sent; `response` the raw reply; `parsed` the result the
    method used (JSON-serializable). `error` is set when the call or the parse failed; the method
    then continues with a documented fallback and the trace shows what happened.
    """

    job: str  # extract | decompose | solve | answer | cot
    model: str
    messages: list[dict[str, str]] = field(default_factory=list)
    response: str = ""
    parsed: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = False
    error: str = ""
    attempts: int = 1
    #: the reply came from an earlier run's trace (engine.runs.whatif): free and instant, like a cache hit
    replayed: bool = False

    @classmethod
    def from_completion(cls, job: str, messages: list[dict[str, str]], c: Completion, **kw) -> LLMCall:
        kw.setdefault("attempts", c.attempts)
        return cls(
            job=job,
            model=c.model,
            messages=messages,
            response=c.text,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            cost=c.cost,
            latency=c.latency,
            cached=c.cached,
            replayed=c.replayed,
            **kw,
        )


@runtime_checkable
class LLM(Protocol):
    """A chat-completion client."""

    model: str

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> Completion:
        """Return one completion. Raises `LLMError` for failures retrying cannot fix."""
        ...
