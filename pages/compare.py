"""Compare: one question through any set of methods (T2RAG, KG2RAG and any number of baselines),
side by side."""

import streamlit as st

from components.compare import sync
from components.compare import view as cv
from components.compare.whatif import show_compare_whatif
from components.compare.whatif_view import replayed_note
from components.methods.result_view import show_result
from components.screens.run_controls import open_saved, save_and_export
from components.shell import link, state
from components.shell.runner import run_methods
from components.shell.safe import engine_errors, esc, html_block
from components.widgets.question_input import ask_question, result_area
from engine.methods.registry import title

state.ensure_app()

st.title("⚖️ Compare")
ss = st.session_state
corpus = state.require_corpus()
sync.reserve_verdict_slot()  # the verdict goes first: the result's first screen says who did better

opened = open_saved(corpus, "cmp_open")
if opened is not None:
    ss["compare"] = opened
    link.show_question("cmp_q", opened.qid, opened.question)
    ss[link.METHODS_WIDGET] = [r.method for r in opened.results if r.method in link.compare_options()]
    state.reset_steppers("cmp_step_")
    state.reset_steppers("cmp_sync")

# any set: T2RAG and KG2RAG by default, the baselines and plug-in methods beside them
methods = st.multiselect(
    "Methods", link.compare_options(), key=link.METHODS_WIDGET, format_func=title, placeholder="Pick two or more"
)
asked = ask_question(corpus, "cmp_q", "Compare", "cmp_go")
link.note_question(asked, methods)
autorun = bool(ss.get("cmp_autorun")) and bool(asked.question)  # the landing card's one click, a link
ss["cmp_autorun"] = False
fresh = (asked.submitted or autorun) and len(methods) >= 2
if (asked.submitted or autorun) and len(methods) < 2:
    st.warning("Pick two or more methods to compare (Ask and KG2RAG run one method alone).")
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
            ss["compare"] = run_methods(list(methods), corpus, asked.question, asked.q)
            state.reset_steppers("cmp_step_")
        state.reset_steppers("cmp_sync")
    run = link.page_run("compare")
    if run is not None:
        st.divider()
        html_block(f"<b>Question:</b> {esc(run.question)}")
        sync.show_answers_row(run, corpus)
        st.markdown(f"**Step {'both' if len(sync.columns_of(run)) == 2 else 'the'} methods together**")
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
