"""A method's steps as its view numbers them, for Compare's verdict (engine.verdict).

A trace type tells its own story through two optional hooks, so the verdict never branches on a
method's name:

    trace.verdict_stages() -> list[Stage]   # what each step showed first (default: retrieval, answer)
    trace.verdict_story: str                # how to word where the gold was found (text.GOLD_STORIES):
                                            # "fills" (rounds that fill placeholders), "expansion"
                                            # (seeds, then hops), "" (one retrieval)
    trace.open_placeholders() -> tuple[str, ...]   # still unfilled when it answered (optional)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    """One step of a method as its view numbers it: the chunks it saw first there and the
    placeholders it filled there. `context` marks the step where the answer's evidence is fixed."""

    label: str
    seen: tuple[str, ...] = ()
    fills: tuple[Fill, ...] = ()
    context: bool = False


@dataclass(frozen=True)
class Fill:
    """A placeholder value and the evidence the solver named for it ("P3", "C1")."""

    placeholder: str
    value: str
    source: str
    stage: str
