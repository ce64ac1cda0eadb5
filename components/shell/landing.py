"""The landing card: what Triplet Lens is, one line per method, and a showcase of sample questions
that each run through Compare in one click.

The showcase questions were chosen by running both methods (offline reasoner) over every question
of the bundled sample corpora (`python -m engine sample ensure`, then T2RAG and KG2RAG on each; the
survey and its numbers are in docs/ui.md, "Landing showcase"). The line under each question that
says what Compare shows (who is right, by which route) is computed by running it at the settings
Compare runs (components/shell/showcase.py); only the question's shape is written here.
"""

from __future__ import annotations

from contextlib import nullcontext

import streamlit as st

from components.shell.safe import esc, html_block
from components.shell.showcase import SHOWCASE, showcase_questions

PRODUCT = "Triplet Lens"
WHAT = (
    "Ask a multi-hop question of your documents and watch two knowledge-graph RAG methods reason step "
    "by step.<br>See who answered correctly, from which evidence, at what cost, and export the run as one "
    "HTML file."
)
METHOD_LINES = (
    (
        "T2RAG",
        "turns the question into triplets with placeholders (?city) and fills them round by round from "
        "retrieved facts and their paragraphs.",
    ),
    (
        "KG2RAG",
        "takes the most similar chunks as seeds, expands over the entity graph, and answers from the "
        "best-ranked spanning trees.",
    ),
)


SUGGESTED_SHAPE = "A multi-hop question from this corpus"


def showcase_for(corpus) -> list[tuple[object, str]]:
    """(Question, shape) for the showcase questions this corpus holds; a corpus without any gets
    one suggested question instead."""
    shapes = {s.qid: s.shape for s in SHOWCASE}
    picked = [(q, shapes[q.qid]) for q in showcase_questions(corpus)]
    if picked:
        return picked
    q = suggested_question(corpus)
    return [(q, SUGGESTED_SHAPE)] if q is not None else []


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
    from components.shell import link
    from engine.methods.registry import COMPARED

    ss = st.session_state
    link.set_current(qid)
    ss["methods"] = ss[link.METHODS_WIDGET] = list(COMPARED)  # the card says: the two methods
    ss["cmp_q_mode"] = "Pick a corpus question"
    ss["cmp_q_qid"] = qid
    ss["cmp_autorun"] = True


def _intro_html() -> str:
    methods = "".join(
        f"<div style='margin:.15em 0'><b>{esc(name)}</b> {esc(line)}</div>" for name, line in METHOD_LINES
    )
    return (
        f"<div class='tl-landing'><div style='font-size:2em;font-weight:700;line-height:1.2'>🔺 {esc(PRODUCT)}</div>"
        f"<div style='font-size:1.05em;margin:.3em 0 .5em 0'>{WHAT}</div>{methods}</div>"
    )


def _settings_line(settings: dict) -> str:
    """Which settings the captions ran with, and that a model of the user's may answer otherwise."""
    from components.shell import state
    from engine.methods.presets import preset_name
    from engine.methods.registry import title

    presets = " · ".join(f"{title(m)} {preset_name(m, s)}" for m, s in settings.items())
    model = state.session().model
    line = f"What each shows was run just now: offline reasoner, {presets} settings (what Compare runs)"
    return line + (f"; Compare will ask {model} instead, whose answers may differ." if model else ".")


def _captions(corpus, items) -> dict[str, str]:
    """qid -> the computed caption of each showcase question (runs the comparisons not cached yet)."""
    from components.shell import state
    from components.shell.showcase import cached_caption, showcase_caption
    from engine.methods.registry import COMPARED

    showcase = {s.qid for s in SHOWCASE}
    settings = {m: state.method_settings(m) for m in COMPARED}
    wanted = [q for q, _ in items if q.qid in showcase]
    cold = any(cached_caption(corpus, q, settings) is None for q in wanted)
    with st.spinner("Running the showcase questions at the current settings…") if cold else nullcontext():
        return {q.qid: showcase_caption(corpus, q, settings) for q in wanted}


def _empty_note(corpus) -> str:
    """What to do when the card has no question to offer, for the corpus selected (if any)."""
    if corpus is None:
        return "Create a corpus (or build the bundled samples) to try a question."
    c = corpus.counts()
    if c.chunks and not c.pending:
        return (
            f"**{corpus.name}** is ready: ask it a question on **Ask (T2RAG)**, **KG2RAG** or **Compare** "
            "(it has no questions of its own to suggest)."
        )
    return f"**{corpus.name}** needs its triplets extracted (Extraction tab below) before a question."


def landing_card() -> None:
    """The card at the top of the first page; the showcase needs a corpus with questions."""
    from components.shell import state
    from components.shell.safe import engine_errors

    try:
        corpus = state.current_corpus()
    except Exception:  # a damaged corpus: the page below says what is wrong with it
        corpus = None
    with st.container(border=True, key="landing"):
        html_block(_intro_html())
        items = showcase_for(corpus) if corpus is not None else []
        if not items:
            st.markdown(_empty_note(corpus))
            return
        st.markdown(
            "**🚀 Start here**: pick a question; Compare runs both methods on it and says who did better, and why."
        )
        captions: dict[str, str] = {}
        with engine_errors("Running the showcase questions"):
            captions = _captions(corpus, items)
        for i, (q, shape) in enumerate(items):
            c1, c2 = st.columns([5, 2], vertical_alignment="center")
            with c1:
                said = captions.get(q.qid, "")
                html_block(
                    f"<span style='font-size:1.05em'>“{esc(q.question)}”</span><br>"
                    f"<small style='color:#555'>{esc(shape)}</small>"
                    + (f"<br><small class='tl-showcase-caption' style='color:#333'>{esc(said)}</small>" if said else "")
                )
            label = "Compare the two methods on this question" if i == 0 else "Compare on this question"
            if c2.button(
                label,
                type="primary" if i == 0 else "secondary",
                key="landing_go" if i == 0 else f"landing_go_{i}",
                on_click=_go,
                args=(q.qid,),
                width="stretch",
            ):
                # the link names the view at once (a page switch starts from these parameters)
                st.switch_page(
                    "pages/compare.py", query_params={"corpus": corpus.name, "q": q.qid, "methods": "t2rag,kg2rag"}
                )
        if captions:
            from engine.methods.registry import COMPARED

            st.caption(_settings_line({m: state.method_settings(m) for m in COMPARED}))
