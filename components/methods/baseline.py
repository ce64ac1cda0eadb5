"""The view every staged-retrieval baseline uses (semantic, hybrid, standard, none, rerank, IRCoT,
BM25, and any plug-in whose trace lists `stages` of retrieved chunks): the stages with their chunks
and scores, the context exactly as sent, the answer. The contract: components/methods/base.py."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.shell.state import content_key, sticky_expander
from components.steps import Section, Step, call_tuples, name_of
from components.widgets.answer_box import show_answer
from components.widgets.llm_calls import show_call

__all__ = ["first_stage", "show", "steps"]


def _stages(result) -> list:
    return list(getattr(result.trace, "stages", None) or [])


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """Retrieval (one section per stage), then the context and the answer."""
    tr = result.trace
    if not hasattr(tr, "stages"):
        return []  # no stages to tell (e.g. IRCoT's steps): the answer alone (components.methods.base)
    secs = [
        Section(
            s.name, [f"{c.score:.3f}  {name_of(names, c.chunk_id)}" for c in s.chunks] + ([s.note] if s.note else [])
        )
        for s in tr.stages
    ]
    return [
        Step("Retrieval", secs or [Section("Retrieval", ["(none)"])]),
        Step(
            "Answer",
            [
                Section("Context as sent", [tr.context or "(empty)"]),
                Section("Answer", [result.answer or "(no answer)"]),
            ],
            call_tuples(tr.call),
        ),
    ]


def show(result, corpus=None, state_key: str = "", gold: list[str] | None = None) -> None:
    """The answer, each stage's chunks and scores, the context as sent and the answer call."""
    from components.chunk_names import chunk_names

    tr = result.trace
    show_answer(result, gold)
    if tr is None or not hasattr(tr, "stages"):
        return
    names = chunk_names(corpus, [c.chunk_id for s in tr.stages for c in s.chunks])
    for s in tr.stages:
        st.markdown(f"**{s.name}**" + (f" — {s.note}" if s.note else ""))
        st.dataframe(
            pd.DataFrame(
                [{"chunk": names.get(c.chunk_id, c.chunk_id), "score": round(c.score, 4)} for c in s.chunks],
                columns=["chunk", "score"],
            ),
            hide_index=True,
            width="stretch",
        )
    with sticky_expander("Context exactly as sent", content_key("ctx", result.method, tr.context)):
        st.code(tr.context or "(empty)", language=None, wrap_lines=True)
    show_call(tr.call, label="answer")


def first_stage(result) -> str:
    """The first retrieval stage, named from the stages the trace recorded."""
    names = [s.name for s in _stages(result)]
    if "fusion" in names or "bm25" in names and "dense" in names:
        return "first stage: BM25 + dense, reciprocal-rank fusion"
    if "dense" in names or not hasattr(result.trace, "stages"):
        return "first stage: dense (cosine)" + (" then a reranker" if "rerank" in names else "")
    if "bm25" in names:
        return "first stage: BM25 (sparse, over the chunks' full-text index)"
    k = getattr(getattr(result.trace, "settings", None), "k", None)
    return "no retrieval" if k is None else ""
