"""A result told as a list of plain-text steps: what presentation mode walks and what the offline
HTML export embeds. Text only (no markup), so every consumer can show it with textContent.

Each method's view module (components/methods/) builds its own steps with these types; the
interactive pages draw richer views from the same traces (components/contract.py `result_steps`
asks the result's view for them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.graphs.static import graph_payload
from engine.llm.base import OFFLINE_MODEL
from engine.methods.registry import METHODS

__all__ = ["METHOD_TITLES", "Section", "Step", "call_summary", "call_tuples", "graph_payload", "name_of", "usage_lines"]

METHOD_TITLES = {m.name: m.title for m in METHODS.values()}  # from the engine's one registry


@dataclass
class Section:
    heading: str
    lines: list[str] = field(default_factory=list)
    #: lines that start with "[tag] " are drawn in that tag's colour (e.g. T2RAG's queues)
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Step:
    title: str
    sections: list[Section] = field(default_factory=list)
    #: LLM calls of this step, as (summary line, prompt text, raw reply) for the export
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    #: the step's graph as plain data with fixed positions (components.graphs.graph.graph_payload), if any
    graph: dict | None = None
    #: the step of the method's interactive view (and of engine.verdict's stages) this text step
    #: shows, when the two differ (e.g. one text step drawing two view steps); None: its own index
    view_step: int | None = None


def name_of(names: dict[str, str] | None, cid: str) -> str:
    """A chunk's reader name ("title · chunk n") when `names` has it, else its id."""
    return (names or {}).get(cid, cid)


def call_summary(call) -> str:
    if call is None:
        return "no call"
    if call.model == OFFLINE_MODEL:
        head = f"{call.job} · offline rules (no LLM call)"
    else:
        cost = "price unknown" if call.cost is None else f"${call.cost:.5f}"
        head = (
            f"{call.job} · {call.model} · {call.prompt_tokens}+{call.completion_tokens} tokens · {cost} · "
            f"{call.latency:.2f}s"
            + (
                " · replayed from an earlier run"
                if getattr(call, "replayed", False)
                else " · cached"
                if call.cached
                else ""
            )
        )
    return head + (" · ERROR" if call.error else "")


def _call_tuple(call) -> tuple[str, str, str]:
    prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in (call.messages or []))
    return (call_summary(call), prompt, call.response or "")


def call_tuples(*calls) -> list[tuple[str, str, str]]:
    """The LLM calls given (None skipped) as a Step's `calls`."""
    return [_call_tuple(c) for c in calls if c is not None]


def usage_lines(result, names: dict[str, str] | None = None) -> list[str]:
    u = result.usage
    cost = "unknown" if u.cost is None else f"${u.cost:.5f}"
    return [
        f"reasoner: {result.reasoner or '-'}",
        f"LLM calls: {u.calls} ({u.cached_calls} cached)",
        f"tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion (billed: "
        f"{u.billed_prompt_tokens} + {u.billed_completion_tokens}; cache hits cost nothing)",
        f"cost: {cost}",
        f"engine time: {u.engine_time:.3f}s, LLM time: {u.llm_time:.3f}s",
        f"evidence chunks: {', '.join(name_of(names, c) for c in result.evidence_chunk_ids) or '-'}",
    ]
