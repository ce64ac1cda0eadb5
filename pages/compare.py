"""Compare: one question through T2RAG and KG2RAG (plus an optional baseline), side by side."""

import streamlit as st

from components.compare import sync
from components.compare import view as cv
from components.compare.whatif import show_compare_whatif
from components.compare.whatif_view import replayed_note
from components.shell import state
from components.shell.run_controls import open_saved, save_and_export
from components.shell.runner import run_methods
from components.shell.safe import engine_errors, esc, html_block
from components.widgets.question_input import ask_question, result_area
from components.widgets.result_view import show_result
from engine.methods.registry import COMPARED, title

state.ensure_app()

st.title("⚖️ Compare")
ss = st.session_state
corpus = state.require_corpus()
sync.reserve_verdict_slot()  # the verdict goes first: the result's first screen says who did better

opened = open_saved(corpus, "cmp_open")
if opened is not None:
    ss["compare"] = opened
    state.reset_steppers("cmp_step_")
    state.reset_steppers("cmp_sync")

# baselines, then any plug-in method the app offers beyond the ones Compare runs by default
baseline = st.selectbox(
    "Baseline (optional)",
    [""] + state.compare_extras(),
    key="cmp_baseline",
    format_func=lambda m: title(m) if m else "(no baseline)",
)
asked = ask_question(corpus, "cmp_q", "Compare", "cmp_go")
autorun = bool(ss.get("cmp_autorun")) and bool(asked.question)  # the landing card's one click
ss["cmp_autorun"] = False
fresh = asked.submitted or autorun
if fresh or asked.pressed:
    ss["compare"] = None  # a failed run must not leave the last question's result under this one


def _adopt(new_run) -> None:
    """The what-if's re-runs become the comparison (a button callback: before the page redraws),
    the steppers back on the first step."""
    ss["compare"] = new_run
    state.reset_steppers("cmp_step_")
    state.reset_steppers("cmp_sync")


with result_area(fresh or asked.pressed):
    if fresh:
        with engine_errors("The comparison"):
            ss["compare"] = run_methods(
                list(COMPARED) + ([baseline] if baseline else []), corpus, asked.question, asked.q
            )
            state.reset_steppers("cmp_step_")
        state.reset_steppers("cmp_sync")
    run = ss.get("compare")
    if run is not None:
        st.divider()
        html_block(f"<b>Question:</b> {esc(run.question)}")
        sync.show_answers_row(run, corpus)
        st.markdown("**Step both methods together**")
        sync.show_side_by_side(run, corpus, "cmp_sync")
        notes = [f"{title(r.method)}: {n}" for r in run.results if (n := replayed_note(r))]
        if notes:
            st.caption("🔁 What-if re-runs in this comparison. " + " ".join(notes))
        show_compare_whatif(run, corpus, "cmp", on_adopt=_adopt)
        with state.sticky_expander("Evidence overlap and costs", "cmp_overlap_open", expanded=True):
            cv.overlap(run, corpus)
            cv.cost_charts(run)
        stepped = {r.method for r in sync.columns_of(run)}
        for r in run.results:
            if r.method not in stepped:
                with state.sticky_expander(f"Baseline: {title(r.method)}", f"cmp_{r.method}_open"):
                    show_result(r, corpus, f"cmp_step_{r.method}", run.gold)
        save_and_export(run, corpus, "cmp")
