"""Presentation mode's steps: the question, each method's steps in turn, then the verdict."""

from __future__ import annotations

import streamlit as st

from components.chunk_names import chunk_names
from components.compare import view as cv
from components.compare.sync import show_answers_row
from components.compare.timeline_view import run_seconds, show_timeline
from components.compare.verdict import show_method_line
from components.contract import result_steps
from components.graphs.graph import WIDE_FRAME, show_graph
from components.graphs.static import from_payload
from components.methods.base import draw_sections_and_calls
from components.shell.safe import esc, html_block
from components.widgets.answer_box import verdict
from components.widgets.preset_badge import show_preset_badges
from engine.methods.registry import title


def present_steps(run, corpus=None) -> list[tuple[str, object]]:
    """(label, payload): payload is "question", "verdict" or (result, Step, its index in the result's steps)."""
    from components.contract import view_for

    names = chunk_names(corpus, [c for r in run.results for c in view_for(r).chunk_ids(r)]) if corpus else None
    out: list[tuple[str, object]] = [("The question", "question")]
    for r in run.results:
        for i, s in enumerate(result_steps(r, names)):
            out.append((f"{title(r.method)}: {s.title}", (r, s, i)))
    out.append(("Side by side", "verdict"))
    return out


#: Presentation mode keeps one layout from the first step to the last: no sidebar (not even the
#: control to open one: Streamlit dropped the previous page's sidebar only at a later step, and the
#: page shifted left then), and the scroll bar's room always kept, so a long step does not narrow
#: the page by a scroll bar's width.
PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"] {
  display: none !important; }
[data-testid="stMain"], [data-testid="stAppViewContainer"], html { scrollbar-gutter: stable; }
</style>"""


def steady_layout() -> None:
    st.html(PRESENT_CSS)


#: A graph with only a few nodes (a T2RAG decomposition: two to four) gets a smaller frame: at the
#: full height its fit blew two dots up to fill the screen.
SMALL_GRAPH_NODES, SMALL_GRAPH_HEIGHT = 6, 320


#: The step's graph is what the audience looks at: tall enough that a KG2RAG forest's labels stay
#: readable (median 10.8 px on screen over the sample corpora's forests, 9.5 at 420 px) and still in
#: one screen at 1440 x 900
PRESENT_GRAPH_HEIGHT = 500


def _verdict_step(step, index: int) -> int | None:
    """The step of the method's own view (engine.verdict numbers them so) that this presentation
    step shows: its `view_step` when the text step draws another view step (KG2RAG's graph and
    ranking as one), else its own index; None for the answer (the final verdict)."""
    if step.title == "Answer":
        return None
    return step.view_step if step.view_step is not None else index


def show_present_step(run, step: tuple[str, object], corpus=None) -> None:
    label, payload = step
    if payload == "question":
        html_block(f'<div style="font-size:1.8em;margin:1em 0">{esc(run.question)}</div>')
        methods = ", ".join(title(r.method) for r in run.results)
        st.caption(f"Methods: {methods}" + (" · gold answer hidden until the end" if run.gold else ""))
        show_preset_badges(run.results, key="present")
        return
    if payload == "verdict":
        st.header("Side by side")
        show_answers_row(run, corpus)  # the verdict strip, then the answers
        cv.overlap(run, corpus)
        cv.cost_charts(run)
        st.markdown("**Where time and money went** (one time scale for all methods)")
        scale = max(run_seconds(r) for r in run.results)
        for col, r in zip(st.columns(len(run.results)), run.results):
            with col:
                st.caption(title(r.method))
                show_timeline(r, key=f"present_{r.method}", in_expander=False, x_max=scale)
        return
    result, s, index = payload
    v = verdict(result, run.gold)
    st.header(f"{label} {v.mark}" if s.title == "Answer" else label)
    show_method_line(run, result, _verdict_step(s, index), corpus)
    if s.graph:  # the picture first: it is what the audience looks at
        nodes, edges, legend = from_payload(s.graph)
        small = len(nodes) <= SMALL_GRAPH_NODES
        show_graph(
            nodes,
            edges,
            height=SMALL_GRAPH_HEIGHT if small else PRESENT_GRAPH_HEIGHT,
            width=WIDE_FRAME[0],
            directed=s.graph.get("directed", False),
            legend=legend,
        )
    draw_sections_and_calls(s, "pcall")
