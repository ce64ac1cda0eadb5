"""Compare step by step: one control moves every compared method together, side by side.

The methods have different shapes (T2RAG: decompose, rounds, answer; KG2RAG: seeds, hops, graph,
ranking, context, answer; a plug-in: whatever its view's steps are), so a joint step pairs the
steps that play the same part, by position, for any number of columns: start beside start, then
the middle steps in order (a column with fewer holds its last middle step), answer beside answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.chunk_names import chunk_names
from components.compare.timeline_view import run_seconds, show_timeline
from components.contract import view_for
from components.methods.base import show_step
from components.shell.safe import esc, html_block
from components.shell.state import sticky_expander
from components.widgets.answer_box import show_answer, verdict
from components.widgets.preset_badge import show_column_facts
from components.widgets.stepper import stepper
from engine.core.textnorm import shorten
from engine.methods.registry import METHODS, title


@dataclass(frozen=True)
class JointStep:
    label: str
    at: dict[str, int]  # method -> the step of its own view shown at this joint step


def joint_steps(labels: dict[str, list[str]]) -> list[JointStep]:
    """Joint steps over each method's step labels (method -> its view's labels, in column order)."""
    labels = {m: ls for m, ls in labels.items() if ls}
    if not labels:
        return []
    names = list(labels)
    mids = {m: list(range(1, len(ls) - 1)) for m, ls in labels.items()}

    def lab(at: dict[str, int]) -> str:
        return " ↔ ".join(labels[m][at[m]] for m in names)

    start = {m: 0 for m in names}
    out = [JointStep(f"Start: {lab(start)}", start)]
    for i in range(max(len(v) for v in mids.values())):
        at = {m: (mids[m][min(i, len(mids[m]) - 1)] if mids[m] else 0) for m in names}
        out.append(JointStep(lab(at), at))
    end = {m: len(labels[m]) - 1 for m in names}
    out.append(JointStep(lab(end), end))
    return out


def columns_of(run) -> list:
    """The results Compare steps side by side: every method of the run that is not a baseline (in
    the registry's order of the run), with a trace to step through."""
    return [
        r
        for r in run.results
        if not getattr(METHODS.get(r.method), "baseline", True)
        and r.trace is not None
        and not isinstance(r.trace, dict)
    ]


def shared_chunks(run) -> frozenset[str]:
    """Evidence chunks every compared method of the run used."""
    sets = [set(r.evidence_chunk_ids) for r in columns_of(run)]
    return frozenset(set.intersection(*sets)) if len(sets) > 1 else frozenset()


def evidence_chips(result, shared: frozenset[str], names: dict[str, str]) -> str:
    """The method's evidence chunks; the ones both methods used are marked ⇄ and filled."""
    chips = []
    for cid in result.evidence_chunk_ids:
        on = cid in shared
        style = "background:#3b6ea8;color:#fff" if on else "background:#eef2f7;color:#333"
        chips.append(
            f'<span class="tl-chip{" tl-shared" if on else ""}" style="{style};border-radius:10px;'
            f'padding:.1em .6em;margin:.1em;display:inline-block;font-size:.85em">'
            f"{'⇄ ' if on else ''}{esc(names.get(cid, cid))}</span>"
        )
    return f"<small><b>Evidence</b> ({len(result.evidence_chunk_ids)} chunks, {len(shared)} shared)</small><br>" + (
        "".join(chips) or "<i>none</i>"
    )


def show_side_by_side(run, corpus, state_key: str = "cmp_sync") -> None:
    results = columns_of(run)
    if len(results) < 2:
        st.info("Side by side needs traces of two or more compared methods.")
        return
    from dataclasses import replace

    from components.compare.verdict import show_verdict

    steps = joint_steps({r.method: view_for(r).step_labels(r) for r in results})
    pos = stepper(state_key, [s.label for s in steps])
    step = steps[pos]
    show_verdict(
        replace(run, results=results), corpus, at=step.at, title="At this step" if pos < len(steps) - 1 else "Verdict"
    )
    shared = shared_chunks(run)
    names = chunk_names(corpus, [c for r in results for c in r.evidence_chunk_ids])
    for col, result in zip(st.columns(len(results), gap="medium"), results):
        with col, st.container(border=True):
            v = verdict(result, run.gold)
            st.markdown(f"#### {title(result.method)} {v.mark}")
            html_block(evidence_chips(result, shared, names))
            show_step(result, step.at[result.method], corpus, run.gold, shared)
    show_timelines_row(run, state_key)


def show_timelines_row(run, state_key: str = "cmp_sync") -> None:
    """Each method's timeline in its column, level with each other and on one time scale, so a
    presenter can point at where one method spent the time and money the other did not."""
    results = columns_of(run)
    if not results:
        return
    scale = max(run_seconds(r) for r in results)
    with sticky_expander("⏱ Timelines: where time and money went (one time scale)", f"{state_key}_timelines_open"):
        for col, result in zip(st.columns(len(results), gap="medium"), results):
            with col:
                show_timeline(
                    result,
                    key=f"{state_key}_{result.method}",
                    x_max=scale,
                    in_expander=False,
                    title=f"**⏱ {title(result.method)}**",
                )


def reserve_verdict_slot() -> None:
    """Keep a place at the top of the page for the verdict: the result's first screen (1440 x 900)
    then says who did better, above the question box, however tall that box is."""
    st.session_state["cmp_verdict_slot"] = st.container()


def show_answers_row(run, corpus=None) -> None:
    """The verdict strip (who did better, and why; in the place kept at the top of the page when
    there is one), then every method's answer box in one row, coloured by its verdict against gold."""
    from components.compare.verdict import show_verdict

    slot = st.session_state.get("cmp_verdict_slot")
    st.session_state["cmp_verdict_slot"] = None
    if slot is not None:
        with slot:
            show_verdict(run, corpus, title=f"Verdict on “{shorten(run.question, 80)}”")
    else:
        show_verdict(run, corpus)
    cols = st.columns(len(run.results))
    for col, r in zip(cols, run.results):
        with col:
            show_answer(r, run.gold, label=title(r.method), corpus=corpus, with_chain=True)
            show_column_facts(r, run, key=f"cols_{r.method}")
