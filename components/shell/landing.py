"""The landing card: what Triplet Lens is, one line per method, and a showcase of sample questions
that each run through Compare in one click.

The showcase questions were chosen by running both methods (offline reasoner) over every question
of the bundled sample corpora (`python -m engine sample ensure`, then T2RAG and KG2RAG on each; the
survey and its numbers are in docs/ui.md, "Landing showcase"). Each tells one story the Compare
verdict makes visible, and the stories rest on retrieval and the trace, not on a wording detail of
the offline reasoner: tests/app/test_landing_showcase.py checks the properties (the methods differ,
T2RAG ran at least two rounds), not the answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.shell.safe import esc, html_block

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


@dataclass(frozen=True)
class Showcase:
    corpus: str
    qid: str
    story: str  # what the comparison shows, in one line (the button's caption)


#: Chosen on hotpotqa-sample (docs/ui.md has the survey). The first is the "Start here" question.
SHOWCASE = (
    # T2RAG fills ?city from Kerry Saxby-Junna's paragraph in round 1 and reads the census figure
    # from Young, New South Wales' paragraph in round 2; KG2RAG's seeds miss the town's paragraph
    # and its one hop does not reach it: the two methods differ, and T2RAG needs two rounds.
    Showcase(
        "hotpotqa-sample",
        "5ac3983a554299657fa290f5",
        "The methods differ: T2RAG needs two rounds to chain athlete → town → census figure",
    ),
    # Both right, by different routes: T2RAG's second round finds the team's paragraph, KG2RAG's
    # expansion reaches it in hop 1 (the seeds alone miss it).
    Showcase(
        "hotpotqa-sample",
        "5ae3b0005542992f92d82341",
        "Both right, two routes: a second T2RAG round vs a KG2RAG expansion hop",
    ),
    # A comparison question: both gold paragraphs in the first round / the seeds; T2RAG fills one
    # placeholder per band.
    Showcase(
        "hotpotqa-sample", "5a7c1f325542996dd594b892", "A comparison: one placeholder per band, both filled in round 1"
    ),
)


def showcase_for(corpus) -> list[tuple[object, str]]:
    """(Question, story) for the showcase questions this corpus holds; a corpus without any gets
    one suggested question instead."""
    by_id = {q.qid: q for q in corpus.questions()}
    picked = [(by_id[s.qid], s.story) for s in SHOWCASE if s.corpus == corpus.name and s.qid in by_id]
    if picked:
        return picked
    q = suggested_question(corpus)
    return [(q, "A multi-hop question from this corpus, side by side")] if q is not None else []


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


def landing_card() -> None:
    """The card at the top of the first page; the showcase needs a corpus with questions."""
    from components.shell import state

    try:
        corpus = state.current_corpus()
    except Exception:  # a damaged corpus: the page below says what is wrong with it
        corpus = None
    with st.container(border=True, key="landing"):
        html_block(_intro_html())
        items = showcase_for(corpus) if corpus is not None else []
        if not items:
            st.caption("Create a corpus (or build the bundled samples) to try a question.")
            return
        st.markdown(
            "**🚀 Start here**: pick a question; Compare runs both methods on it and says who did better, and why."
        )
        for i, (q, story) in enumerate(items):
            c1, c2 = st.columns([5, 2], vertical_alignment="center")
            with c1:
                html_block(
                    f"<span style='font-size:1.05em'>“{esc(q.question)}”</span><br>"
                    f"<small style='color:#555'>{esc(story)}</small>"
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
