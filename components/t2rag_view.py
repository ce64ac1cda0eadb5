"""T2RAG trace, step by step: decomposition, each round (state before/after, walked propositions,
chunks with the matched spans, placeholders filled and where from, dependency graph), answer.

Every string from the trace is escaped before any <mark> or link is added (components.safe).
"""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from components.graph import GEdge, GNode, LegendItem, show_graph
from components.llm_calls import show_call
from components.safe import esc, highlight, html_block
from components.stepper import stepper

QUEUE_COLORS = {"resolved": "#2a9d8f", "searchable": "#e9a23b", "fuzzy": "#e76f51"}
QUEUES = ("resolved", "searchable", "fuzzy")
DEP_LEGEND = [LegendItem("resolved triplet", QUEUE_COLORS["resolved"], "line"),
              LegendItem("searchable (one placeholder)", QUEUE_COLORS["searchable"], "line"),
              LegendItem("fuzzy (two or more)", QUEUE_COLORS["fuzzy"], "line"),
              LegendItem("open placeholder", "#e76f51"), LegendItem("filled placeholder", "#2a9d8f"),
              LegendItem("filled this round", "#f4a261"), LegendItem("entity", "#a8c5e6")]


def step_labels(trace) -> list[str]:
    return ["Decompose"] + [f"Round {r.index}" for r in trace.rounds] + ["Answer"]


def _anchor(chunk_id: str) -> str:
    return "chunk-" + re.sub(r"[^A-Za-z0-9_-]", "_", chunk_id)


def _queue_of(snapshot) -> dict[str, str]:
    out = {}
    for q in QUEUES:
        for t in getattr(snapshot, q):
            out[t.id] = q
    return out


def _state_html(snapshot, fresh: set[str], title: str) -> str:
    parts = [f"<b>{esc(title)}</b>"]
    for q in QUEUES:
        items = getattr(snapshot, q)
        parts.append(f'<div style="margin-top:.4em"><span style="color:{QUEUE_COLORS[q]};font-weight:600">'
                     f"{q} ({len(items)})</span><ul style='margin:.1em 0 .1em 1.2em;padding:0'>")
        for t in items:
            text = esc(f"{t.id}: {t.text()}")
            parts.append(f"<li><mark>{text}</mark> 🆕</li>" if t.id in fresh else f"<li>{text}</li>")
        parts.append("</ul></div>")
    return "".join(parts)


def _bindings_until(trace, upto: int) -> dict[str, str]:
    vals: dict[str, str] = {}
    for r in trace.rounds[:upto]:
        for b in r.bindings:
            vals.setdefault(b.placeholder, b.value)
    return vals


def dependency_graph(trace, round_pos: int) -> tuple[list[GNode], list[GEdge]]:
    """Placeholders and entities of the decomposition, edges coloured by each triplet's queue after
    round `round_pos` (0 = right after decomposing); placeholders filled in that round stand out."""
    d = trace.decomposition
    if d is None:
        return [], []
    snap = d.state if round_pos == 0 else trace.rounds[round_pos - 1].state_after
    queue = _queue_of(snap)
    bound = _bindings_until(trace, round_pos)
    fresh = {b.placeholder for b in trace.rounds[round_pos - 1].bindings} if round_pos else set()
    current = {t.id: t for q in QUEUES for t in getattr(snap, q)}
    nodes: dict[str, GNode] = {}
    edges: list[GEdge] = []

    def node_for(tid: str, i: int, part: str) -> str:
        p = part.strip()
        if p.startswith("?"):
            nid = p if p != "?" else f"{tid}:?{i}"
            if p in bound:
                color = "#f4a261" if p in fresh else "#2a9d8f"
                label, size = f"{p} = {bound[p]}", 20 if p in fresh else 16
            else:
                color, label, size = "#e76f51", p, 16
            nodes.setdefault(nid, GNode(nid, label, title=label, color=color, size=size))
            return nid
        nid = "e:" + p.lower()
        nodes.setdefault(nid, GNode(nid, p, color="#a8c5e6", size=12))
        return nid

    for t in d.triplets:
        a = node_for(t.id, 0, t.subject)
        b = node_for(t.id, 2, t.object)
        q = queue.get(t.id, "resolved")
        now = current.get(t.id)
        edges.append(GEdge(a, b, label=t.predicate, title=f"{t.id} [{q}] {now.text() if now else t.text()}",
                           color=QUEUE_COLORS[q], width=3 if q == "resolved" else 2))
    return list(nodes.values()), edges


def _chunk_needles(rnd, corpus) -> dict[str, list[str]]:
    """Per chunk: the subject / object of the walked propositions it states (what matched)."""
    by_tid = {}
    if corpus is not None:
        try:
            by_tid = {t.triplet_id: t for t in corpus.get_triplets([w.triplet_id for w in rnd.walked])}
        except Exception:  # a reopened run whose corpus changed: fall back to the bindings only
            by_tid = {}
    out: dict[str, list[str]] = {}
    for w in rnd.walked:
        t = by_tid.get(w.triplet_id)
        for cid in w.chunk_ids:
            if t is not None:
                out.setdefault(cid, []).extend([t.subject, t.object])
    return out


