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

ScriptItem = str | Completion | BaseException


class ScriptExhausted(AssertionError):
    """The code under test made more LLM calls than the script has replies."""


class ScriptedLLM:
    def __init__(
        self,
        script: list[ScriptItem] | Callable[[list[dict[str, str]]], ScriptItem],
        model: str = "scripted",
        *,
        cost_per_call: float | None = 0.0,
        repeat_last: bool = False,
    ):
        self.model = model
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

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> Completion:
        with self._lock:
            self.prompts.append(messages)
            self.params.append({"temperature": temperature, "max_tokens": max_tokens, "json_mode": json_mode})
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
