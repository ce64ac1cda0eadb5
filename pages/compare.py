"""Compare: one question through T2RAG and KG2RAG (plus an optional baseline), side by side."""
import streamlit as st

from components import compare_sync as sync
from components import compare_view as cv
from components.compare_whatif import show_compare_whatif
from components.whatif_view import replayed_note
from components import state
from components.question_input import ask_question, result_area
from components.result_view import show_result
from components.run_controls import open_saved, save_and_export
from components.runner import run_methods
from components.safe import engine_errors, esc, html_block
from components.steps import METHOD_TITLES
from engine.methods.registry import COMPARED, app_methods

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

baseline = st.selectbox("Baseline (optional)", [""] + app_methods(baselines=True), key="cmp_baseline",
                        format_func=lambda m: METHOD_TITLES.get(m, m) if m else "(no baseline)")
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
            ss["compare"] = run_methods(list(COMPARED) + ([baseline] if baseline else []), corpus, asked.question,
                                        asked.q)
            state.reset_steppers("cmp_step_")
        state.reset_steppers("cmp_sync")
    run = ss.get("compare")
    if run is not None:
        st.divider()
        html_block(f"<b>Question:</b> {esc(run.question)}")
        sync.show_answers_row(run, corpus)
        st.markdown("**Step both methods together**")
        sync.show_side_by_side(run, corpus, "cmp_sync")
        notes = [f"{METHOD_TITLES.get(r.method, r.method)}: {n}" for r in run.results if (n := replayed_note(r))]
        if notes:
            st.caption("🔁 What-if re-runs in this comparison. " + " ".join(notes))
        show_compare_whatif(run, corpus, "cmp", on_adopt=_adopt)
        with state.sticky_expander("Evidence overlap and costs", "cmp_overlap_open", expanded=True):
            cv.overlap(run, corpus)
            cv.cost_charts(run)
        for r in run.results:
            if r.method not in COMPARED:
                with state.sticky_expander(f"Baseline: {METHOD_TITLES.get(r.method, r.method)}", f"cmp_{r.method}_open"):
                    show_result(r, corpus, f"cmp_step_{r.method}", run.gold)
        save_and_export(run, corpus, "cmp")
