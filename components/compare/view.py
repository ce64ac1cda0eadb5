"""Side-by-side comparison of several methods on one question: answers, evidence overlap, costs."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.compare.verdict import method_color
from engine.methods.registry import title

#: Charts without the plotly toolbar (it covers the titles of small charts).
_PLOTLY = {"displayModeBar": False}


def _title(m: str) -> str:
    return title(m)


def scores(run) -> dict[str, tuple[float, float] | None]:
    from engine.eval.metrics import answer_score

    out: dict[str, tuple[float, float] | None] = {}
    for r in run.results:
        if run.gold:
            s = answer_score(r.answer or "", run.gold)
            out[r.method] = (s.em, s.f1)
        else:
            out[r.method] = None
    return out


def answers(run) -> None:
    sc = scores(run)
    cols = st.columns(len(run.results))
    for col, r in zip(cols, run.results):
        with col:
            st.markdown(f"#### {_title(r.method)}")
            s = sc.get(r.method)
            verdict = "" if s is None else (" ✅ correct" if s[0] == 1 else (" 🟡 partly" if s[1] > 0 else " ❌ wrong"))
            box = st.error if r.error else (st.warning if s is not None and s[1] == 0 else st.success)
            box(f"{r.answer or '(no answer)'}{verdict}")
            if s is not None:
                st.caption(f"EM {s[0]:.0f} · F1 {s[1]:.2f}")
            if r.error:
                st.caption(r.error)
            u = r.usage
            st.caption(
                f"{u.calls} LLM calls · {u.prompt_tokens + u.completion_tokens} tokens · "
                + ("price unknown" if u.cost is None else f"${u.cost:.5f}")
                + f" · engine {u.engine_time:.2f}s · LLM {u.llm_time:.2f}s"
            )
    if run.gold:
        st.caption(f"Gold answer: {' / '.join(run.gold)}")


def overlap_frame(run) -> pd.DataFrame:
    """One row per evidence chunk: which methods used it."""
    methods = [r.method for r in run.results]
    used = {r.method: list(r.evidence_chunk_ids) for r in run.results}
    order: dict[str, None] = {}
    for m in methods:
        for cid in used[m]:
            order.setdefault(cid, None)
    rows = []
    for cid in order:
        who = [m for m in methods if cid in used[m]]
        rows.append(
            {
                "chunk": cid,
                **{_title(m): ("✓" if m in who else "") for m in methods},
                "shared by": "all" if len(who) == len(methods) else ", ".join(_title(m) for m in who),
            }
        )
    return pd.DataFrame(rows, columns=["chunk"] + [_title(m) for m in methods] + ["shared by"])


def overlap(run, corpus=None) -> None:
    from components.chunk_names import chunk_names

    df = overlap_frame(run)
    sets = [set(r.evidence_chunk_ids) for r in run.results]
    shared = set.intersection(*sets) if sets else set()
    st.markdown(
        f"**Evidence overlap**: {len(shared)} chunks shared by all, "
        + ", ".join(
            f"{len(s - set().union(*(o for o in sets if o is not s)))} only in {_title(r.method)}"
            for r, s in zip(run.results, sets)
        )
    )
    if not df.empty:
        names = chunk_names(corpus, list(df["chunk"]))
        df["chunk"] = [names.get(c, c) for c in df["chunk"]]
    st.dataframe(df, hide_index=True, width="stretch")


def _bar(title: str, run, values: list[float | None], fmt: str = "") -> go.Figure:
    names = [_title(r.method) for r in run.results]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[v if v is not None else 0 for v in values],
            marker_color=[method_color(r.method, i) for i, r in enumerate(run.results)],
            text=["unknown" if v is None else format(v, fmt) for v in values],
            textposition="auto",
        )
    )
    fig.update_layout(
        title=title, height=260, margin=dict(l=10, r=10, t=40, b=10), showlegend=False, yaxis_rangemode="tozero"
    )
    return fig


def _nonzero(values: list[float | None]) -> bool:
    return any(v for v in values if v is not None)


def cost_charts(run) -> None:
    """Bar charts of calls, tokens, dollars and seconds, each only when some value is not zero
    (an empty chart with a -1..1 axis says nothing); what was left out is said in one line."""
    us = [r.usage for r in run.results]
    charts = [
        ("LLM calls", "cmp_calls", [u.calls for u in us], "d"),
        ("Tokens (prompt + completion)", "cmp_tokens", [u.prompt_tokens + u.completion_tokens for u in us], ","),
        ("Dollars", "cmp_cost", [u.cost for u in us], ".5f"),
    ]
    drawn = [c for c in charts if _nonzero(c[2])]
    skipped = [c[0] for c in charts if not _nonzero(c[2])]
    if all(u.calls == 0 for u in us):
        st.caption(
            "The offline reasoner makes no LLM calls: calls, tokens and dollars are zero (no charts); "
            "choose a model on the Settings page to compare costs."
        )
    elif skipped:
        st.caption("Not charted (zero or unknown for every method): " + ", ".join(skipped).lower() + ".")
    if drawn:
        for col, (title, key, values, fmt) in zip(st.columns(len(drawn)), drawn):
            col.plotly_chart(_bar(title, run, values, fmt), key=key, config=_PLOTLY)
    if _nonzero([u.engine_time + u.llm_time for u in us]):
        st.plotly_chart(seconds_figure(run), key="cmp_time", config=_PLOTLY)


def seconds_figure(run) -> go.Figure:
    """Seconds per method, one colour per method (as on every other chart and the verdict strip),
    LLM time stacked on engine time in the same colour, hatched; the legend names both."""
    llm = _nonzero([r.usage.llm_time for r in run.results])
    bars = []
    for i, r in enumerate(run.results):
        color, name = method_color(r.method, i), _title(r.method)
        bars.append(
            go.Bar(
                name=f"{name}: engine" if llm else name,
                x=[name],
                y=[r.usage.engine_time],
                marker_color=color,
                legendgroup=r.method,
                text=[f"{r.usage.engine_time:.2f} s"],
                textposition="inside",
            )
        )
        if llm:
            bars.append(
                go.Bar(
                    name=f"{name}: LLM",
                    x=[name],
                    y=[r.usage.llm_time],
                    legendgroup=r.method,
                    marker=dict(color=color, opacity=0.55, pattern=dict(shape="/", fgcolor="#fff")),
                    text=[f"{r.usage.llm_time:.2f} s"],
                    textposition="inside",
                )
            )
    fig = go.Figure(bars)
    fig.update_layout(
        barmode="stack",
        title="Seconds" + (": engine, then LLM (hatched)" if llm else " (engine)"),
        height=280,
        margin=dict(l=10, r=10, t=40, b=10),
        yaxis_rangemode="tozero",
        showlegend=True,
        legend=dict(orientation="h", yanchor="top", y=-0.15, x=0),
    )
    return fig
