"""The verdict's values: what was checked, what each method found, spent and said."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.methods.story import Fill, Stage

__all__ = ["CompareVerdict", "Fill", "GoldFind", "GoldSpec", "MethodVerdict", "Spend", "Stage"]


@dataclass(frozen=True)
class GoldSpec:
    """What a verdict is checked against: gold answers (with aliases) and gold paragraphs, each a
    label (its title) with the chunk ids that hold it. Both may be empty (a user's own question)."""

    answers: tuple[str, ...] = ()
    paragraphs: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def label_of(self, chunk_id: str) -> str:
        return next((label for label, ids in self.paragraphs.items() if chunk_id in ids), "")


@dataclass(frozen=True)
class GoldFind:
    label: str  # the gold paragraph's title
    found_at: str = ""  # the step that first showed one of its chunks; "" = never
    used: bool | None = None  # in the answer's evidence; None before the evidence is fixed


@dataclass(frozen=True)
class Spend:
    calls: int
    tokens: int
    cost: float | None
    seconds: float

    def text(self) -> str:
        price = "price unknown" if self.cost is None else f"${self.cost:.4f}"
        calls = f"{self.calls} LLM call{'s' if self.calls != 1 else ''}"
        if not self.calls:
            return f"{calls} (offline rules), {self.seconds:.1f} s"
        return f"{calls}, {self.tokens:,} tokens, {price}, {self.seconds:.1f} s"


@dataclass(frozen=True)
class MethodVerdict:
    method: str
    title: str
    #: correct | partial | wrong | error | unknown (no gold answer) | pending (not answered yet)
    outcome: str
    answer: str
    f1: float | None
    stage: str  # the step the verdict was taken at
    fills: tuple[Fill, ...]
    gold: tuple[GoldFind, ...]
    seen: tuple[str, ...]  # chunk ids seen up to this step, in order
    evidence: tuple[str, ...]  # the answer's evidence chunk ids (empty before it is fixed)
    spend: Spend
    open_placeholders: tuple[str, ...] = ()  # still unfilled when it answered (trace.open_placeholders)
    sentence: str = ""
    story: str = ""  # the trace's `verdict_story` (engine.methods.story): how its gold finds are worded


@dataclass(frozen=True)
class CompareVerdict:
    methods: tuple[MethodVerdict, ...]
    shared: tuple[str, ...]  # chunks every method used (or saw, before the evidence is fixed)
    unique: Mapping[str, tuple[str, ...]]  # method -> chunks only it used (or saw)
    headline: str
    final: bool  # every method has answered

    def by_method(self, method: str) -> MethodVerdict | None:
        return next((m for m in self.methods if m.method == method), None)
