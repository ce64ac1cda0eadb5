"""A run's timeline (engine.runs.timeline): steps and LLM calls as horizontal bars on a time axis, the
calls under the step that made them, so a presenter can point at where time and money went.

Plotly draws it: a Gantt chart is a bar chart with a base per bar, and plotly's hover, zoom and
patterns (the hatch of a cached or replayed call) come with it. Every string from a trace is
escaped for plotly's small HTML subset before it reaches a label or a hover.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import streamlit as st

from components.shell.state import sticky_expander
from engine.runs.timeline import Span, timeline, tree_rows

#: step / LLM call / offline-rules step; free calls are grey and hatched, failed ones red
KIND_COLORS = {"run": "#5b6b7f", "step": "#8fb3d9", "llm": "#e9a23b", "rules": "#9cc5a1"}
FREE_COLOR = "#c9c9c9"
ERROR_COLOR = "#d64545"
LABEL_CHARS = 34  # a longer label is cut with "…" (the hover has it whole)
_PLOTLY = {"displayModeBar": False}


def _p(text: object) -> str:
    """Plain text for plotly, which reads a subset of HTML in labels and hovers."""
    return html.escape(str(text), quote=False)


def _money(cost: float | None) -> str:
    return "price unknown" if cost is None else f"${cost:.5f}"


def is_free(s: Span) -> bool:
    return s.kind in ("llm", "rules") and (s.cached or s.replayed)


def bar_color(s: Span) -> str:
    """Red for a failed call (or a step holding one), grey for a free call, else the kind's colour."""
    if s.error:
        return ERROR_COLOR
    return FREE_COLOR if is_free(s) else KIND_COLORS.get(s.kind, "#999")


def row_label(s: Span, prefix: str) -> str:
    """The tree prefix and the label, cut to LABEL_CHARS."""
    text = prefix + s.label
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def bar_text(s: Span) -> str:
    """What the bar says (also the legend a presenter reads aloud)."""
    if s.error and s.kind in ("llm", "rules"):
        return f"failed · {s.duration:.2f}s"
    if s.kind in ("llm", "rules") and (s.cached or s.replayed):
        return "replayed, $0" if s.replayed else "cached, $0"
    if s.kind == "rules":
        return f"{s.duration:.2f}s · rules, $0"
    # seconds and dollars fit beside a bar in a half-width column; tokens are in the hover
    if not s.tokens:
        return f"{s.duration:.2f}s"
    return f"{s.duration:.2f}s · " + ("$0" if s.cost == 0 else _money(s.cost))


def hover_lines(s: Span) -> list[str]:
    """The hover of a bar as plain-text lines (the caller escapes them for its sink)."""
    lines = [s.label, f"start {s.start:.2f}s · {s.duration:.3f}s" + ("" if s.timed else " (not timed)")]
    if s.tokens or s.kind == "llm":
        lines.append(f"{s.prompt_tokens:,} prompt + {s.completion_tokens:,} completion tokens · {_money(s.cost)}")
    if s.replayed:
        lines.append("replayed from the first run: free and instant")
    elif s.cached:
        lines.append("from the response cache: $0")
    if s.error:
        lines.append(f"failed: {s.error[:120]}")
    if s.detail:
        lines.append(s.detail[:160])
    return lines


def _hover(s: Span) -> str:
    first, *rest = hover_lines(s)
    return "<br>".join([f"<b>{_p(first)}</b>", *(_p(x) for x in rest)])


def run_seconds(result) -> float:
    """How long a result's timeline is (to put several on one time scale)."""
    spans = timeline(result)
    return max((s.end for s in spans), default=0.0)


