"""The sidebar every page shares: corpus picker, model in use, demo badge, presentation toggle."""

from __future__ import annotations

import streamlit as st

from components.shell import state


def _on_corpus_change() -> None:
    state.select_corpus(st.session_state.get("w_sidebar_corpus"))


def _enter_presentation() -> None:
    """Present the run of the page the button was pressed on (Ask's T2RAG run, KG2RAG's, Compare's);
    none there: presentation mode offers the saved runs."""
    from components.shell.link import present_run_of

    ss = st.session_state
    ss["present_run"] = present_run_of(ss.get("present_from") or "")
    ss["present"] = True
    ss["present_step"] = 0


def sidebar() -> None:
    ss = st.session_state
    with st.sidebar:
        names = state.corpus_names()
        if names:
            if ss.get("corpus") not in names:
                state.select_corpus(names[0])
            ss["w_sidebar_corpus"] = ss["corpus"]
            st.selectbox("Corpus", names, key="w_sidebar_corpus", on_change=_on_corpus_change)
            corpus = state.current_corpus()
            if corpus is not None:
                c = corpus.counts()
                st.caption(
                    f"{c.documents} documents · {c.chunks} chunks · {c.triplets} triplets · {c.questions} questions"
                )
        else:
            st.info("No corpus yet: create one on the Corpora page, or run `python -m engine sample ensure`.")
        st.caption(f"Reasoner: **{state.model_label()}**")
        if state.is_demo():
            st.warning("Read-only demo: uploads, deletes, extraction and key entry are off.")
        st.button(
            "🎬 Presentation mode",
            on_click=_enter_presentation,
            key="w_present_on",
            help="Hide the controls and walk this page's run (or a saved one) step by step",
        )
