"""T2RAG trace, step by step: decomposition, each round (state before/after, walked propositions,
chunks with the matched spans, placeholders filled and where from, dependency graph), answer.

Every string from the trace is escaped before any <mark> or link is added (components.safe).
"""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from components.chunk_names import chunk_names, chunk_texts
from components.evidence_chain import source_badge
from components.graph import GEdge, GNode, LegendItem, show_graph
from components.llm_calls import show_call
from components.safe import esc, highlight, html_block
from components.state import content_key, sticky_expander
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
    """Placeholder -> value the state took (a binding it ignored filled nothing)."""
    vals: dict[str, str] = {}
    for r in trace.rounds[:upto]:
        for b in r.bindings:
            if b.applied_to:
                vals.setdefault(b.placeholder, b.value)
    return vals


def _sources_until(trace, upto: int) -> dict[str, tuple[int, object]]:
    """placeholder -> (round, its first BindingRecord) over the first `upto` rounds."""
    out: dict[str, tuple[int, object]] = {}
    for r in trace.rounds[:upto]:
        for b in r.bindings:
            out.setdefault(b.placeholder, (r.index, b))
    return out


def _source_text(rnd: int, b, chunks: dict[str, tuple[str, str]]) -> str:
    """Where a value came from, as the click panel shows it: the round, the solver's named source,
    the sentence stating it and the chunk (its name and text)."""
    lines = [f"{b.placeholder} = {b.value}: filled in round {rnd}" + (f" from {b.source}" if b.source else "")]
    if b.quote:
        lines.append(f"“{b.quote}”")
    for cid in b.chunk_ids[:2]:
        name, text = chunks.get(cid, (cid, ""))
        lines.append(f"Source chunk: {name}" + (f"\n{text}" if text else ""))
    return "\n".join(lines)


def dependency_graph(trace, round_pos: int, chunks: dict[str, tuple[str, str]] | None = None
                     ) -> tuple[list[GNode], list[GEdge]]:
    """Placeholders and entities of the decomposition, edges coloured by each triplet's queue after
    round `round_pos` (0 = right after decomposing); placeholders filled in that round stand out.
    A click on a filled placeholder, or on a triplet that holds one, shows the value's source
    chunk (`chunks`: chunk id -> (name, text), components.chunk_names.chunk_texts)."""
    chunks = chunks or {}
    d = trace.decomposition
    if d is None:
        return [], []
    snap = d.state if round_pos == 0 else trace.rounds[round_pos - 1].state_after
    queue = _queue_of(snap)
    bound = _bindings_until(trace, round_pos)
    fresh = {b.placeholder for b in trace.rounds[round_pos - 1].bindings if b.applied_to} if round_pos else set()
    current = {t.id: t for q in QUEUES for t in getattr(snap, q)}
    sources = _sources_until(trace, round_pos)
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
            detail = _source_text(*sources[p], chunks) if p in sources else ""
            nodes.setdefault(nid, GNode(nid, label, title=label, color=color, size=size, detail=detail))
            return nid
        nid = "e:" + p.lower()
        nodes.setdefault(nid, GNode(nid, p, color="#a8c5e6", size=12))
        return nid

    for t in d.triplets:
        a = node_for(t.id, 0, t.subject)
        b = node_for(t.id, 2, t.object)
        q = queue.get(t.id, "resolved")
        now = current.get(t.id)
        title = f"{t.id} [{q}] {now.text() if now else t.text()}"
        filled = [_source_text(*sources[p], chunks) for p in t.placeholders if p in sources]
        edges.append(GEdge(a, b, label=t.predicate, title=title, color=QUEUE_COLORS[q],
                           width=3 if q == "resolved" else 2, detail="\n\n".join([title, *filled])))
    return list(nodes.values()), edges


def _chunk_needles(rnd, corpus) -> dict[str, list[str]]:
    """Per chunk: the entities of the question / answer chain it states, and nothing else.

    The chain is the walked propositions that filled a placeholder (their subject and object) and
    the named entities of the triplets still open before the round. Marking every entity of every
    walked proposition marks nearly every name in the chunk, which tells the reader nothing.
    """
    filling = {b.proposition_triplet_id for b in rnd.bindings if b.proposition_triplet_id is not None}
    chain = [p.strip() for q in ("searchable", "fuzzy") for t in getattr(rnd.state_before, q)
             for p in (t.subject, t.object) if p and not p.strip().startswith("?")]
    by_tid = {}
    if corpus is not None and filling:
        try:
            by_tid = {t.triplet_id: t for t in corpus.get_triplets(sorted(filling))}
        except Exception:  # a reopened run whose corpus changed: fall back to the bindings only
            by_tid = {}
    out: dict[str, list[str]] = {c.chunk_id: list(chain) for c in rnd.chunks}
    for w in rnd.walked:
        t = by_tid.get(w.triplet_id)
        for cid in w.chunk_ids:
            if t is not None:
                out.setdefault(cid, []).extend([t.subject, t.object])
    return out


def _body(text: str, title: str) -> str:
    """Chunk text without a leading copy of its title (the card's header already names it)."""
    t = (text or "").lstrip()
    return t[len(title):].lstrip(" :.-\n") if title and t.startswith(title) else t


def chunk_card(chunk_id: str, name: str, body_html: str, shared: bool = False) -> str:
    """One chunk as a card with an anchor that links can scroll to (clear of the page header)."""
    badge = (' <span style="background:#e3ecfa;color:#2b4c7e;border-radius:8px;padding:0 .5em;'
             'font-size:.8em">⇄ used by both methods</span>') if shared else ""
    return (f'<div id="{_anchor(chunk_id)}" style="border-left:3px solid {"#3b6ea8" if shared else "#ccc"};'
            f'padding-left:.6em;margin:.4em 0;scroll-margin-top:5rem"><small><b>{esc(name)}</b></small>{badge}'
            f"<br>{body_html}</div>")


