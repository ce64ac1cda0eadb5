"""The page body shared by the single-method steppers (Ask with T2RAG, KG2RAG): open a saved run or
ask a question, then step through the method's trace."""

from __future__ import annotations

import streamlit as st

from components.compare.timeline_view import show_timeline
from components.compare.whatif_view import replayed_note, show_whatif
from components.shell import link, state
from components.shell.run_controls import open_saved, save_and_export
from components.shell.runner import run_methods
from components.shell.safe import engine_errors, esc, html_block
from components.widgets.answer_box import show_answer
from components.widgets.question_input import ask_question, result_area
from components.widgets.result_view import show_result


def _adopter(result_key: str, step_key: str):
    def adopt(new_run) -> None:  # a button callback: runs before the page redraws
        st.session_state[result_key] = new_run
        st.session_state[step_key] = 0

    return adopt


def single_method_page(info, prefix: str, step_key: str) -> None:
    """The page of one registered method (`info`: its `MethodInfo`); `prefix` namespaces the widgets
    and session keys of this page; `step_key` holds its stepper."""
    method, label = info.name, info.title
    ss = st.session_state
    corpus = state.require_corpus()
    result_key = f"{prefix}_result"

    page = next((p for p, spec in state.URL_PAGES.items() if spec[1] == result_key), "")  # this page's URL path
    opened = open_saved(corpus, f"{prefix}_open", (method,))
    if opened is not None:
        ss[result_key], ss[step_key] = opened, 0
        link.show_question(f"{prefix}_q", opened.qid, opened.question)

    asked = ask_question(corpus, f"{prefix}_q", "Ask", f"{prefix}_go")
    link.note_question(asked)
    if asked.pressed:
        ss[result_key] = None  # a failed run must not leave the last question's result under this one
    linked = link.take_url_autorun(page) and bool(asked.question)
    with result_area(asked.pressed):
        if asked.submitted or linked:  # a copied link names a question: run it, open its step
            with engine_errors(label):
                ss[result_key] = run_methods([method], corpus, asked.question, asked.q)
                ss[step_key] = 0
                if linked:
                    link.open_url_step(step_key)
        _show(link.page_run(page), method, corpus, prefix, step_key)


def _show(run, method: str, corpus, prefix: str, step_key: str) -> None:
    result = run.by_method(method) if run is not None else None
    if result is None:
        return
    st.divider()
    html_block(f"<b>Question:</b> {esc(run.question)}")
    show_answer(result, run.gold, corpus=corpus, with_chain=True)
    # (the inputs line, embedder / triplet source / reranker / reasoner against the paper's, goes
    # here under the result's card, as in Compare's columns and the export)
    show_result(result, corpus, step_key, run.gold)
    show_timeline(result, key=prefix)
    note = replayed_note(result)
    if note:
        st.caption("🔁 A what-if re-run. " + note)
    show_whatif(run, result, corpus, prefix, on_adopt=_adopter(f"{prefix}_result", step_key))
    save_and_export(run, corpus, prefix)
