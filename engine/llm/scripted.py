"""`ScriptedLLM`: an `LLM` that answers from a script, for unit tests of the methods.

    llm = ScriptedLLM(['{"triplets": [["X", "director", "?d"]]}', '{"bindings": {"?d": "Y"}}', "Y"])
    llm = ScriptedLLM(lambda messages: "yes")

A script item may be a reply string, a `Completion` (returned as is), or an exception instance
(raised, to test fault handling). Token counts are whitespace word counts, so tests can predict
them. Every prompt received is kept in `.prompts`, in call order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.llm.base import Completion
from engine.llm.cache import ResponseCache
from engine.llm.cached import CachedLLM

ScriptItem = str | Completion | BaseException


class ScriptExhausted(AssertionError):
    """The code under test made more LLM calls than the script has replies."""


class ScriptedLLM(CachedLLM):
    """`cache`: a `ResponseCache` to put in front of the script, as the litellm client has one (a
    hit does not reach the script and is not in `.prompts`)."""

    def __init__(
        self,
        script: list[ScriptItem] | Callable[[list[dict[str, str]]], ScriptItem],
        model: str = "scripted",
        *,
        cost_per_call: float | None = 0.0,
        repeat_last: bool = False,
        cache: ResponseCache | None = None,
    ):
        self.model = model
        self.cache = cache
        self._script = script if callable(script) else list(script)
        self._next = 0
        self.cost_per_call = cost_per_call
        self.repeat_last = repeat_last
        self.prompts: list[list[dict[str, str]]] = []
        self.params: list[dict] = []
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return len(self.prompts)

    def _forward(self, messages: list[dict[str, str]], params: dict) -> Completion:
        with self._lock:
            self.prompts.append(messages)
            self.params.append(params)
            if callable(self._script):
                item = self._script(messages)
            else:
                if self._next >= len(self._script):
                    if not (self.repeat_last and self._script):
                        raise ScriptExhausted(
                            f"ScriptedLLM: call {self._next + 1} but the script has {len(self._script)} replies"
                        )
                    item = self._script[-1]
                else:
                    item = self._script[self._next]
                self._next += 1
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Completion):
            return item
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        return Completion(
            text=item,
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(item.split()),
            cost=self.cost_per_call,
            latency=0.0,
        )
