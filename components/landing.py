"""The starting point on the landing page: one click runs a good sample question through Compare."""
from __future__ import annotations

import streamlit as st

from components.safe import esc, html_block


def suggested_question(corpus):
    """A question worth showing first: a multi-hop (bridge / compositional) one with a short gold
    answer, so both methods have something to chain and the verdict is easy to read."""
    qs = corpus.questions()
    if not qs:
        return None
    multi = [q for q in qs if (q.qtype or "").lower() not in ("comparison", "") and q.answers]
    pool = multi or [q for q in qs if q.answers] or qs
    return min(pool, key=lambda q: (len(" ".join(q.answers)) > 30, len(q.question)))


def _go(qid: str) -> None:
    ss = st.session_state
    ss["cmp_q_mode"] = "Pick a corpus question"
    ss["cmp_q_qid"] = qid
    ss["cmp_autorun"] = True


def start_here(corpus) -> None:
    q = suggested_question(corpus)
    if q is None:
        return
    with st.container(border=True):
        html_block("<b>🚀 Start here</b>: see T2RAG and KG2RAG answer the same multi-hop question side by side, "
                   f"step by step.<br><span style='font-size:1.1em'>“{esc(q.question)}”</span>")
        if st.button("Compare the two methods on this question", type="primary", key="landing_go",
                     on_click=_go, args=(q.qid,)):
            st.switch_page("pages/compare.py")