def _show_round(trace, pos: int, corpus) -> None:
    rnd = trace.rounds[pos - 1]
    fresh = set(rnd.newly_resolved) | set(rnd.new_searchable)
    c1, c2 = st.columns(2)
    with c1:
        html_block(_state_html(rnd.state_before, set(), "Before the round"))
    with c2:
        html_block(_state_html(rnd.state_after, fresh, "After the round (🆕 = changed this round)"))

    st.markdown("**Placeholders filled this round**")
    if not rnd.bindings:
        st.caption(rnd.solve_skipped or "none")
    rows = []
    for b in rnd.bindings:
        links = " ".join(f'<a href="#{_anchor(c)}">{esc(c)}</a>' for c in b.chunk_ids)
        src = f" ← <i>{esc(b.proposition)}</i>" if b.proposition else ""
        note = f" <small>({esc(b.note)})</small>" if b.note else ""
        rows.append(f"<li><code>{esc(b.placeholder)}</code> = <mark>{esc(b.value)}</mark>{src}"
                    f"{' · chunk ' + links if links else ''}{note}</li>")
    if rows:
        html_block("<ul>" + "".join(rows) + "</ul>")
    if rnd.unmatched:
        st.caption("Solver triplets matching no open triplet: " + "; ".join(rnd.unmatched))

    st.markdown(f"**Queries** ({len(rnd.queries)}) and **walked propositions** (pool of {rnd.pool_size})")
    st.dataframe(pd.DataFrame([{"#": i, "query": q.text, "kind": q.kind} for i, q in enumerate(rnd.queries)]),
                 hide_index=True, width="stretch")
    filling = {b.proposition_triplet_id for b in rnd.bindings if b.proposition_triplet_id is not None}
    st.dataframe(pd.DataFrame([{"order": i, "score": round(w.score, 4), "proposition": w.text,
                                "query": w.query_index, "chunks": ", ".join(w.chunk_ids),
                                "new chunks": ", ".join(w.new_chunk_ids),
                                "filled a placeholder": "yes" if w.triplet_id in filling else ""}
                               for i, w in enumerate(rnd.walked, 1)],
                              columns=["order", "score", "proposition", "query", "chunks", "new chunks",
                                       "filled a placeholder"]),
                 hide_index=True, width="stretch")

    st.markdown(f"**Chunks shown to the solver** ({len(rnd.chunks)}); matched entities marked, "
                "filled values in orange")
    needles = _chunk_needles(rnd, corpus)
    values = [b.value for b in rnd.bindings]
    for c in rnd.chunks:
        body = highlight(c.text, needles.get(c.chunk_id, []) + values)
        for v in values:  # values get their own colour on top of the plain match
            body = body.replace(f"<mark>{esc(v)}</mark>", f'<mark style="background:#f4a261">{esc(v)}</mark>')
        html_block(f'<div id="{_anchor(c.chunk_id)}" style="border-left:3px solid #ccc;padding-left:.6em;'
                   f'margin:.4em 0"><small><b>{esc(c.chunk_id)}</b> · {esc(c.title)}</small><br>{body}</div>')

    st.markdown("**Placeholder dependency graph** (edges: green resolved, amber searchable, red fuzzy; "
                "orange node = filled this round)")
    nodes, edges = dependency_graph(trace, pos)
    show_graph(nodes, edges, height=320, directed=True, legend=DEP_LEGEND)
    t = rnd.timing
    st.caption(f"engine {t.engine:.3f}s (retrieve {t.retrieve:.3f}s, update {t.update:.3f}s) · solve {t.solve:.3f}s")
    show_call(rnd.solve_call, label="solve")


def _show_decompose(trace) -> None:
    d = trace.decomposition
    if d is None:
        st.info("No decomposition in this trace.")
        return
    if d.failure:
        st.warning(f"Decomposition problem: {d.failure}. The rounds search with the question instead.")
    html_block(_state_html(d.state, set(), "Query triplets, classified by their placeholders"))
    nodes, edges = dependency_graph(trace, 0)
    if nodes:
        st.markdown("**Placeholder dependency graph**")
        show_graph(nodes, edges, height=300, directed=True, legend=DEP_LEGEND)
    show_call(d.call, label="decompose")


def _show_answer(result, gold: list[str] | None = None) -> None:
    from engine.methods.t2rag_trace import STOP_REASONS

    tr = result.trace
    st.info(f"Stop reason: **{tr.stop_reason or '-'}** — {STOP_REASONS.get(tr.stop_reason, '')}")
    syn = tr.synthesis
    if syn is not None:
        st.markdown(f"**Synthesis mode:** {syn.mode}")
        if syn.facts:
            st.markdown("**Resolved facts used**")
            st.code("\n".join(syn.facts), language=None, wrap_lines=True)
        if syn.context:
            with st.expander("Context sent with the facts"):
                st.code(syn.context, language=None, wrap_lines=True)
    show_answer_box(result, gold)
    if syn is not None:
        show_call(syn.call, label="answer")


def show_answer_box(result, gold: list[str] | None = None) -> None:
    """The answer, coloured by its verdict against `gold` (components.answer_box)."""
    from components.answer_box import show_answer

    show_answer(result, gold)


def show_t2rag(result, corpus=None, state_key: str = "ask_round", gold: list[str] | None = None) -> None:
    """The T2RAG stepper for one result (a fresh run or a reopened trace)."""
    tr = result.trace
    if tr is None:
        show_answer_box(result, gold)
        return
    labels = step_labels(tr)
    pos = stepper(state_key, labels)
    if pos == 0:
        _show_decompose(tr)
    elif pos == len(labels) - 1:
        _show_answer(result, gold)
    else:
        _show_round(tr, pos, corpus)
