"""KG2RAG's weighted graph as drawn (components/methods/kg2rag.py): spanning-tree edges solid in
their tree's colour and numbered in walk order, pruned edges dashed, seed entities ringed."""

from __future__ import annotations

from components.chunk_names import chunk_texts
from components.graphs.graph import GEdge, GNode, LegendItem
from components.graphs.palette import distinct_colors, tint

PRUNED_COLORS = {"parallel": "#6e6e6e", "cycle": "#a0526d", "self-loop": "#7d6f1e"}  # dark enough on white
#: how far an unselected tree is mixed with white: visibly "not chosen", still a readable line
UNSELECTED_TINT = 0.4
PRUNED_WHY = {
    "parallel": "a heavier edge joins the same entities",
    "cycle": "it would close a cycle",
    "self-loop": "subject and object are the same entity",
}


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
            edges.append(
                GEdge(
                    e.u,
                    e.v,
                    label=f"{i}. {e.predicate}",
                    title=f"{head}: {e.line}",
                    color=color,
                    width=width(e.weight),
                    detail=_edge_detail(e, head, chunks),
                )
            )
        for p in t.pruned_edges:
            e = p.edge
            reasons.add(p.reason)
            head = f"Pruned from {names[t.tree_id]}: {p.reason} ({PRUNED_WHY.get(p.reason, '')}), weight {e.weight:.3f}"
            edges.append(
                GEdge(
                    e.u,
                    e.v,
                    dashed=True,
                    color=PRUNED_COLORS.get(p.reason, "#6e6e6e"),
                    width=2,
                    title=f"{head}: {e.line}",
                    detail=_edge_detail(e, head, chunks),
                )
            )
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
        nodes.append(
            GNode(
                n,
                label,
                title=title,
                color=color,
                size=18 if kind == "seed entity" else 13,
                border="#111111" if kind == "seed entity" else "",
                detail=detail,
            )
        )
    legend = [LegendItem("seed entity", "#111111", "ring"), LegendItem("reached by expansion", "#9aa5b1")]
    legend += [
        LegendItem(
            f"{names[t.tree_id]}{' ✓ selected' if t.selected else ''}",
            colors[t.tree_id] if t.selected else tint(colors[t.tree_id], UNSELECTED_TINT),
            "line",
        )
        for t in trace.trees
        if t.kept_edges
    ]
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
