"""The page of any method whose registry entry names a `page` (Ask with T2RAG at /ask, KG2RAG at
/kg2rag, a plug-in's): its words from its view (`PAGE`), then open a saved run or ask a question,
and step through the method's trace. pages/method.py draws it for the page the user is on."""

from __future__ import annotations

import streamlit as st

from components.compare.timeline_view import show_timeline
from components.compare.whatif_view import replayed_note, show_whatif
from components.methods.result_view import show_result
from components.screens.run_controls import open_saved, save_and_export
from components.shell import link, state
from components.shell.runner import run_methods
from components.shell.safe import engine_errors, esc, html_block
from components.widgets.answer_box import show_answer
from components.widgets.preset_badge import show_inputs_line
from components.widgets.question_input import ask_question, result_area


def _adopter(result_key: str, step_key: str):
    def adopt(new_run) -> None:  # a button callback: runs before the page redraws
        st.session_state[result_key] = new_run
        st.session_state[step_key] = 0

    return adopt


def method_page_entries() -> list:
    """One `st.Page` per registered method with a `page`: the one file pages/method.py at each URL
    path, with the menu entry its view names (`PAGE`). A plug-in with a page gets one too."""
    from components.contract import view_for
    from engine.methods.registry import METHODS

    out = []
    for info in METHODS.values():
        if info.page:
            words = view_for(info.name).page_text(info.title)
            out.append(st.Page("pages/method.py", title=words.nav, icon=words.icon, url_path=info.page))
    return out


def page_heading(page: str) -> None:
    """The method page's heading and caption, from the method's view."""
    from components.contract import view_for
    from engine.methods.registry import method_on_page

    info = method_on_page(page)
    words = view_for(info.name).page_text(info.title)
    st.title(words.title)
    if words.caption:
        st.caption(words.caption)


def method_page(page: str) -> None:
    """The page at URL path `page` of the method registered with it: its heading, then the body
    (widget and session keys named after the page: `state.page_keys`)."""
    from engine.methods.registry import method_on_page

    page_heading(page)
    prefix, result_key, step_key = state.page_keys(page)
    _body(method_on_page(page), page, prefix.removesuffix("_q"), result_key, step_key)


def _body(info, page: str, prefix: str, result_key: str, step_key: str) -> None:
    method, label = info.name, info.title
    ss = st.session_state
    corpus = state.require_corpus()
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
    show_inputs_line(result)  # what it was fed, beside its paper's inputs
    show_result(result, corpus, step_key, run.gold)
    show_timeline(result, key=prefix)
    note = replayed_note(result)
    if note:
        st.caption("🔁 A what-if re-run. " + note)
    show_whatif(run, result, corpus, prefix, on_adopt=_adopter(f"{prefix}_result", step_key))
    save_and_export(run, corpus, prefix)
