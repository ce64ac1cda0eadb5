"""Ask a question: type one, or pick one of the corpus's questions (its gold answer shown)."""
from __future__ import annotations

import streamlit as st


def pick_question(corpus, key: str):
    """Return (question text, Question or None). The choice persists per page via widget keys."""
    if corpus is not None:
        c = corpus.counts()
        if c.pending or c.failed:
            st.warning(f"{c.pending + c.failed} of {c.chunks} chunks have no triplets yet, so the methods cannot "
                       "use them: run the extraction on the Corpora page.")
    questions = corpus.questions() if corpus is not None else []
    modes = ["Pick a corpus question", "Type a question"] if questions else ["Type a question"]
    mode = st.radio("Question", modes, key=f"{key}_mode", horizontal=True, label_visibility="collapsed")
    if mode == "Type a question":
        # the example is one this corpus holds, so typing it gets an answer (a fixed example did not
        # exist in the sample corpora and answered nothing)
        example = questions[0].question if questions else "Who directed the film that was shot near Leland?"
        text = st.text_input("Your question", key=f"{key}_text", placeholder=f"e.g. {example}")
        return text.strip(), None
    by_id = {q.qid: q for q in questions}
    qid = st.selectbox(f"Corpus question ({len(questions)})", list(by_id), key=f"{key}_qid",
                       format_func=lambda i: f"{by_id[i].question}  [{i}]")
    q = by_id.get(qid)
    if q is not None:
        gold = " / ".join(q.answers) or "(none)"
        st.caption(f"Gold answer: **{gold}**" + (f" · type: {q.qtype}" if q.qtype else ""))
        return q.question, q
    return "", None