def figure(spans: list[Span], height: int | None = None, x_max: float | None = None) -> go.Figure:
    """One row per span, depth first; the labels draw the tree (monospace, so the nesting lines up).
    `x_max` puts timelines shown side by side on one time scale."""
    rows_ = tree_rows(spans)
    ordered = [s for s, _, _ in rows_]
    labels = [row_label(s, prefix) for s, _, prefix in rows_]
    width = max((len(x) for x in labels), default=0)
    total = max([s.end for s in spans] + [x_max or 0.0]) or 1.0
    rows = list(range(len(ordered)))
    free = [is_free(s) and not s.error for s in ordered]
    # a long bar carries its text inside, a short one beside it (so no text runs off the chart)
    inside = [s.duration > total * 0.45 for s in ordered]
    bar = go.Bar(
        orientation="h",
        y=rows,
        base=[s.start for s in ordered],
        x=[max(s.duration, total * 0.004) for s in ordered],  # a free call still shows as a sliver
        marker=dict(
            color=[bar_color(s) for s in ordered],
            pattern=dict(shape=["/" if f else "" for f in free], fgcolor="#777"),
        ),
        text=[_p(bar_text(s)) for s in ordered],
        textposition=["inside" if i else "outside" for i in inside],
        insidetextanchor="end",
        textfont=dict(size=11),
        cliponaxis=False,
        hovertext=[_hover(s) for s in ordered],
        hoverinfo="text",
        showlegend=False,
    )
    # the layout in one dict, validated once (update_yaxes/update_xaxes walk and validate it again:
    # ~4 ms of every result page's run, under the interpreter lock other visitors wait on)
    layout = dict(
        # right-aligned tick labels padded to one width read as a left-aligned tree
        yaxis=dict(
            tickvals=rows,
            ticktext=[_p(x.ljust(width, "\u00a0")) for x in labels],
            tickfont=dict(family="ui-monospace, Menlo, Consolas, monospace", size=11),
            autorange="reversed",
            automargin=True,
        ),
        xaxis=dict(title=dict(text="seconds into the run"), range=[0, total * 1.5], zeroline=True, ticksuffix="s"),
        height=height or 90 + 24 * len(ordered),
        margin=dict(l=10, r=10, t=10, b=40),
        bargap=0.25,
    )
    fig = go.Figure(data=[bar], layout=layout)
    return fig


def summary(spans: list[Span]) -> str:
    """One line: where the time and the money went."""
    root = spans[0]
    steps = [s for s in spans if s.parent == root.id]
    slow = max(steps, key=lambda s: s.duration, default=None)
    dear = max(steps, key=lambda s: s.cost or 0.0, default=None)
    calls = [s for s in spans if s.kind == "llm"]
    failed = sum(1 for s in calls if s.error)
    free = sum(1 for s in calls if s.cached or s.replayed)
    out = f"{root.duration:.2f}s in {len(steps)} steps · "
    if not calls:
        out += "offline rules: no LLM call, no tokens, $0"
    else:
        out += f"{len(calls)} LLM calls" + (f" ({free} free: cached or replayed)" if free else "")
        out += f" · {root.tokens:,} tokens · {_money(root.cost)}"
    if failed:
        out += f" · {failed} failed"
    if slow is not None and slow.duration > 0:
        out += f" · slowest: {slow.label} ({slow.duration:.2f}s)"
    if dear is not None and (dear.cost or 0) > 0:
        out += f" · dearest: {dear.label} ({_money(dear.cost)})"
    return out


def legend(spans: list[Span]) -> str:
    """What the colours mean, naming only the kinds this timeline has."""
    has = {s.kind for s in spans}
    parts = ["steps (blue)"]
    if any(s.kind == "llm" and not is_free(s) for s in spans):
        parts.append("LLM calls (orange)")
    if "rules" in has:
        parts.append("offline-rules steps (green, no LLM, $0)")
    if any(is_free(s) for s in spans if s.kind == "llm"):
        parts.append("grey hatched = cached or replayed, free")
    if any(s.error for s in spans):
        parts.append("red = failed call")
    return "Bars: " + "; ".join(parts) + "."


def show_timeline(
    result,
    key: str,
    expanded: bool = False,
    height: int | None = None,
    in_expander: bool = True,
    x_max: float | None = None,
    title: str = "**⏱ Timeline**",
) -> None:
    """The timeline of one result, in an expander unless `in_expander` is off (Streamlit allows no
    expander inside another); nothing when the trace has no step to draw. Timelines drawn side by
    side pass the longest run's seconds as `x_max`, so equal lengths mean equal times."""
    spans = timeline(result)
    if len(spans) < 2:
        return
    if in_expander:
        with sticky_expander("⏱ Timeline: where time and money went", f"{key}_timeline_open", expanded):
            _draw(spans, key, height, x_max)
    else:
        st.markdown(title)
        _draw(spans, key, height, x_max, summary_below=True)


def _draw(
    spans: list[Span], key: str, height: int | None, x_max: float | None = None, summary_below: bool = False
) -> None:
    # side by side, the one-line summary goes under the chart: its length differs per method, and a
    # line that wraps in one column only would set that chart lower than its neighbour
    if not summary_below:
        st.caption(summary(spans))
    st.plotly_chart(figure(spans, height, x_max), key=f"{key}_timeline", config=_PLOTLY)
    if summary_below:
        st.caption(summary(spans))
    st.caption(legend(spans))
