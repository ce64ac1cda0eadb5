"""A previous / next / slider stepper whose position lives in st.session_state[state_key]."""

from __future__ import annotations

import streamlit as st


def _move(state_key: str, delta: int, n: int) -> None:
    st.session_state[state_key] = max(0, min(n - 1, int(st.session_state.get(state_key, 0)) + delta))


def _from_slider(state_key: str, widget_key: str) -> None:
    st.session_state[state_key] = int(st.session_state[widget_key])


def stepper(state_key: str, labels: list[str], *, slider: bool = True) -> int:
    """Draw the controls and return the current step index (clamped to the labels).

    The position is kept under `state_key` (initialised by components.shell.state), not in a widget key,
    so it survives page switches; buttons change it in callbacks, before the page redraws.
    """
    n = len(labels)
    if n == 0:
        return 0
    pos = max(0, min(n - 1, int(st.session_state.get(state_key, 0) or 0)))
    st.session_state[state_key] = pos
    c1, c2, c3 = st.columns([1, 1, 6], vertical_alignment="center")
    c1.button(
        "◀ Previous",
        key=f"{state_key}_prev",
        disabled=pos == 0,
        on_click=_move,
        args=(state_key, -1, n),
        width="stretch",
    )
    c2.button(
        "Next ▶",
        key=f"{state_key}_next",
        disabled=pos >= n - 1,
        on_click=_move,
        args=(state_key, 1, n),
        width="stretch",
    )
    if slider and n > 1:
        widget_key = f"{state_key}_slider"
        # keep the slider in step with the buttons: set its value before it is drawn
        st.session_state[widget_key] = pos
        c3.select_slider(
            "Step",
            options=list(range(n)),
            format_func=lambda i: labels[i],
            key=widget_key,
            on_change=_from_slider,
            args=(state_key, widget_key),
            label_visibility="collapsed",
        )
    else:
        c3.markdown(f"**{labels[pos]}**")
    st.caption(f"Step {pos + 1} of {n}: {labels[pos]}")
    return pos
