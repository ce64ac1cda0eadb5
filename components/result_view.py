"""Draw any method's result with its own stepper, plus a usage line and save / export buttons."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.llm_calls import show_call
from components.preset_badge import show_preset_badge
from components.state import content_key, sticky_expander
from components.t2rag_view import show_answer_box


def usage_caption(result) -> str:
    u = result.usage
    cost = "price unknown" if u.cost is None else f"${u.cost:.5f}"
    return (f"{result.reasoner or '-'} · {u.calls} LLM calls ({u.cached_calls} cached) · "
            f"{u.prompt_tokens}+{u.completion_tokens} tokens"
            f"{f' ({u.billed_prompt_tokens + u.billed_completion_tokens} billed)' if u.cached_calls else ''} · "
            f"{cost} · engine {u.engine_time:.2f}s · "
            f"LLM {u.llm_time:.2f}s")


def show_baseline(result, gold: list[str] | None = None, corpus=None) -> None:
    from components.chunk_names import chunk_names

    tr = result.trace
    show_answer_box(result, gold)
    if tr is None or not hasattr(tr, "stages"):
        return
    names = chunk_names(corpus, [c.chunk_id for s in tr.stages for c in s.chunks])
    for s in tr.stages:
        st.markdown(f"**{s.name}**" + (f" — {s.note}" if s.note else ""))
        st.dataframe(pd.DataFrame([{"chunk": names.get(c.chunk_id, c.chunk_id), "score": round(c.score, 4)}
                                   for c in s.chunks], columns=["chunk", "score"]),
                     hide_index=True, width="stretch")
    with sticky_expander("Context exactly as sent", content_key("ctx", result.method, tr.context)):
        st.code(tr.context or "(empty)", language=None, wrap_lines=True)
    show_call(tr.call, label="answer")


def show_result(result, corpus=None, state_key: str = "ask_round", gold: list[str] | None = None) -> None:
    show_preset_badge(result, key=state_key)
    if result.method == "t2rag":
        from components.t2rag_view import show_t2rag

        show_t2rag(result, corpus, state_key, gold)
    elif result.method == "kg2rag":
        from components.kg2rag_view import show_kg2rag

        show_kg2rag(result, state_key, corpus, gold)
    else:
        show_baseline(result, gold, corpus)
    st.caption(usage_caption(result))
