"""A run's timeline (engine.timeline): steps and LLM calls as horizontal bars on a time axis, the
calls under the step that made them, so a presenter can point at where time and money went.

Plotly draws it: a Gantt chart is a bar chart with a base per bar, and plotly's hover, zoom and
patterns (the hatch of a cached or replayed call) come with it. Every string from a trace is
escaped for plotly's small HTML subset before it reaches a label or a hover.
"""
from __future__ import annotations

import html

import plotly.graph_objects as go
import streamlit as st

from engine.timeline import Span, timeline

#: step / LLM call / offline-rules step; free calls are grey and hatched
KIND_COLORS = {"run": "#5b6b7f", "step": "#8fb3d9", "llm": "#e9a23b", "rules": "#9cc5a1"}
FREE_COLOR = "#c9c9c9"
_PLOTLY = {"displayModeBar": False}


def _p(text: object) -> str:
    """Plain text for plotly, which reads a subset of HTML in labels and hovers."""
    return html.escape(str(text), quote=False)


def _money(cost: float | None) -> str:
    return "price unknown" if cost is None else f"${cost:.5f}"


def bar_text(s: Span) -> str:
    """What the bar says (also the legend a presenter reads aloud)."""
    if s.kind in ("llm", "rules") and (s.cached or s.replayed):
        return ("replayed" if s.replayed else "cached") + f", $0 · {s.tokens:,} tok"
    if s.kind == "rules":
        return f"{s.duration:.2f}s · rules, $0"
    parts = [f"{s.duration:.2f}s"]
    if s.tokens:
        parts += [f"{s.tokens:,} tok", _money(s.cost)]
    return " · ".join(parts)


def _hover(s: Span) -> str:
    lines = [f"<b>{_p(s.label)}</b>", f"start {s.start:.2f}s · {s.duration:.3f}s" + ("" if s.timed else " (not timed)")]
    if s.tokens or s.kind == "llm":
        lines.append(f"{s.prompt_tokens:,} prompt + {s.completion_tokens:,} completion tokens · {_money(s.cost)}")
    if s.replayed:
        lines.append("replayed from the first run: free and instant")
    elif s.cached:
        lines.append("from the response cache: $0")
    if s.error:
        lines.append(f"error: {_p(s.error[:120])}")
    if s.detail:
        lines.append(_p(s.detail[:160]))
    return "<br>".join(lines)


def figure(spans: list[Span], height: int | None = None) -> go.Figure:
    """One row per span, in start order; indentation shows nesting."""
    by_id = {s.id: s for s in spans}

    def depth(s: Span) -> int:
        return 0 if s.parent is None else 1 + depth(by_id[s.parent])

    total = max((s.end for s in spans), default=0.0) or 1.0
    rows = list(range(len(spans)))
    free = [s.kind in ("llm", "rules") and (s.cached or s.replayed) for s in spans]
    fig = go.Figure(go.Bar(
        orientation="h", y=rows, base=[s.start for s in spans],
        x=[max(s.duration, total * 0.004) for s in spans],  # a free call still shows as a sliver
        marker=dict(color=[FREE_COLOR if f else KIND_COLORS.get(s.kind, "#999") for s, f in zip(spans, free)],
                    pattern=dict(shape=["/" if f else "" for f in free], fgcolor="#777")),
        text=[bar_text(s) for s in spans], textposition="outside", cliponaxis=False,
        hovertext=[_hover(s) for s in spans], hoverinfo="text", showlegend=False))
    fig.update_yaxes(tickvals=rows, ticktext=[_p("\u2003" * depth(s) + s.label) for s in spans],
                     autorange="reversed", automargin=True)
    fig.update_xaxes(title_text="seconds from the start of the run", range=[0, total * 1.35], zeroline=True)
    fig.update_layout(height=height or 90 + 26 * len(spans), margin=dict(l=10, r=10, t=10, b=40),
                      bargap=0.25, uniformtext_minsize=9)
    return fig


def summary(spans: list[Span]) -> str:
    """One line: where the time and the money went."""
    root = spans[0]
    steps = [s for s in spans if s.parent == root.id]
    slow = max(steps, key=lambda s: s.duration, default=None)
    dear = max(steps, key=lambda s: s.cost or 0.0, default=None)
    calls = [s for s in spans if s.kind == "llm"]
    free = sum(1 for s in calls if s.cached or s.replayed)
    out = f"{root.duration:.2f}s in {len(steps)} steps · {len(calls)} LLM calls"
    out += f" ({free} free: cached or replayed)" if free else ""
    out += f" · {root.tokens:,} tokens · {_money(root.cost)}"
    if slow is not None and slow.duration > 0:
        out += f" · slowest: {slow.label} ({slow.duration:.2f}s)"
    if dear is not None and (dear.cost or 0) > 0:
        out += f" · dearest: {dear.label} ({_money(dear.cost)})"
    return out


def show_timeline(result, key: str, expanded: bool = False, height: int | None = None,
                  in_expander: bool = True) -> None:
    """The timeline of one result, in an expander unless `in_expander` is off (Streamlit allows no
    expander inside another); nothing when the trace has no step to draw."""
    spans = timeline(result)
    if len(spans) < 2:
        return
    if in_expander:
        with st.expander("⏱ Timeline: where time and money went", expanded=expanded):
            _draw(spans, key, height)
    else:
        st.markdown("**⏱ Timeline**")
        _draw(spans, key, height)


def _draw(spans: list[Span], key: str, height: int | None) -> None:
    st.caption(summary(spans))
    st.plotly_chart(figure(spans, height), key=f"{key}_timeline", config=_PLOTLY)
    st.caption("Bars: steps (blue), LLM calls (orange), offline-rules steps (green); "
               "grey hatched = cached or replayed, free.")
