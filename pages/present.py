"""Presentation mode: controls hidden, one run (the page's it was entered from, or a saved one)
walked step by step. A reload keeps it: the link names the run's question, methods and step, and
the question runs again here (components/shell/link.py)."""

import streamlit as st

from components.report.present_view import present_steps, show_present_step, steady_layout
from components.shell import link, state
from components.shell.safe import engine_errors
from components.widgets.stepper import stepper
from engine.runs import describe_run, list_runs, load_run

state.ensure_app()
steady_layout()

ss = st.session_state


def _exit() -> None:
    # app.py sends the user back to the page they entered presentation mode from, with this run
    back = ss.get("present_from") or "compare"
    run = ss.get("present_run")
    if run is not None and back in state.url_pages() and link.page_run(back) is None:
        ss[state.page_keys(back)[1]] = run  # e.g. after a reload here: the page shows what was presented
    ss["present"] = False
    ss["present_return"] = back


st.button("✖ Exit presentation", on_click=_exit, key="present_exit", type="tertiary")
if ss.get("present_run") is None and ss.get("present_autorun"):
    ss["present_autorun"] = False
    with engine_errors("Running the presented question again"):
        ss["present_run"] = link.rerun_current(ss.get("present_methods") or link.compare_methods())
run = ss.get("present_run")
if run is None:
    corpus = state.current_corpus() if ss.get("corpus") else None
    saved = [p for p in list_runs(corpus)] if corpus is not None else []
    if not saved:
        st.info("Nothing to present yet: ask a question on Ask, KG2RAG or Compare (or save a run) first.")
        st.stop()
    by_name = {p.name: p for p in saved}
    pick = st.selectbox(
        "Saved run to present", list(by_name), key="present_pick", format_func=lambda name: describe_run(by_name[name])
    )
    if st.button("Start", key="present_start", type="primary"):
        with engine_errors("Opening the run"):
            ss["present_run"] = load_run(by_name[pick])
            ss["present_step"] = 0
            st.rerun()
    st.stop()

corpus = state.current_corpus() if ss.get("corpus") else None
steps = present_steps(run, corpus)
pos = stepper("present_step", [s[0] for s in steps], slider=False)
show_present_step(run, steps[pos], corpus)
