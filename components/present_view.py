"""Presentation mode's steps: the question, each method's steps in turn, then the verdict."""
from __future__ import annotations

import streamlit as st

from components import compare_view as cv
from components.safe import esc, html_block
from components.steps import METHOD_TITLES, result_steps


def present_steps(run) -> list[tuple[str, object]]:
    """(label, payload): payload is "question", "verdict" or (result, Step)."""
    out: list[tuple[str, object]] = [("The question", "question")]
    for r in run.results:
        for s in result_steps(r):
            out.append((f"{METHOD_TITLES.get(r.method, r.method)}: {s.title}", (r, s)))
    out.append(("Side by side", "verdict"))
    return out


def show_present_step(run, step: tuple[str, object]) -> None:
    label, payload = step
    if payload == "question":
        html_block(f'<div style="font-size:1.8em;margin:1em 0">{esc(run.question)}</div>')
        methods = ", ".join(METHOD_TITLES.get(r.method, r.method) for r in run.results)
        st.caption(f"Methods: {methods}" + (f" · gold answer hidden until the end" if run.gold else ""))
        return
    if payload == "verdict":
        st.header("Side by side")
        cv.answers(run)
        cv.overlap(run)
        cv.cost_charts(run)
        return
    result, s = payload
    st.header(label)
    for sec in s.sections:
        st.markdown(f"**{sec.heading}**")
        st.code("\n".join(sec.lines), language=None, wrap_lines=True)
    for summary, prompt, reply in s.calls:
        with st.expander(f"LLM call: {summary}"):
            st.code(prompt or "(no prompt)", language=None, wrap_lines=True)
            st.code(reply or "(empty)", language=None, wrap_lines=True)
