"""KG2RAG trace, step by step: seeds, each expansion hop, the weighted graph with spanning-tree
edges solid and pruned edges dashed, walk order, tree ranking, the context as sent, the answer."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.preset_badge import seed_stage_label
from components.chunk_names import chunk_names, chunk_texts
from components.graph import GEdge, GNode, LegendItem, show_graph
from components.palette import distinct_colors, tint
from components.llm_calls import show_call
from components.state import content_key, sticky_expander
from components.stepper import stepper
from components.t2rag_view import show_answer_box

PRUNED_COLORS = {"parallel": "#6e6e6e", "cycle": "#a0526d", "self-loop": "#7d6f1e"}  # dark enough on white
#: how far an unselected tree is mixed with white: visibly "not chosen", still a readable line
UNSELECTED_TINT = 0.4
PRUNED_WHY = {"parallel": "a heavier edge joins the same entities", "cycle": "it would close a cycle",
              "self-loop": "subject and object are the same entity"}


def step_labels(trace) -> list[str]:
    return (["Seeds"] + [f"Hop {h.hop}" for h in trace.hops]
            + ["Weighted graph", "Tree ranking", "Selected context", "Answer"])


def tree_names(trace) -> dict[int, str]:
    """Trees are named by rank (the trace lists them best first): "Tree 1" is the best tree."""
    return {t.tree_id: f"Tree {i}" for i, t in enumerate(trace.trees, 1)}


def tree_colors(trace) -> dict[int, str]:
    return dict(zip((t.tree_id for t in trace.trees), distinct_colors(len(trace.trees))))


def _edge_detail(e, head: str, chunks: dict[str, tuple[str, str]]) -> str:
    name, text = chunks.get(e.chunk_id, (e.chunk_id, ""))
    return f"{e.line}\n{head}\nSource: {name}" + (f"\n{text}" if text else "")


def weighted_graph(trace, corpus=None) -> tuple[list[GNode], list[GEdge], list[LegendItem]]:
    """Kept spanning-tree edges solid in their tree's colour and numbered in walk order; pruned
    edges dashed, coloured by why they were pruned; seed entities ringed; unselected trees pale."""
    labels: dict[str, str] = {}
    for e in trace.edges:
        labels.setdefault(e.u, e.subject)
        labels.setdefault(e.v, e.object)
    seeds = {n.lower() for n in trace.seed_entities}
    names, colors = tree_names(trace), tree_colors(trace)
    chunks = chunk_texts(corpus, [e.chunk_id for e in trace.edges])
    width = edge_widths([e.weight for t in trace.trees for e in t.kept_edges])
    edges: list[GEdge] = []
    node_tree: dict[str, int] = {}
    reasons: set[str] = set()
    for t in trace.trees:
        color = colors[t.tree_id] if t.selected else tint(colors[t.tree_id], UNSELECTED_TINT)
        for n in t.nodes:
            node_tree[n] = t.tree_id
        for i, e in enumerate(t.kept_edges, 1):
            head = f"{names[t.tree_id]}{' (selected)' if t.selected else ''}, walk step {i}, weight {e.weight:.3f}"
            edges.append(GEdge(e.u, e.v, label=f"{i}. {e.predicate}", title=f"{head}: {e.line}",
                               color=color, width=width(e.weight), detail=_edge_detail(e, head, chunks)))
        for p in t.pruned_edges:
            e = p.edge
            reasons.add(p.reason)
            head = f"Pruned from {names[t.tree_id]}: {p.reason} ({PRUNED_WHY.get(p.reason, '')}), weight {e.weight:.3f}"
            edges.append(GEdge(e.u, e.v, dashed=True, color=PRUNED_COLORS.get(p.reason, "#6e6e6e"), width=2,
                               title=f"{head}: {e.line}", detail=_edge_detail(e, head, chunks)))
    selected = {t.tree_id for t in trace.trees if t.selected}
    touching: dict[str, list[str]] = {}  # node -> the triplets it takes part in, with their chunk
    for t in trace.trees:
        for e in t.kept_edges:
            line = f"• {e.line}  [{chunks.get(e.chunk_id, (e.chunk_id, ''))[0]}]"
            touching.setdefault(e.u, []).append(line)
            touching.setdefault(e.v, []).append(line)
    nodes = []
    for n in sorted(set(trace.nodes) | set(labels)):
        tid = node_tree.get(n)
        label = labels.get(n, n)
        color = "#9fb3c8" if tid is None else (colors[tid] if tid in selected else tint(colors[tid], UNSELECTED_TINT))
        where = "" if tid is None else f"{names[tid]}{' (selected)' if tid in selected else ''}"
        kind = "seed entity" if n.lower() in seeds or label.lower() in seeds else "entity reached by expansion"
        title = f"{label}: {kind}" + (f", {where}" if where else "")
        facts = touching.get(n, [])
        detail = title + ("\nTriplets (source chunk):\n" + "\n".join(facts) if facts else "")
        nodes.append(GNode(n, label, title=title, color=color, size=18 if kind == "seed entity" else 13,
                           border="#111111" if kind == "seed entity" else "", detail=detail))
    legend = [LegendItem("seed entity", "#111111", "ring"), LegendItem("reached by expansion", "#9aa5b1")]
    legend += [LegendItem(f"{names[t.tree_id]}{' ✓ selected' if t.selected else ''}",
                          colors[t.tree_id] if t.selected else tint(colors[t.tree_id], UNSELECTED_TINT), "line")
               for t in trace.trees if t.kept_edges]
    legend += [LegendItem(f"pruned: {r}", PRUNED_COLORS.get(r, "#6e6e6e"), "dashed") for r in sorted(reasons)]
    return nodes, edges, legend


def edge_widths(weights: list[float], thinnest: float = 2.5, thickest: float = 8.0):
    """Edge width by weight, spread over this graph's own range (weights are cosines that sit
    close together, ~0.3-0.7: on an absolute scale every edge looked the same)."""
    lo, hi = (min(weights), max(weights)) if weights else (0.0, 1.0)

    def width(w: float) -> float:
        share = (w - lo) / (hi - lo) if hi - lo > 1e-9 else 1.0
        return round(thinnest + (thickest - thinnest) * share, 2)

    return width


def plural(n: int, word: str, many: str = "") -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _seeds(tr, names: dict[str, str]) -> None:
    hybrid = any(s.fused_score is not None for s in tr.seeds)
    st.markdown(f"**{seed_stage_label(tr)}** (seed k = {tr.settings.k})")
    rows = [{"rank": i, "chunk": names.get(s.chunk_id, s.chunk_id), "score": round(s.score, 4),
             "triplets": s.n_triplets} for i, s in enumerate(tr.seeds, 1)]
    columns = ["rank", "chunk", "score", "triplets"]
    if hybrid:  # the fused score ranked them; the cosine is the edge weight the graph uses
        for row, s in zip(rows, tr.seeds):
            row["fused score (RRF)"], row["cosine (edge weight)"] = round(s.fused_score or 0.0, 5), row.pop("score")
        columns = ["rank", "chunk", "fused score (RRF)", "cosine (edge weight)", "triplets"]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, width="stretch")
    st.markdown("**Seed entities** (the first frontier)")
    st.code(", ".join(tr.seed_entities) or "(none)", language=None, wrap_lines=True)
    if tr.note:
        st.warning(tr.note)


def _hop(h, names: dict[str, str]) -> None:
    st.markdown(f"**Hop {h.hop}**: expanded from {plural(len(h.frontier), 'entity', 'entities')}, reached "
                f"{len(h.entities_reached)} new, followed {plural(len(h.triplet_ids), 'triplet')}")
    c1, c2 = st.columns(2)
    c1.markdown("Frontier")
    c1.code(", ".join(h.frontier) or "(none)", language=None, wrap_lines=True)
    c2.markdown("Entities reached")
    c2.code(", ".join(h.entities_reached) or "(none)", language=None, wrap_lines=True)
    st.markdown("**Chunks added**")
    st.dataframe(pd.DataFrame([{"chunk": names.get(c.chunk_id, c.chunk_id), "score": round(c.score, 4)}
                               for c in h.chunks_added], columns=["chunk", "score"]), hide_index=True, width="stretch")
    if h.entity_caps or h.cut_by_total_cap:
        st.markdown("**Cut by the caps**")
        for c in h.entity_caps:
            st.caption(f"hub entity {c.entity}: kept {c.kept} of {plural(c.degree, 'edge')} "
                       f"({plural(len(c.cut_triplet_ids) + c.unread, 'triplet')} not followed"
                       + (f", {c.unread} of them never read: the read cap" if c.unread else "") + ")")
        if h.cut_by_total_cap:
            st.caption("over the expansion cap: " + ", ".join(names.get(c.chunk_id, c.chunk_id)
                                                              for c in h.cut_by_total_cap))


def _graph(tr, names: dict[str, str], corpus) -> None:
    st.markdown(f"**Weighted graph**: {plural(len(tr.nodes), 'entity', 'entities')}, {plural(len(tr.edges), 'edge')}, "
                f"{plural(len(tr.trees), 'component')}, each drawn in its own region. Solid: maximum-spanning-tree "
                "edges numbered in walk order (thicker = heavier); dashed: pruned. Pale trees were not selected. "
                "Click a node or an edge for its triplet and source chunk.")
    nodes, edges, legend = weighted_graph(tr, corpus)
    show_graph(nodes, edges, height=600, legend=legend)  # the step's picture: room for a forest's labels
    tnames = tree_names(tr)
    for t in tr.trees:  # rank order
        with sticky_expander(f"{tnames[t.tree_id]}{' (selected)' if t.selected else ''}: "
                             f"{plural(len(t.kept_edges), 'edge')} in walk order, {len(t.pruned_edges)} pruned, "
                             f"{plural(len(t.chunk_ids), 'chunk')}",
                             content_key("kgtree", t.tree_id, [e.line for e in t.kept_edges], t.chunk_ids)):
            st.dataframe(pd.DataFrame([{"walk": i, "triplet": e.line, "chunk": names.get(e.chunk_id, e.chunk_id),
                                        "weight": round(e.weight, 4)} for i, e in enumerate(t.kept_edges, 1)],
                                      columns=["walk", "triplet", "chunk", "weight"]),
                         hide_index=True, width="stretch")
            if t.pruned_edges:
                st.dataframe(pd.DataFrame([{"pruned": p.edge.line, "reason": p.reason,
                                            "chunk": names.get(p.edge.chunk_id, p.edge.chunk_id),
                                            "weight": round(p.edge.weight, 4)} for p in t.pruned_edges]),
                             hide_index=True, width="stretch")


def _ranking(tr) -> None:
    st.markdown(f"**Ranker:** {tr.ranker or '-'}")
    tnames = tree_names(tr)
    st.dataframe(pd.DataFrame([{"rank": i, "tree": tnames[t.tree_id],
                                "score": None if t.rank_score is None else round(t.rank_score, 4),
                                "selected": "✓" if t.selected else "", "chunks": len(t.chunk_ids),
                                "note": t.note, "triplet form": t.triplet_form}
                               for i, t in enumerate(tr.trees, 1)],
                              columns=["rank", "tree", "score", "selected", "chunks", "note", "triplet form"]),
                 hide_index=True, width="stretch")


def _context(tr, names: dict[str, str]) -> None:
    listed = ", ".join(names.get(c, c) for c in tr.tree_chunk_ids) or "none"
    st.markdown(f"**Chunks from selected trees** ({len(tr.tree_chunk_ids)}): {listed}")
    if tr.fill_chunk_ids:
        st.markdown("**Seed chunks added as fill** (trees gave fewer than k/2): "
                    + ", ".join(names.get(c, c) for c in tr.fill_chunk_ids))
    st.markdown("**Context exactly as sent**")
    st.code(tr.context or "(empty)", language=None, wrap_lines=True)


def trace_chunk_ids(tr) -> list[str]:
    ids = [s.chunk_id for s in tr.seeds] + [c.chunk_id for h in tr.hops for c in h.chunks_added + h.cut_by_total_cap]
    return ids + [e.chunk_id for e in tr.edges] + list(tr.tree_chunk_ids) + list(tr.fill_chunk_ids)


def show_kg2rag_step(result, pos: int, corpus=None, gold: list[str] | None = None) -> None:
    """Draw step `pos` of the KG2RAG trace (the stepper lives with the caller)."""
    tr = result.trace
    labels = step_labels(tr)
    pos = max(0, min(pos, len(labels) - 1))
    name = labels[pos]
    names = chunk_names(corpus, trace_chunk_ids(tr))
    if pos == 0:
        _seeds(tr, names)
    elif name.startswith("Hop "):
        _hop(tr.hops[pos - 1], names)
    elif name == "Weighted graph":
        _graph(tr, names, corpus)
    elif name == "Tree ranking":
        _ranking(tr)
    elif name == "Selected context":
        _context(tr, names)
    else:
        show_answer_box(result, gold)
        show_call(tr.call, label="answer")
        if tr.timings:
            st.caption("Seconds per step: " + ", ".join(f"{k} {v:.3f}" for k, v in tr.timings.items()))


def show_kg2rag(result, state_key: str = "kg_step", corpus=None, gold: list[str] | None = None) -> None:
    tr = result.trace
    if tr is None:
        show_answer_box(result, gold)
        return
    pos = stepper(state_key, step_labels(tr))
    show_kg2rag_step(result, pos, corpus, gold)
