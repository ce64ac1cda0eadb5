"""Ask a question: type one, or pick one of the corpus's questions (its gold answer shown).

The typed question and its button are one form, so typing then clicking runs on the first click
(the button used to be disabled until the text was committed, which swallowed that click) and
Enter submits too. The button is never disabled: a bad question is refused on the click with a
message under the box that names the problem and the limit, which is shown before submitting.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from engine.core.limits import MAX_QUESTION_CHARS, InputRejected, check_question

LIMIT_NOTE = f"Up to {MAX_QUESTION_CHARS:,} characters · press Enter or the button"


@dataclass(frozen=True)
class Asked:
    """What the question box holds: the question, the corpus Question when one was picked, and
    whether this run is the click (or Enter) that asks it, already checked against the limits."""

    question: str
    q: object | None
    submitted: bool
    pressed: bool = False  # the button was pressed (also when the question was refused)


def _pending_warning(corpus) -> None:
    c = corpus.counts()
    if c.pending or c.failed:
        st.warning(
            f"{c.pending + c.failed} of {c.chunks} chunks have no triplets yet, so the methods cannot "
            "use them: run the extraction on the Corpora page."
        )


def question_labels(questions) -> dict[str, str]:
    """qid -> what the picker shows: the question itself (an id means nothing to a reader); a
    question asked twice in the corpus gets its gold answer, then its number, to tell them apart."""
    counts: dict[str, int] = {}
    for q in questions:
        counts[q.question] = counts.get(q.question, 0) + 1
    out: dict[str, str] = {}
    for n, q in enumerate(questions, 1):
        label = q.question
        if counts[q.question] > 1:
            label += f"  (gold: {' / '.join(q.answers)})" if q.answers else f"  (question {n})"
        out[q.qid] = label
    if len(set(out.values())) < len(out):  # the same question with the same gold: numbered
        out = {q.qid: f"{out[q.qid]}  (question {n})" for n, q in enumerate(questions, 1)}
    return out


def _picked(questions, key: str):
    by_id = {q.qid: q for q in questions}
    labels = question_labels(questions)
    qid = st.selectbox(
        f"Corpus question ({len(questions)})",
        list(by_id),
        key=f"{key}_qid",
        format_func=lambda i: labels.get(i, i),
    )
    q = by_id.get(qid)
    if q is None:
        return "", None
    gold = " / ".join(q.answers) or "(none)"
    st.caption(f"Gold answer: **{gold}**" + (f" · type: {q.qtype}" if q.qtype else ""))
    return q.question, q


def _refusal(question: str) -> str:
    """Why `question` cannot be asked ('' when it can), in words naming the limit."""
    try:
        check_question(question)
    except InputRejected as e:
        reason = str(e)
        if not question.strip():
            reason += f": type one (up to {MAX_QUESTION_CHARS:,} characters)"
        return reason[0].upper() + reason[1:] + "."
    return ""


def ask_question(corpus, key: str, button: str, button_key: str) -> Asked:
    """The question picker and its primary button. `key` namespaces the widgets (`{key}_mode`,
    `{key}_text`, `{key}_qid`); the button has `button_key`."""
    if corpus is not None:
        _pending_warning(corpus)
    questions = corpus.questions() if corpus is not None else []
    modes = ["Pick a corpus question", "Type a question"] if questions else ["Type a question"]
    mode = st.radio("Question", modes, key=f"{key}_mode", horizontal=True, label_visibility="collapsed")
    if mode != "Type a question":
        question, q = _picked(questions, key)
        go = st.button(button, type="primary", key=button_key)
        return Asked(question, q, go and bool(question), go)
    # the example is one this corpus holds, so typing it gets an answer (a fixed example did not
    # exist in the sample corpora and answered nothing)
    example = questions[0].question if questions else "Who directed the film that was shot near Leland?"
    with st.form(f"{key}_form", border=False, enter_to_submit=True):
        text = st.text_input("Your question", key=f"{key}_text", placeholder=f"e.g. {example}")
        note = st.empty()
        go = st.form_submit_button(button, type="primary", key=button_key)
    refusal = _refusal(text) if go else ""
    if refusal:
        note.error(refusal, icon="✋")
    else:
        note.caption(LIMIT_NOTE)
    return Asked(text.strip(), None, go and not refusal, go)


@contextmanager
def result_area(fresh: bool):
    """Where a page draws its run and its result. On the click that asks a new question the old
    result is wiped at once (an empty slot replaces it), so it never sits under the new question
    while that one runs; on other reruns it is a plain container, redrawn in place (no flicker)."""
    if fresh:
        with st.empty().container():
            yield
    else:
        with st.container():
            yield
