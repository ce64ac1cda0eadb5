"""Compare step by step: one control moves T2RAG and KG2RAG together, side by side.

The two methods have different shapes (T2RAG: decompose, rounds, answer; KG2RAG: seeds, hops,
graph, ranking, context, answer), so a joint step pairs the stages that play the same part:
start (decomposition beside the seed chunks), retrieval (round k beside hop k), building the
evidence (later rounds beside the graph, the tree ranking and the context; the shorter side
holds its last stage), answer beside answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.preset_badge import show_column_facts
from components.answer_box import show_answer, verdict
from components.chunk_names import chunk_names
from components.safe import esc, html_block
from components.stepper import stepper
from components.steps import METHOD_TITLES
from components.state import sticky_expander
from components.timeline_view import run_seconds, show_timeline
from engine.methods.registry import COMPARED


@dataclass(frozen=True)
class JointStep:
    label: str
    t2rag: int  # step index in the T2RAG trace
    kg2rag: int  # step index in the KG2RAG trace


def joint_steps(t2_trace, kg_trace) -> list[JointStep]:
    from components import kg2rag_view, t2rag_view

    t2 = t2rag_view.step_labels(t2_trace)
    kg = kg2rag_view.step_labels(kg_trace)
    out = [JointStep(f"Start: {t2[0]} ↔ {kg[0]}", 0, 0)]
    t2_mid, kg_mid = list(range(1, len(t2) - 1)), list(range(1, len(kg) - 1))
    for i in range(max(len(t2_mid), len(kg_mid))):
        a = t2_mid[min(i, len(t2_mid) - 1)] if t2_mid else 0
        b = kg_mid[min(i, len(kg_mid) - 1)] if kg_mid else 0
        out.append(JointStep(f"{t2[a]} ↔ {kg[b]}", a, b))
    out.append(JointStep("Answer ↔ Answer", len(t2) - 1, len(kg) - 1))
    return out


def shared_chunks(run) -> frozenset[str]:
    """Evidence chunks every method of the run used."""
    sets = [set(r.evidence_chunk_ids) for r in run.results if r.method in COMPARED]
    return frozenset(set.intersection(*sets)) if len(sets) > 1 else frozenset()


def evidence_chips(result, shared: frozenset[str], names: dict[str, str]) -> str:
    """The method's evidence chunks; the ones both methods used are marked ⇄ and filled."""
    chips = []
    for cid in result.evidence_chunk_ids:
        on = cid in shared
        style = ("background:#3b6ea8;color:#fff" if on else "background:#eef2f7;color:#333")
        chips.append(f'<span class="tl-chip{" tl-shared" if on else ""}" style="{style};border-radius:10px;'
                     f'padding:.1em .6em;margin:.1em;display:inline-block;font-size:.85em">'
                     f'{"⇄ " if on else ""}{esc(names.get(cid, cid))}</span>')
    return (f"<small><b>Evidence</b> ({len(result.evidence_chunk_ids)} chunks, {len(shared)} shared)</small><br>"
            + ("".join(chips) or "<i>none</i>"))


def show_side_by_side(run, corpus, state_key: str = "cmp_sync") -> None:
    t2 = run.by_method("t2rag")
    kg = run.by_method("kg2rag")
    if t2 is None or kg is None or t2.trace is None or kg.trace is None:
        st.info("Side by side needs both a T2RAG and a KG2RAG trace.")
        return
    from components.kg2rag_view import show_kg2rag_step
    from components.t2rag_view import show_t2rag_step

    steps = joint_steps(t2.trace, kg.trace)
    pos = stepper(state_key, [s.label for s in steps])
    step = steps[pos]
    from dataclasses import replace

    from components.compare_verdict import show_verdict

    show_verdict(replace(run, results=[t2, kg]), corpus, at={"t2rag": step.t2rag, "kg2rag": step.kg2rag},
                 title="At this step" if pos < len(steps) - 1 else "Verdict")
    shared = shared_chunks(run)
    names = chunk_names(corpus, [c for r in (t2, kg) for c in r.evidence_chunk_ids])
    left, right = st.columns(2, gap="medium")
    for col, result, sub in ((left, t2, step.t2rag), (right, kg, step.kg2rag)):
        with col, st.container(border=True):
            v = verdict(result, run.gold)
            st.markdown(f"#### {METHOD_TITLES.get(result.method, result.method)} {v.mark}")
            html_block(evidence_chips(result, shared, names))
            if result.method == "t2rag":
                show_t2rag_step(result, sub, corpus, run.gold, shared)
            else:
                show_kg2rag_step(result, sub, corpus, run.gold)
    show_timelines_row(run, state_key)


def show_timelines_row(run, state_key: str = "cmp_sync") -> None:
    """Each method's timeline in its column, level with each other and on one time scale, so a
    presenter can point at where one method spent the time and money the other did not."""
    results = [r for r in run.results if r.method in COMPARED and r.trace is not None]
    if not results:
        return
    scale = max(run_seconds(r) for r in results)
    with sticky_expander("⏱ Timelines: where time and money went (one time scale)", f"{state_key}_timelines_open"):
        for col, result in zip(st.columns(len(results), gap="medium"), results):
            with col:
                show_timeline(result, key=f"{state_key}_{result.method}", x_max=scale, in_expander=False,
                              title=f"**⏱ {METHOD_TITLES.get(result.method, result.method)}**")


def reserve_verdict_slot() -> None:
    """Keep a place at the top of the page for the verdict: the result's first screen (1440 x 900)
    then says who did better, above the question box, however tall that box is."""
    st.session_state["cmp_verdict_slot"] = st.container()


def show_answers_row(run, corpus=None) -> None:
    """The verdict strip (who did better, and why; in the place kept at the top of the page when
    there is one), then every method's answer box in one row, coloured by its verdict against gold."""
    from components.compare_verdict import show_verdict

    slot = st.session_state.get("cmp_verdict_slot")
    st.session_state["cmp_verdict_slot"] = None
    if slot is not None:
        with slot:
            show_verdict(run, corpus, title=f"Verdict on “{run.question[:80]}”")
    else:
        show_verdict(run, corpus)
    cols = st.columns(len(run.results))
    for col, r in zip(cols, run.results):
        with col:
            show_answer(r, run.gold, label=METHOD_TITLES.get(r.method, r.method), corpus=corpus, with_chain=True)
            show_column_facts(r, run, key=f"cols_{r.method}")
