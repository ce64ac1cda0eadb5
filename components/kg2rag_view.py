"""KG2RAG trace, step by step: seeds, each expansion hop, the weighted graph with spanning-tree
edges solid and pruned edges dashed, walk order, tree ranking, the context as sent, the answer."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.graph import GEdge, GNode, show_graph
from components.llm_calls import show_call
from components.stepper import stepper
from components.t2rag_view import show_answer_box

TREE_COLORS = ["#3b6ea8", "#2a9d8f", "#e9a23b", "#9b5de5", "#e76f51", "#43aa8b", "#577590", "#f9844a"]


def step_labels(trace) -> list[str]:
    return (["Seeds"] + [f"Hop {h.hop}" for h in trace.hops]
            + ["Weighted graph", "Tree ranking", "Selected context", "Answer"])


def weighted_graph(trace) -> tuple[list[GNode], list[GEdge]]:
    """Kept spanning-tree edges solid in their tree's colour; pruned edges dashed grey."""
    labels: dict[str, str] = {}
    for e in trace.edges:
        labels.setdefault(e.u, e.subject)
        labels.setdefault(e.v, e.object)
    seeds = {n.lower() for n in trace.seed_entities}
    edges: list[GEdge] = []
    node_tree: dict[str, int] = {}
    for t in trace.trees:
        color = TREE_COLORS[t.tree_id % len(TREE_COLORS)]
        for n in t.nodes:
            node_tree[n] = t.tree_id
        for i, e in enumerate(t.kept_edges, 1):
            edges.append(GEdge(e.u, e.v, label=f"{i}. {e.predicate}",
                               title=f"tree {t.tree_id}, walk step {i}: {e.line} (chunk {e.chunk_id}, w={e.weight:.3f})",
                               color=color, width=1.5 + 4 * max(0.0, e.weight)))
        for p in t.pruned_edges:
            e = p.edge
            edges.append(GEdge(e.u, e.v, label=e.predicate, dashed=True, color="#b0b0b0", width=1,
                               title=f"pruned ({p.reason}): {e.line} (chunk {e.chunk_id}, w={e.weight:.3f})"))
    selected = {t.tree_id for t in trace.trees if t.selected}
    nodes = []
    for n in sorted(set(trace.nodes) | set(labels)):
        tid = node_tree.get(n)
        color = TREE_COLORS[tid % len(TREE_COLORS)] if tid is not None and tid in selected else "#c9d6e3"
        nodes.append(GNode(n, labels.get(n, n), title=f"{labels.get(n, n)}"
                           + (f" (tree {tid}{', selected' if tid in selected else ''})" if tid is not None else ""),
                           color=color, size=18 if n in seeds else 12))
    return nodes, edges


def _seeds(tr) -> None:
    st.markdown(f"**Top {len(tr.seeds)} chunks by similarity to the question** (seed k = {tr.settings.k})")
    st.dataframe(pd.DataFrame([{"rank": i, "chunk": s.chunk_id, "title": s.title, "score": round(s.score, 4),
                                "triplets": s.n_triplets} for i, s in enumerate(tr.seeds, 1)],
                              columns=["rank", "chunk", "title", "score", "triplets"]),
                 hide_index=True, width="stretch")
    st.markdown("**Seed entities** (the first frontier)")
    st.code(", ".join(tr.seed_entities) or "(none)", language=None, wrap_lines=True)
    if tr.note:
        st.warning(tr.note)


