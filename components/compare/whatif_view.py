"""What if…: change k, rounds or hops on a finished run, re-run it on the recorded LLM replies
(Session.rerun, engine/runs/whatif.py), and see the two runs side by side with what changed."""

from __future__ import annotations

import streamlit as st

from components.chunk_names import chunk_names
from components.compare.timeline_view import run_seconds, show_timeline
from components.shell import state
from components.shell.safe import engine_errors, esc, html_block
from components.shell.settings_form import field_docs, human_label
from components.widgets.answer_box import show_answer
from engine.llm.base import OFFLINE_MODEL
from engine.methods.presets import PRESETS, has_presets
from engine.runs.whatif import preset_changes, recorded_calls, run_settings, whatif_knobs


def can_rerun(result, corpus) -> bool:
    return (
        bool(whatif_knobs(result.method))
        and result.trace is not None
        and not isinstance(result.trace, dict)
        and corpus is not None
    )


def knob_inputs(result, slot: str, columns=None) -> dict[str, int]:
    """Number inputs for the method's what-if knobs (in `columns`, one each), set to the run's own
    values; returns the values picked."""
    knobs = whatif_knobs(result.method)
    current = run_settings(result)
    docs = field_docs(type(current))
    values = {}
    for col, (name, (lo, hi)) in zip(columns or st.columns(len(knobs)), knobs.items()):
        now = int(getattr(current, name))
        values[name] = int(
            col.number_input(
                human_label(name),
                min_value=lo,
                max_value=max(hi, now),
                value=min(max(now, lo), max(hi, now)),
                step=1,
                key=f"{slot}_{name}",
                help=docs.get(name),
            )
        )
    return values


def changes_of(result, values: dict[str, int]) -> dict[str, int]:
    current = run_settings(result)
    return {k: v for k, v in values.items() if v != getattr(current, k)}


WHATIF_CAPTION = (
    "LLM replies whose prompts did not change are replayed from this run (free and instant, marked "
    "*replayed*); only changed prompts go to the model in use. With the offline reasoner there is "
    "nothing to replay: the re-run is free anyway."
)


def adopted(run, news: dict):
    """`run` with each result of a method in `news` replaced by that method's re-run: what the
    page shows, steps through, saves and exports from then on."""
    import time
    from dataclasses import replace

    return replace(run, results=[news.get(r.method, r) for r in run.results], created=time.time())


def adopt_button(slot: str, label: str, on_adopt, *args) -> None:
    """The button that makes the re-run the page's result (`on_adopt(*args)` runs in its callback,
    before the page redraws, so the stepper is back on step 1 of the re-run's trace)."""
    st.button(
        label,
        key=f"{slot}_adopt",
        on_click=on_adopt,
        args=args,
        help="The first run is replaced on this page (save it first to keep it); the re-run's "
        "replayed replies stay marked as replayed in its trace.",
    )


def replayed_note(result) -> str:
    """A line for a result that is an adopted what-if: how many of its replies were replayed."""
    calls = [c for c in recorded_calls(result) if c.model != OFFLINE_MODEL]
    n = sum(1 for c in calls if c.replayed)
    return f"{n} of {len(calls)} LLM replies in this run were replayed from an earlier run (free)." if n else ""


def show_whatif(run, result, corpus, prefix: str, on_adopt=None) -> None:
    """The expander under a result: number inputs for the method's knobs, a Re-run button, and the
    comparison of the re-run with the first run (kept in `<prefix>_whatif` until the next question).
    `on_adopt(new_run)`, if given, makes the re-run the page's result (a button under the diff)."""
    if not can_rerun(result, corpus):
        return
    ss = st.session_state
    slot = f"{prefix}_whatif"
    shown = ss.get(slot)
    mine = shown is not None and shown["base"] is result  # a what-if on an earlier question is not shown
    # the run of a Re-run click opens the expander before the diff is drawn in it
    with state.sticky_expander(
        "🔁 What if… re-run with other settings", f"{slot}_open", mine or bool(ss.get(f"{slot}_go"))
    ):
        st.caption("Change a setting and re-run this question. " + WHATIF_CAPTION)
        presets = has_presets(result.method) and not state.is_demo()  # a demo changes the knobs only
        cols = st.columns(len(whatif_knobs(result.method)) + 1 + presets, vertical_alignment="bottom")
        values = knob_inputs(result, slot, cols[: len(whatif_knobs(result.method))])
        preset = (
            cols[-2].selectbox(
                "Preset",
                ["as run", *PRESETS],
                key=f"{slot}_preset",
                help="Re-run under the paper's or our tuned settings (the knobs on top)",
            )
            if presets
            else "as run"
        )
        if cols[-1].button("🔁 Re-run", key=f"{slot}_go", type="primary"):
            with engine_errors("The re-run"):
                changes = {
                    **(preset_changes(result.method, preset) if preset != "as run" else {}),
                    **changes_of(result, values),
                }
                new, diff = state.session().rerun(result, corpus, changes)
                shown = ss[slot] = {"base": result, "new": new, "diff": diff}
                mine = True
        if mine:
            show_diff(run, result, shown["new"], shown["diff"], corpus, slot)
            if on_adopt is not None:
                adopt_button(
                    slot,
                    "▶ Use the re-run as this page's result and step through it",
                    on_adopt,
                    adopted(run, {result.method: shown["new"]}),
                )


