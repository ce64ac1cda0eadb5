"""What a method's trace may tell the evaluation about itself, so eval never names a method.

Two optional hooks on a trace class (the eval calls them when they are there; a trace without them
gets the generic treatment: every missed gold unit "not retrieved", no failure label):

    trace.recall_loss(units_of, gold, found, missing) -> LossReport
        where each missed gold unit was lost, in the method's own pipeline terms
        (`units_of(chunk_ids)` maps chunk ids to their gold units: paragraphs or sentences)
    trace.failure_facts() -> PipelineFacts
        the facts the failure labeler reads (engine/eval/failures.py): a method that decomposes
        the question into placeholders and fills them (T2RAG) gets decomposition / retrieval /
        filling / synthesis labels for its wrong answers

A leaf of `engine.methods`: traces return these types, eval reads them; neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

#: chunk ids -> {chunk id: the gold units (paragraph titles or (title, sentence) pairs) it holds}
UnitsOf = Callable[[Iterable[str]], dict[str, list[Any]]]


@dataclass
class LossReport:
    """One question's missed gold units by reason, the method's events, and (for a method that
    expands its first stage) the found units its first stage did not hold."""

    lost: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)
    gained: int = 0

    def lose(self, reason: str, n: int = 1) -> None:
        if n:
            self.lost[reason] = self.lost.get(reason, 0) + n

    def count(self, event: str, n: int = 1) -> None:
        if n:
            self.events[event] = self.events.get(event, 0) + n


class ExplainsRecallLoss(Protocol):
    #: the reasons in the order the "where recall was lost" table and docs list them (optional)
    def recall_loss(self, units_of: UnitsOf, gold: set[Any], found: set[Any], missing: set[Any]) -> LossReport: ...


@dataclass(frozen=True)
class PipelineFacts:
    """What the failure labeler needs from a placeholder-filling trace; None = the trace does not say."""

    n_query_triplets: int | None
    retrieved_chunk_ids: tuple[str, ...] | None
    open_left: int | None  # placeholders / open triplets remaining at the end
    resolved_facts: tuple[str, ...] | None


class LabelsFailures(Protocol):
    def failure_facts(self) -> PipelineFacts: ...


def get(obj: Any, name: str, default: Any = None) -> Any:
    """A trace field read defensively (an older save or a plain dict may lack it)."""
    if obj is None:
        return default
    v = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return default if v is None else v
