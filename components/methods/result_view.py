"""Draw any method's result through its view (components/methods/), plus its preset badge and a
usage line."""

from __future__ import annotations

import streamlit as st

from components.methods.base import show
from components.widgets.preset_badge import show_preset_badge


def usage_caption(result) -> str:
    u = result.usage
    cost = "price unknown" if u.cost is None else f"${u.cost:.5f}"
    return (
        f"{result.reasoner or '-'} · {u.calls} LLM calls ({u.cached_calls} cached) · "
        f"{u.prompt_tokens}+{u.completion_tokens} tokens"
        f"{f' ({u.billed_prompt_tokens + u.billed_completion_tokens} billed)' if u.cached_calls else ''} · "
        f"{cost} · engine {u.engine_time:.2f}s · "
        f"LLM {u.llm_time:.2f}s"
    )


def show_result(result, corpus=None, state_key: str = "ask_step", gold: list[str] | None = None) -> None:
    show_preset_badge(result, key=state_key)
    if result.trace is None or isinstance(result.trace, dict):
        from components.widgets.answer_box import show_answer

        show_answer(result, gold)  # nothing to step through
    else:
        show(result, corpus, state_key, gold)
    st.caption(usage_caption(result))
