"""One LLM call, openable: prompt as sent, raw reply, parsed result, tokens, cost, latency, cache."""

from __future__ import annotations

import json

import streamlit as st

from components.shell.state import content_key, sticky_expander
from components.steps import call_summary


def show_call(call, *, label: str = "", expanded: bool = False) -> None:
    """An expander holding everything about one call (all text shown as text)."""
    if call is None:
        return
    key = content_key(f"call_{call.job}", call.model, label, call.messages, call.response)
    with sticky_expander(f"🔎 {label + ': ' if label else ''}{call_summary(call)}", key, expanded):
        if call.error:
            st.error(call.error)
        cols = st.columns(6)
        cols[0].metric("Prompt tokens", call.prompt_tokens)
        cols[1].metric("Completion tokens", call.completion_tokens)
        cols[2].metric("Cost", "unknown" if call.cost is None else f"${call.cost:.5f}")
        cols[3].metric("Latency", f"{call.latency:.2f}s")
        cols[4].metric("Cached", "yes" if call.cached else "no")
        cols[5].metric("Attempts", getattr(call, "attempts", 1))
        st.markdown("**Prompt, as sent**")
        if not call.messages:
            st.caption("(no messages: this step ran without a prompt)")
        for m in call.messages:
            st.caption(str(m.get("role", "")))
            st.code(str(m.get("content", "")), language=None, wrap_lines=True)
        st.markdown("**Raw reply**")
        st.code(call.response or "(empty)", language=None, wrap_lines=True)
        if call.parsed is not None:
            st.markdown("**Parsed**")
            try:
                st.code(json.dumps(call.parsed, ensure_ascii=False, indent=1), language="json", wrap_lines=True)
            except (TypeError, ValueError):
                st.code(str(call.parsed), language=None, wrap_lines=True)


def show_calls(calls: list, *, title: str = "LLM calls") -> None:
    calls = [c for c in calls if c is not None]
    st.markdown(f"**{title}** ({len(calls)})")
    for i, c in enumerate(calls, 1):
        show_call(c, label=f"#{i}")
