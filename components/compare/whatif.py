"""What if… on Compare: change each method's knobs (k, rounds, hops), re-run both methods or the
chosen one on the recorded LLM replies (Session.rerun, engine/runs/whatif.py), and see, per
method, the first run beside the re-run with what changed (components.compare.whatif_view.show_diff)."""

from __future__ import annotations

import streamlit as st

from components.compare.whatif_view import (
    WHATIF_CAPTION,
    adopt_button,
    adopted,
    can_rerun,
    changes_of,
    knob_inputs,
    show_diff,
)
from components.shell import state
from components.shell.safe import engine_errors
from engine.methods.registry import title
from engine.runs.whatif import whatif_knobs

BOTH = "both"


def _title(method: str) -> str:
    return title(method)


def rerun_methods(run, corpus, values: dict[str, dict[str, int]], which: str) -> dict:
    """Re-run the chosen methods of `run` (BOTH or one method name) with their knob values;
    `{method: (new Result, RunDiff)}`, in the run's order."""
    chosen = [r for r in run.results if r.method in values and which in (BOTH, r.method)]
    # one question against the session's budget, as the comparison itself counted
    pairs = state.session().rerun_all([(r, changes_of(r, values[r.method])) for r in chosen], corpus)
    return {r.method: pair for r, pair in zip(chosen, pairs)}


def show_compare_whatif(run, corpus, prefix: str = "cmp", on_adopt=None) -> None:
    """One expander under the side-by-side: a column of knobs per method (as the columns above),
    which methods to re-run, one button; then each re-run method's first run beside its re-run, and
    a button that makes the re-runs part of the comparison (`on_adopt(new_run)`, if given)."""
    from components.compare.sync import columns_of

    results = [r for r in columns_of(run) if can_rerun(r, corpus)]
    if not results:
        return
    ss = st.session_state
    slot = f"{prefix}_whatif"
    shown = ss.get(slot)
    mine = shown is not None and shown["base"] is run  # a what-if on an earlier comparison is not shown
    with state.sticky_expander(
        "🔁 What if… re-run the comparison with other settings", f"{slot}_open", mine or bool(ss.get(f"{slot}_go"))
    ):
        st.caption("Change a method's settings and re-run this question. " + WHATIF_CAPTION)
        values = {}
        for col, r in zip(st.columns(len(results), gap="medium"), results):
            with col:
                st.markdown(f"**{_title(r.method)}**")
                values[r.method] = knob_inputs(r, f"{slot}_{r.method}", st.columns(len(whatif_knobs(r.method))))
        options = [BOTH] + [r.method for r in results] if len(results) > 1 else [results[0].method]
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        which = left.radio(
            "Re-run",
            options,
            horizontal=True,
            key=f"{slot}_which",
            format_func=lambda m: "both methods" if m == BOTH else f"only {_title(m)}",
        )
        if right.button("🔁 Re-run", key=f"{slot}_go", type="primary"):
            with engine_errors("The re-run"):
                shown = ss[slot] = {"base": run, "items": rerun_methods(run, corpus, values, which)}
                mine = True
        if mine:
            for method, (new, diff) in shown["items"].items():
                st.markdown(f"#### {_title(method)}: first run vs re-run")
                show_diff(run, run.by_method(method), new, diff, corpus, f"{slot}_{method}")
            if on_adopt is not None:
                news = {m: new for m, (new, _) in shown["items"].items()}
                what = "re-runs" if len(news) > 1 else "re-run"
                adopt_button(
                    slot, f"▶ Use the {what} in the comparison and step through it", on_adopt, adopted(run, news)
                )
