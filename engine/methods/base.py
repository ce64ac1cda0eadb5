"""The method protocol every method shares (T2RAG, KG2RAG, the baselines), and its result.

A method is a small object built with its models (`T2RAG(reasoner)`), answering one question at a
time against an opened corpus:

    result = method.answer(question, corpus, settings, on_step=print_step)

`Result` carries the answer, the method's own typed trace, the usage totals and the ids of the
chunks the method finally used as evidence (what the evaluator scores and the Compare page
overlaps). `save_result` / `load_result` round-trip it through JSON with a schema version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from engine.core import serde
from engine.llm.base import OFFLINE_MODEL, LLMCall
from engine.methods.departure import Departure
from engine.methods.inputs import PaperInputs, RunInputs
from engine.store.protocol import CorpusView

TRACE_SCHEMA_VERSION = 1

#: on_step(label, payload): label is a short human string ("round 2: retrieve"); payload is the
#: trace fragment just completed (a dataclass) or None. The CLI prints labels; the app shows them.
StepCallback = Callable[[str, Any], None]


@dataclass
class Usage:
    """Totals over a question's LLM calls.

    `prompt_tokens` / `completion_tokens` are the tokens the method *needs*: every call counts,
    cache hits included, so a method's size does not depend on a warm cache (the T2RAG-vs-IRCoT
    token comparison stays fair on reruns and resumed evals). `billed_*` and `cost` are what this
    run paid: a cache hit costs nothing."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    billed_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    cost: float | None = 0.0  # None when any billed call had an unknown price
    llm_time: float = 0.0
    engine_time: float = 0.0
    total_time: float = 0.0

    @classmethod
    def from_calls(cls, calls: list[LLMCall], total_time: float) -> Usage:
        u = cls(total_time=total_time)
        for c in calls:
            if c.model == OFFLINE_MODEL:
                # rule steps are recorded in the trace but are not LLM calls
                continue
            u.calls += 1
            u.prompt_tokens += c.prompt_tokens
            u.completion_tokens += c.completion_tokens
            if c.cached:
                u.cached_calls += 1
                continue
            u.billed_prompt_tokens += c.prompt_tokens
            u.billed_completion_tokens += c.completion_tokens
            u.llm_time += c.latency
            if c.cost is None or u.cost is None:
                u.cost = None
            else:
                u.cost += c.cost
        u.engine_time = max(0.0, total_time - u.llm_time)
        return u


@dataclass
class Result:
    method: str
    question: str
    answer: str
    usage: Usage
    evidence_chunk_ids: list[str] = field(default_factory=list)
    stop_reason: str = ""
    error: str = ""  # set when the method could not run at all (e.g. IRCoT without a real LLM)
    reasoner: str = ""  # `offline-rules` or the model string
    trace: Any = None  # the method's own trace dataclass
    schema_version: int = TRACE_SCHEMA_VERSION
    inputs: RunInputs | None = None  # embedder, triplet source, reranker, reasoner (Session.run_method)


class Method(Protocol):
    """What every method class provides: everything its callers use, and nothing else.

    The registry builds it as `cls(reasoner)` (`build_method`); the session runs `answer`; the CLI,
    the app, eval and the presets read `name`, `settings_cls` (a frozen dataclass whose defaults
    are the `tuned` preset; a `paper()` classmethod on it marks a method with a paper of its own)
    and call `summarize(result)` on the class (a static method: no instance is built to print a
    result). What the rest of the product knows of a method, it reads here, never from a list keyed
    by its name: `trace_cls` (its trace dataclass; the module also registers it at import,
    `register_trace(name, TraceCls)`, so a saved run loads back as that type), `whatif_knobs` (the
    settings a what-if offers, with the range a demo visitor may pick), `preset_reasons` /
    `preset_fixes` / `run_departures` (how its presets depart from its paper, and why:
    engine/methods/presets.py), `paper_inputs` (what its paper fed it: the inputs line). A plug-in
    inherits `MethodDefaults` for the ones it does not need. The built-in methods are checked
    against this protocol by mypy (engine/methods/registry.py)."""

    name: str
    settings_cls: type[Any]
    trace_cls: ClassVar[type[Any]]
    whatif_knobs: ClassVar[dict[str, tuple[int, int]]]
    preset_reasons: ClassVar[dict[str, str]]
    preset_fixes: ClassVar[tuple[Departure, ...]]
    run_departures: ClassVar[tuple[Departure, ...]]
    paper_inputs: ClassVar[PaperInputs | None]

    def __init__(self, reasoner: Any) -> None: ...

    def answer(
        self, question: str, corpus: CorpusView, settings: Any = None, on_step: StepCallback | None = None
    ) -> Result: ...

    @staticmethod
    def summarize(result: Result) -> list[str]: ...


class MethodDefaults:
    """The members of `Method` a method may not need, at their empty values: inherit it and set the
    ones you use (a method with no paper of its own has no reasons, fixes or paper inputs)."""

    trace_cls: ClassVar[type[Any]] = object
    whatif_knobs: ClassVar[dict[str, tuple[int, int]]] = {}
    preset_reasons: ClassVar[dict[str, str]] = {}
    preset_fixes: ClassVar[tuple[Departure, ...]] = ()
    run_departures: ClassVar[tuple[Departure, ...]] = ()
    paper_inputs: ClassVar[PaperInputs | None] = None


class Warms(Protocol):
    """Optional: a method whose per-corpus index is worth loading before the first question (app
    start-up calls `warm(corpus)` on every method class that has it: HippoRAG 2)."""

    @staticmethod
    def warm(corpus: CorpusView) -> None: ...


# --- persistence -------------------------------------------------------------------------------

#: method name -> its trace dataclass; each method module registers itself at import.
TRACE_TYPES: dict[str, type] = {}


def register_trace(method: str, trace_cls: type) -> None:
    TRACE_TYPES[method] = trace_cls


def result_to_json(result: Result, indent: int | None = 1) -> str:
    return serde.dumps(result, indent=indent)


_METHOD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def result_from_json(text: str) -> Result:
    data = json.loads(text)
    if not isinstance(data, dict) or "method" not in data:
        raise ValueError("not a Triplet Lens trace: the JSON has no 'method' field")
    # a method name ends up in file names (saved runs): refuse anything that is not a plain name,
    # such as "../../x" in an uploaded trace
    if not isinstance(data["method"], str) or not _METHOD_NAME.fullmatch(data["method"]):
        raise ValueError(f"not a Triplet Lens trace: {str(data['method'])[:60]!r} is not a method name")
    version = data.get("schema_version")
    if version != TRACE_SCHEMA_VERSION:
        raise ValueError(f"trace schema version {version!r} is not supported (expected {TRACE_SCHEMA_VERSION})")
    from engine.methods import register_all_traces

    register_all_traces()

    trace_cls = TRACE_TYPES.get(data["method"])
    raw_trace = data.pop("trace", None)
    result = serde.from_dict(Result, data)
    result.trace = serde.from_dict(trace_cls, raw_trace) if trace_cls and raw_trace is not None else raw_trace
    return result


def save_result(result: Result, path: Path) -> None:
    serde.atomic_write_text(Path(path), result_to_json(result))


def load_result(path: Path) -> Result:
    return result_from_json(Path(path).read_text(encoding="utf-8"))
