"""Deadlines: how long one question (or one extraction call) may wait for providers in all.

    with within(120, "question"):
        result = method.answer(question, corpus)

Every LLM request inside the block gets at most the time left as its timeout, retries and their
backoff count inside it, and once it has passed the next request fails at once with
`LLMError(kind="deadline")`: "the provider did not answer within 120 s (the question's deadline)".
Methods record that like any provider failure, so the trace says why the question stopped. The
deadline lives in a context variable: each thread (each eval worker) sets its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from engine.llm.base import LLMError


@dataclass(frozen=True)
class Deadline:
    at: float  # time.monotonic() value
    seconds: float
    what: str

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def error(self) -> LLMError:
        return LLMError(
            f"the provider did not answer within {self.seconds:g} s (the {self.what}'s deadline); "
            "it is set by TRIPLET_LENS_QUESTION_DEADLINE / TRIPLET_LENS_CALL_DEADLINE",
            kind="deadline",
        )


_current: ContextVar[Deadline | None] = ContextVar("triplet_lens_deadline", default=None)


@contextmanager
def within(seconds: float | None, what: str = "question") -> Iterator[None]:
    """Bound the provider time of the block; None or <= 0 means no deadline. A deadline inside
    another keeps the earlier of the two."""
    if not seconds or seconds <= 0:
        yield
        return
    new = Deadline(time.monotonic() + seconds, float(seconds), what)
    outer = _current.get()
    token = _current.set(new if outer is None or new.at < outer.at else outer)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Deadline | None:
    return _current.get()


def clamp(timeout: float) -> float:
    """`timeout` cut to the time left; raises the deadline's LLMError when nothing is left."""
    d = _current.get()
    if d is None:
        return timeout
    left = d.remaining()
    if left <= 0.05:
        raise d.error()
    return min(timeout, left)