def _pair(a, b, fmt=str) -> str:
    return fmt(a) if a == b else f"{fmt(a)} → <b>{fmt(b)}</b>"


def _money(v) -> str:
    return "unknown" if v is None else f"${v:.5f}"


def _calls_cell(diff) -> str:
    if diff.calls == (0, 0):
        return "none: offline rules, nothing to replay"
    replayed = (
        f'<span class="tl-replayed" style="background:#eceff3;border:1px dashed #777;border-radius:8px;'
        f'padding:0 .45em">{diff.replayed_calls} replayed</span>'
    )
    return f"{_pair(*diff.calls)} ({replayed} from the first run, free and instant · {diff.new_calls} new)"


def diff_table_html(diff) -> str:
    """Settings, calls, tokens, cost and time, before → after (no token or money rows when both
    runs used none: an offline run)."""
    rows = [
        (
            "settings",
            ", ".join(f"{esc(human_label(k))}: {esc(a)} → <b>{esc(b)}</b>" for k, (a, b) in diff.settings.items())
            or "unchanged",
        ),
        ("answer", "<b>changed</b>" if diff.answer_changed else "unchanged"),
        ("LLM calls", _calls_cell(diff)),
    ]
    if any(diff.tokens) or any(diff.cost):
        rows += [
            ("tokens needed", _pair(*diff.tokens, fmt=lambda v: f"{v:,}")),
            ("tokens billed", f"{diff.billed_tokens[0]:,} → <b>{diff.billed_tokens[1]:,}</b>"),
            ("cost", _pair(*diff.cost, fmt=_money)),
        ]
    else:
        rows.append(("cost", "$0 for both (no LLM call)"))
    rows.append(("time", f"{diff.seconds[0]:.2f}s → <b>{diff.seconds[1]:.2f}s</b>"))
    if diff.reasoner[0] != diff.reasoner[1]:
        rows.insert(1, ("reasoner", f"{esc(diff.reasoner[0])} → <b>{esc(diff.reasoner[1])}</b>"))
    body = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="tl-whatif-diff" style="font-size:.9em">{body}</table>'


def _chips(ids: list[str], names: dict[str, str], mark: str, color: str, css: str) -> str:
    return "".join(
        f'<span class="{css}" style="background:{color};border-radius:10px;padding:.1em .6em;'
        f'margin:.1em;display:inline-block;font-size:.85em">{mark} {esc(names.get(c, c))}</span>'
        for c in ids
    )


def show_diff(run, before, after, diff, corpus, key: str) -> None:
    """The first run and the re-run side by side: answers, evidence added/removed, usage, timelines."""
    html_block(diff_table_html(diff))
    names = chunk_names(corpus, diff.chunks_added + diff.chunks_removed + diff.chunks_kept)
    evidence = _chips(diff.chunks_added, names, "+", "#e7f5ec", "tl-chunk-added") + _chips(
        diff.chunks_removed, names, "−", "#fdecec", "tl-chunk-removed"
    )
    html_block(
        f"<small><b>Evidence</b>: {len(diff.chunks_added)} added, {len(diff.chunks_removed)} removed, "
        f"{len(diff.chunks_kept)} kept</small><br>" + (evidence or "<i>the same chunks</i>")
    )
    scale = max(run_seconds(before), run_seconds(after))  # one time scale for the two timelines
    left, right = st.columns(2, gap="medium")
    for col, result, title in ((left, before, "First run"), (right, after, "Re-run")):
        with col, st.container(border=True):
            st.markdown(f"**{title}**")
            if result is after and diff.replayed_calls:
                st.caption(
                    f"{diff.replayed_calls} of {diff.calls[1]} LLM replies replayed from the first run "
                    "(grey hatched on the timeline)"
                )
            show_answer(result, run.gold, label=title, corpus=corpus)
            show_timeline(
                result, key=f"{key}_{'after' if result is after else 'before'}", in_expander=False, x_max=scale
            )
