"""The engine's `on_progress(done, total, label)` and `on_step(label, payload)` drawn in Streamlit."""

from __future__ import annotations

import streamlit as st

from engine.core.progress import Throttle


class ProgressBar:
    """An st.progress bar fed by an engine progress callback, redrawn at most ten times a second."""

    def __init__(self, text: str = "Working..."):
        self.bar = st.progress(0.0, text=text)
        self._throttle = Throttle()
        self.text = text

    def __call__(self, done: int, total: int, label: str = "") -> None:
        if not self._throttle.due(done, total):
            return
        frac = min(1.0, done / total) if total else 1.0
        try:
            self.bar.progress(frac, text=f"{self.text} {done}/{total} {label}".strip())
        except Exception:  # called from a worker thread without a script context: skip the redraw
            pass

    def done(self, text: str = "Done") -> None:
        try:
            self.bar.progress(1.0, text=text)
        except Exception:
            pass


class StepLog:
    """An st.status box listing a method's steps as they complete."""

    def __init__(self, label: str):
        self.box = st.status(label, expanded=False)
        self.n = 0

    def __call__(self, label: str, payload=None) -> None:
        self.n += 1
        try:
            self.box.write(f"{self.n}. {label}")
            self.box.update(label=label)
        except Exception:
            pass

    def finish(self, label: str, ok: bool = True) -> None:
        self.box.update(label=label, state="complete" if ok else "error")