def _hop(h) -> None:
    st.markdown(f"**Hop {h.hop}**: expanded from {len(h.frontier)} entities, reached {len(h.entities_reached)} "
                f"new ones, followed {len(h.triplet_ids)} triplets")
    c1, c2 = st.columns(2)
    c1.markdown("Frontier")
    c1.code(", ".join(h.frontier) or "(none)", language=None, wrap_lines=True)
    c2.markdown("Entities reached")
    c2.code(", ".join(h.entities_reached) or "(none)", language=None, wrap_lines=True)
    st.markdown("**Chunks added**")
    st.dataframe(pd.DataFrame([{"chunk": c.chunk_id, "score": round(c.score, 4)} for c in h.chunks_added],
                              columns=["chunk", "score"]), hide_index=True, width="stretch")
    if h.entity_caps or h.cut_by_total_cap:
        st.markdown("**Cut by the caps**")
        for c in h.entity_caps:
            st.caption(f"hub entity {c.entity}: kept {c.kept} of {c.degree} edges "
                       f"({len(c.cut_triplet_ids)} triplets not followed)")
        if h.cut_by_total_cap:
            st.caption("over the expansion cap: " + ", ".join(c.chunk_id for c in h.cut_by_total_cap))


def _graph(tr) -> None:
    st.markdown(f"**Weighted graph**: {len(tr.nodes)} entities, {len(tr.edges)} edges, {len(tr.trees)} "
                "components. Solid: maximum-spanning-tree edges (numbered in walk order, thicker = heavier); "
                "dashed grey: pruned. Coloured nodes belong to selected trees; big nodes are seed entities.")
    nodes, edges = weighted_graph(tr)
    show_graph(nodes, edges, height=480)
    for t in tr.trees:
        with st.expander(f"Tree {t.tree_id}: {len(t.kept_edges)} edges in walk order, "
                         f"{len(t.pruned_edges)} pruned, {len(t.chunk_ids)} chunks"):
            st.dataframe(pd.DataFrame([{"walk": i, "triplet": e.line, "chunk": e.chunk_id, "weight": round(e.weight, 4)}
                                       for i, e in enumerate(t.kept_edges, 1)],
                                      columns=["walk", "triplet", "chunk", "weight"]),
                         hide_index=True, width="stretch")
            if t.pruned_edges:
                st.dataframe(pd.DataFrame([{"pruned": p.edge.line, "reason": p.reason, "chunk": p.edge.chunk_id,
                                            "weight": round(p.edge.weight, 4)} for p in t.pruned_edges]),
                             hide_index=True, width="stretch")


def _ranking(tr) -> None:
    st.markdown(f"**Ranker:** {tr.ranker or '-'}")
    st.dataframe(pd.DataFrame([{"rank": i, "tree": t.tree_id,
                                "score": None if t.rank_score is None else round(t.rank_score, 4),
                                "selected": "yes" if t.selected else "", "chunks": len(t.chunk_ids),
                                "note": t.note, "triplet form": t.triplet_form}
                               for i, t in enumerate(tr.trees, 1)],
                              columns=["rank", "tree", "score", "selected", "chunks", "note", "triplet form"]),
                 hide_index=True, width="stretch")


def _context(tr) -> None:
    st.markdown(f"**Chunks from selected trees** ({len(tr.tree_chunk_ids)}): " + (", ".join(tr.tree_chunk_ids) or "none"))
    if tr.fill_chunk_ids:
        st.markdown(f"**Seed chunks added as fill** (trees gave fewer than k/2): {', '.join(tr.fill_chunk_ids)}")
    st.markdown("**Context exactly as sent**")
    st.code(tr.context or "(empty)", language=None, wrap_lines=True)


def show_kg2rag(result, state_key: str = "kg_step") -> None:
    tr = result.trace
    if tr is None:
        show_answer_box(result)
        return
    labels = step_labels(tr)
    pos = stepper(state_key, labels)
    name = labels[pos]
    if pos == 0:
        _seeds(tr)
    elif name.startswith("Hop "):
        _hop(tr.hops[pos - 1])
    elif name == "Weighted graph":
        _graph(tr)
    elif name == "Tree ranking":
        _ranking(tr)
    elif name == "Selected context":
        _context(tr)
    else:
        show_answer_box(result)
        show_call(tr.call, label="answer")
        if tr.timings:
            st.caption("Seconds per step: " + ", ".join(f"{k} {v:.3f}" for k, v in tr.timings.items()))