def _show_round(trace, pos: int, corpus, shared: frozenset[str] = frozenset()) -> None:
    rnd = trace.rounds[pos - 1]
    names = chunk_names(corpus, [c.chunk_id for c in rnd.chunks] + [c for w in rnd.walked for c in w.chunk_ids]
                        + [c for b in rnd.bindings for c in b.chunk_ids])
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
        links = ", ".join(f'<a href="#{_anchor(c)}">{esc(names.get(c, c))}</a>' for c in b.chunk_ids)
        src = f" ← <i>{esc(b.proposition)}</i>" if b.proposition else ""
        note = f" <small>({esc(b.note)})</small>" if b.note else ""
        badge = f" {source_badge(b.source_kind)}" if b.applied_to else ""
        rows.append(f"<li><code>{esc(b.placeholder)}</code> = <mark>{esc(b.value)}</mark>{badge}{src}"
                    f"{' · from ' + links if links else ''}{note}</li>")
    if rows:
        html_block("<ul>" + "".join(rows) + "</ul>")
    if rnd.unmatched:
        fate = (f" · {len(rnd.adopted)} taken into the state as new clues (adopt_proposed, the paper)"
                if getattr(rnd, "adopted", None) else " · shown only, not searched with")
        st.caption("Solver triplets matching no open triplet: " + "; ".join(rnd.unmatched) + fate)

    st.markdown(f"**Queries** ({len(rnd.queries)}) and **walked propositions** (pool of {rnd.pool_size})")
    st.dataframe(pd.DataFrame([{"#": i, "query": q.text, "kind": q.kind} for i, q in enumerate(rnd.queries)]),
                 hide_index=True, width="stretch")
    filling = {b.proposition_triplet_id for b in rnd.bindings if b.proposition_triplet_id is not None}
    st.dataframe(pd.DataFrame([{"order": i, "score": round(w.score, 4), "proposition": w.text,
                                "query": w.query_index, "chunks": ", ".join(names.get(c, c) for c in w.chunk_ids),
                                "new chunks": ", ".join(names.get(c, c) for c in w.new_chunk_ids),
                                "filled a placeholder": "yes" if w.triplet_id in filling else ""}
                               for i, w in enumerate(rnd.walked, 1)],
                              columns=["order", "score", "proposition", "query", "chunks", "new chunks",
                                       "filled a placeholder"]),
                 hide_index=True, width="stretch")

    st.markdown(f"**Chunks shown to the solver** ({len(rnd.chunks)}); entities of the question's chain "
                "marked, filled values in orange")
    needles = _chunk_needles(rnd, corpus)
    values = [b.value for b in rnd.bindings]
    for c in rnd.chunks:
        body = highlight(_body(c.text, c.title), needles.get(c.chunk_id, []) + values)
        for v in values:  # values get their own colour on top of the plain match
            body = body.replace(f"<mark>{esc(v)}</mark>", f'<mark style="background:#f4a261">{esc(v)}</mark>')
        html_block(chunk_card(c.chunk_id, names.get(c.chunk_id, c.chunk_id), body, c.chunk_id in shared))

    st.markdown("**Placeholder dependency graph** (edges: green resolved, amber searchable, red fuzzy; "
                "orange node = filled this round)")
    src = chunk_texts(corpus, [c for r in trace.rounds[:pos] for b in r.bindings for c in b.chunk_ids[:2]])
    nodes, edges = dependency_graph(trace, pos, src)
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
    from engine.methods.t2rag.trace import STOP_REASONS

    tr = result.trace
    st.info(f"Stop reason: **{tr.stop_reason or '-'}** — {STOP_REASONS.get(tr.stop_reason, '')}")
    syn = tr.synthesis
    if syn is not None:
        st.markdown(f"**Synthesis mode:** {syn.mode}")
        if syn.facts:
            st.markdown("**Resolved facts used**")
            st.code("\n".join(syn.facts), language=None, wrap_lines=True)
        if syn.context:
            with sticky_expander("Context sent with the facts", content_key("t2ctx", syn.context)):
                st.code(syn.context, language=None, wrap_lines=True)
    show_answer_box(result, gold)
    if syn is not None:
        show_call(syn.call, label="answer")


def show_answer_box(result, gold: list[str] | None = None) -> None:
    """The answer, coloured by its verdict against `gold` (components.answer_box)."""
    from components.answer_box import show_answer

    show_answer(result, gold)


def show_t2rag_step(result, pos: int, corpus=None, gold: list[str] | None = None,
                    shared: frozenset[str] = frozenset()) -> None:
    """Draw step `pos` of the T2RAG trace (the stepper lives with the caller); `shared` chunks
    (used by the other method too, on Compare) are marked."""
    tr = result.trace
    last = len(step_labels(tr)) - 1
    pos = max(0, min(pos, last))
    if pos == 0:
        _show_decompose(tr)
    elif pos == last:
        _show_answer(result, gold)
    else:
        _show_round(tr, pos, corpus, shared)


def show_t2rag(result, corpus=None, state_key: str = "ask_round", gold: list[str] | None = None) -> None:
    """The T2RAG stepper for one result (a fresh run or a reopened trace)."""
    tr = result.trace
    if tr is None:
        show_answer_box(result, gold)
        return
    show_t2rag_step(result, stepper(state_key, step_labels(tr)), corpus, gold)
