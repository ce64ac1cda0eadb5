"""A run as a timeline, as trace explorers (Langfuse, Phoenix) draw one: steps as bars on a time
axis with their latency, tokens and cost, each LLM call nested under the step that made it.

    spans = timeline(result)            # [Span]: the run, its steps, their calls, in start order
    print("\\n".join(timeline_table(spans)))

Built from what the trace records, nothing re-run. The methods time their steps one after the other
(T2RAG: decomposition / round / synthesis seconds, KG2RAG and the baselines: `timings` per step,
IRCoT: retrieval and call seconds), so a step starts where the previous one ended. A trace without
times (an old file, a hand-written one) still gives a timeline: a step then lasts as long as its
calls' latencies and is marked `timed=False`.

The sums hold by construction: the run span's tokens are the trace's `Usage` tokens (every call,
cache hits included), its cost the billed dollars (a cached or replayed call costs $0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.llm.base import OFFLINE_MODEL, LLMCall


@dataclass
class Span:
    id: int
    parent: int | None
    kind: str  # run | step | llm (a model call) | rules (a step the offline rules did: no tokens, no cost)
    label: str
    start: float  # seconds from the start of the run
    duration: float
    detail: str = ""  # one line a presenter reads in the hover ("5 chunks, 2 bindings")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0  # None: some billed call had no known price
    cached: bool = False
    replayed: bool = False
    error: str = ""
    timed: bool = True  # False: the trace recorded no time for this step; its length is its calls'

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def end(self) -> float:
        return self.start + self.duration


def _add_cost(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


class _Builder:
    def __init__(self, label: str, detail: str = ""):
        self.spans = [Span(0, None, "run", label, 0.0, 0.0, detail)]
        self.cursor = 0.0

    def _new(self, **kw: Any) -> Span:
        span = Span(id=len(self.spans), **kw)
        self.spans.append(span)
        return span

    def call(self, call: LLMCall | None, parent: Span, offset: float = 0.0, at_end: bool = False) -> None:
        """An LLM call under `parent`, `offset` seconds into it (or ending with it)."""
        if call is None:
            return
        rules = call.model == OFFLINE_MODEL
        free = call.cached or call.replayed
        if rules and not free and parent.kind == "step":
            self._fold_rules(call, parent)
            return
        duration = call.latency if (rules or not free) else 0.0
        start = parent.start + (max(0.0, parent.duration - duration) if at_end else offset)
        tokens = (0, 0) if rules else (call.prompt_tokens, call.completion_tokens)
        cost = 0.0 if rules or free else call.cost
        span = self._new(
            parent=parent.id,
            kind="rules" if rules else "llm",
            label=f"{call.job} ({call.model})" if call.model else call.job,
            start=start,
            duration=duration,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
            cost=cost,
            cached=call.cached and not rules,
            replayed=call.replayed,
            error=call.error,
        )
        self._roll_up(span)

    @staticmethod
    def _fold_rules(call: LLMCall, step: Span) -> None:
        """An offline-rules "call" is the step itself (no model, no tokens, $0, the step's own
        time): the step is drawn as a rules step, not given a child bar of the same length."""
        step.kind = "rules"
        step.detail = "; ".join(x for x in (step.detail, "offline rules, no LLM call") if x)
        step.error = step.error or call.error

    def _roll_up(self, span: Span) -> None:
        """Add a call's tokens and cost to every span above it."""
        parent = span.parent
        while parent is not None:
            up = self.spans[parent]
            up.prompt_tokens += span.prompt_tokens
            up.completion_tokens += span.completion_tokens
            up.cost = _add_cost(up.cost, span.cost)
            parent = up.parent

    def step(
        self, label: str, seconds: float, calls: list[LLMCall | None], detail: str = "", parent: Span | None = None
    ) -> Span:
        """A step after the previous one (or at `parent`'s cursor); untimed ones last as long as their calls."""
        timed = seconds > 0
        # a step lasts at least as long as its calls waited (a step's clock and the provider's
        # latency are read apart; a trace without step times has only the latter)
        seconds = max(seconds, sum(c.latency for c in calls if c is not None and not (c.cached or c.replayed)))
        parent_id = (parent or self.spans[0]).id
        span = self._new(
            parent=parent_id, kind="step", label=label, start=self.cursor, duration=seconds, detail=detail, timed=timed
        )
        self.cursor += seconds
        return span

    def finish(self, total: float) -> list[Span]:
        root = self.spans[0]
        root.duration = max(total, self.cursor, max((s.end for s in self.spans[1:]), default=0.0))
        root.timed = total > 0
        return sorted(self.spans, key=lambda s: (s.start, s.id))


def timeline(result: Any) -> list[Span]:
    """The spans of one `Result`: the run first, then its steps and calls in start order."""
    from engine.methods.registry import title

    tr = result.trace
    b = _Builder(title(result.method), f"{result.reasoner or '-'}: {result.answer or '(no answer)'}")
    if hasattr(tr, "rounds") and hasattr(tr, "decomposition"):
        _t2rag(b, tr)
    elif hasattr(tr, "steps") and hasattr(tr, "initial"):
        _ircot(b, tr)
    elif hasattr(tr, "timings"):
        _timed_steps(b, tr)
    return b.finish(float(getattr(result.usage, "total_time", 0.0) or 0.0))


