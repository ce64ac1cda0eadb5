"""The method view contract: how the front end reads any method's result, without naming it. Data
only: nothing here draws (components/methods/base.py draws a result through it), so every floor of
the front end may import it.

A method's registry entry (engine/methods/registry.py `MethodInfo.view`) names its view module by
dotted path; the engine never imports it. A view module MUST provide

    steps(result, names: dict[str, str] | None) -> list[Step]     # components.steps.Step

(plain-text steps: what presentation mode walks, the HTML export embeds and, by default, what the
app's stepper draws). Everything else is OPTIONAL; `View` fills in a generic default derived from
`steps()` and the trace's `chunk_ids()`:

    show(result, corpus, state_key, gold)          the whole result with its own stepper (drawn by
                                                   components.methods.base.show)
    show_step(result, pos, corpus, gold, shared)   one step (Compare moves several columns together;
                                                   components.methods.base.show_step)
    step_labels(result) -> list[str]               the stepper's labels (engine.verdict numbers the same)
    evidence_chain(result) -> list[Citation]       answer <- value <- source <- chunk (default: none)
    caveat(result) -> (kind, why)                  the answer box's "why empty" / "best guess" words
    first_stage(result) -> str                     its first retrieval stage, named as it ran
    fair_reference(result) -> str | None           the registry name of the baseline to read it beside
    trace_chunk_texts(result) -> {chunk id: (title, text)}   chunk copies the trace keeps (citations)
    node_chunks(result) -> {graph node: [chunk ids]}  which chunks state a graph node (export clicks)
    COLOR: str                                     its colour on charts and verdict strips
    PAGE: PageText                                 its own page's menu entry, heading and caption (a method
                                                   whose registry entry names a `page`; default: its title)

    view_for(result_or_method_name).steps(result, names)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from components.steps import Section, Step

#: the view of a method with no registry entry (e.g. an old run of a method since removed)
DEFAULT_VIEW = "components.methods.baseline"


@dataclass(frozen=True)
class PageText:
    """The words of a method's own page: its menu entry and icon, its heading, one caption line."""

    nav: str
    icon: str
    title: str
    caption: str = ""


class MethodView(Protocol):
    """What a view module must provide; the rest is optional (see the module docstring)."""

    def steps(self, result: Any, names: dict[str, str] | None = None) -> list[Step]: ...


def answer_only(result) -> list[Step]:
    """The one step of a result with no trace (a failed run, an uploaded file without one)."""
    lines = [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])
    return [Step("Answer", [Section("Answer", lines)])]


def view_for(result_or_method: Any) -> View:
    """The view of a result (by its `method`) or of a registry name."""
    from engine.methods.registry import METHODS

    name = result_or_method if isinstance(result_or_method, str) else getattr(result_or_method, "method", "")
    info = METHODS.get(name)
    return View(importlib.import_module(getattr(info, "view", "") or DEFAULT_VIEW))


def traced(result) -> bool:
    """The result has a typed trace to draw (not none, not the raw dict of an unknown method)."""
    trace = getattr(result, "trace", None)
    return trace is not None and not isinstance(trace, dict)


class View:
    """A view module with the contract's generic defaults filled in."""

    def __init__(self, module: Any):
        self.module = module

    def _own(self, name: str):
        return getattr(self.module, name, None)

    @property
    def color(self) -> str | None:
        return self._own("COLOR")

    def page_text(self, title: str) -> PageText:
        """Its page's words (`PAGE`), else the method's registry title everywhere."""
        own = self._own("PAGE")
        return own if isinstance(own, PageText) else PageText(title, "🔎", title)

    def steps(self, result, names: dict[str, str] | None = None) -> list[Step]:
        if not traced(result):
            return answer_only(result)
        return self.module.steps(result, names) or answer_only(result)

    def step_labels(self, result) -> list[str]:
        own = self._own("step_labels")
        return own(result) if own else [s.title for s in self.steps(result)]

    def evidence_chain(self, result) -> list:
        own = self._own("evidence_chain")
        return own(result) if own and traced(result) else []

    def caveat(self, result) -> tuple[str, str]:
        own = self._own("caveat")
        if own and traced(result):
            return own(result)
        if not (result.answer or "").strip():
            method = getattr(result, "method", "") or "the method"
            return "empty", getattr(result, "stop_reason", "") or f"{method} returned no answer"
        return "", ""

    def first_stage(self, result) -> str:
        own = self._own("first_stage")
        return own(result) if own else ""

    def fair_reference(self, result) -> str | None:
        own = self._own("fair_reference")
        return own(result) if own else None

    def chunk_ids(self, result) -> list[str]:
        """Every chunk id the result mentions: its evidence, then the trace's `chunk_ids()`."""
        ids = list(result.evidence_chunk_ids)
        hook = getattr(getattr(result, "trace", None), "chunk_ids", None)
        return list(dict.fromkeys(ids + (list(hook()) if callable(hook) else [])))

    def trace_chunk_texts(self, result) -> dict[str, tuple[str, str]]:
        own = self._own("trace_chunk_texts")
        return own(result) if own and traced(result) else {}

    def node_chunks(self, result) -> dict[str, list[str]]:
        own = self._own("node_chunks")
        return own(result) if own and traced(result) else {}


def result_steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """The result's steps from its view; `names` (chunk id -> "title · chunk n") names chunks."""
    return view_for(result).steps(result, names)