def _t2rag(b: _Builder, tr: Any) -> None:
    d = tr.decomposition
    if d is not None:
        b.call(d.call, b.step("decompose", d.seconds, [d.call], d.state.counts()))
    for r in tr.rounds:
        t = r.timing
        detail = f"{len(r.walked)} propositions, {len(r.chunks)} chunks"
        detail += f"; {r.state_before.counts()} -> {r.state_after.counts()}"
        rnd = b.step(f"round {r.index}", t.retrieve + t.solve + t.update, [r.solve_call], detail)
        if r.solve_skipped:
            rnd.detail += f"; solve skipped: {r.solve_skipped}"
        b.cursor = rnd.start
        if t.retrieve > 0:
            b.step("retrieve", t.retrieve, [], f"{len(r.queries)} queries, no LLM call", parent=rnd)
        if r.solve_call is not None:
            b.call(r.solve_call, b.step("solve", t.solve, [r.solve_call], _bound(r), parent=rnd))
        if t.update > 0:
            b.step("update state", t.update, [], f"{len(r.newly_resolved)} newly resolved", parent=rnd)
        rnd.duration = max(rnd.duration, b.cursor - rnd.start)
        b.cursor = rnd.end
    s = tr.synthesis
    if s is not None:
        b.call(s.call, b.step(f"answer ({s.mode})", s.seconds, [s.call], s.answer))


def _bound(r: Any) -> str:
    return ", ".join(f"{x.placeholder}={x.value}" for x in r.bindings if x.applied_to) or "no binding"


def _timed_steps(b: _Builder, tr: Any) -> None:
    """KG2RAG and the baselines: `timings` holds seconds per step in run order; the one LLM call is
    made at the end of `generate`."""
    timings = {k: float(v) for k, v in (tr.timings or {}).items() if k != "total"}
    if "generate" not in timings:
        timings["generate"] = 0.0
    for name, seconds in timings.items():
        call = tr.call if name == "generate" else None
        span = b.step(name, seconds, [call], _detail(tr, name))
        b.call(call, span, at_end=True)


def _detail(tr: Any, step: str) -> str:
    if step == "seed":
        return f"{len(getattr(tr, 'seeds', []))} seed chunks"
    if step == "expand":
        return f"{sum(len(h.chunks_added) for h in getattr(tr, 'hops', []))} chunks added"
    if step == "trees":
        return f"{len(getattr(tr, 'trees', []))} trees"
    if step == "select":
        return f"{len(getattr(tr, 'selected_tree_ids', []))} trees selected"
    if step == "generate":
        return str(getattr(tr, "answer", "") or "")
    return ""


def _ircot(b: _Builder, tr: Any) -> None:
    if tr.initial is not None:
        b.step("retrieve", tr.initial.seconds, [], f"{len(tr.initial.new_chunk_ids)} chunks")
    for st in tr.steps:
        extra = st.retrieval.seconds if st.retrieval else 0.0
        span = b.step(f"step {st.index}", st.llm_seconds + extra, [st.call], st.sentence)
        b.call(st.call, span)
    if tr.answer_call is not None:
        b.call(tr.answer_call, b.step("answer", 0.0, [tr.answer_call], tr.answer))


def timeline_table(spans: list[Span], width: int = 24) -> list[str]:
    """The timeline as text (the CLI's `trace timeline`): one line per span, indented under its
    parent, with a bar on a shared time axis."""
    if not spans:
        return []
    by_id = {s.id: s for s in spans}
    total = max(s.end for s in spans) or 1.0

    def depth(s: Span) -> int:
        return 0 if s.parent is None else 1 + depth(by_id[s.parent])

    lines = [f"{'span':<34} {'start':>7} {'secs':>7} {'tokens':>7} {'cost':>10}  {'':<{width}}  notes"]
    for s in spans:
        lo = int(round(s.start / total * width))
        n = max(1, int(round(s.duration / total * width))) if s.duration > 0 else 0
        bar = (" " * lo + ("#" if s.kind in ("llm", "rules") else "=") * n or " " * lo + "|")[:width]
        cost = "unknown" if s.cost is None else f"${s.cost:.5f}"
        flags = [
            f
            for f, on in (
                ("replayed, $0", s.replayed),
                ("cached, $0", s.cached and not s.replayed),
                ("not timed", not s.timed),
                (f"error: {s.error[:40]}", bool(s.error)),
            )
            if on
        ]
        label = ("  " * depth(s) + s.label)[:34]
        lines.append(
            f"{label:<34} {s.start:7.2f} {s.duration:7.2f} {s.tokens:7d} {cost:>10}  {bar:<{width}}  {', '.join(flags)}"
        )
    return lines


def tree_rows(spans: list[Span]) -> list[tuple[Span, int, str]]:
    """The spans depth first (each step right under its parent, siblings in start order) with their
    depth and a tree prefix (`├ `, `│ └ `) that draws the nesting in a column of labels."""
    children: dict[int | None, list[Span]] = {}
    for s in sorted(spans, key=lambda s: (s.start, s.id)):
        children.setdefault(s.parent, []).append(s)
    ids = {s.id for s in spans}
    roots = [s for s in spans if s.parent is None or s.parent not in ids]
    out: list[tuple[Span, int, str]] = []

    def walk(span: Span, depth: int, lead: str, last: bool) -> None:
        out.append((span, depth, "" if depth == 0 else lead + ("└ " if last else "├ ")))
        kids = children.get(span.id, [])
        below = "" if depth == 0 else lead + ("  " if last else "│ ")
        for i, kid in enumerate(kids):
            walk(kid, depth + 1, below, i == len(kids) - 1)

    for r in roots:
        walk(r, 0, "", True)
    return out
