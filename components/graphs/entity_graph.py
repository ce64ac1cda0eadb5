"""The Corpora page's entity graph: which entities a bounded view shows (the search's matches and
their neighbours, up to a cap), each triplet as an edge named by its source chunk, and the legend."""

from __future__ import annotations

from components.graphs.graph import DEFAULT_NODE_CAP, GEdge, GNode, LegendItem


def entity_subgraph(graph, search: str = "", cap: int = DEFAULT_NODE_CAP) -> tuple[list[GNode], list[GEdge], int]:
    """Nodes and edges of the corpus entity graph to draw, and how many nodes matched in all.

    With a search string: the matching entities and their neighbours, matches first. Without:
    the best-connected entities. Either way at most `cap` nodes, so a big corpus stays drawable.
    """
    query = (search or "").strip().lower()
    if query:
        hits = [
            n for n, a in graph.nodes(data=True) if query in str(n).lower() or query in str(a.get("label", "")).lower()
        ]
        hits.sort(key=lambda n: -graph.degree(n))
        chosen: list = list(hits[:cap])
        seen = set(chosen)
        for h in hits:
            for nb in sorted(graph.neighbors(h), key=lambda n: -graph.degree(n)):
                if len(chosen) >= cap:
                    break
                if nb not in seen:
                    seen.add(nb)
                    chosen.append(nb)
        matched = len(hits)
        highlight = set(hits)
    else:
        # hubs with their neighbourhoods, so the view shows connected clusters, not loose dots
        chosen, seen = [], set()
        for hub in sorted(graph.nodes, key=lambda n: -graph.degree(n)):
            if len(chosen) >= cap:
                break
            for n in [hub] + sorted(graph.neighbors(hub), key=lambda n: -graph.degree(n)):
                if len(chosen) >= cap:
                    break
                if n not in seen:
                    seen.add(n)
                    chosen.append(n)
        matched = graph.number_of_nodes()
        highlight = set()
    keep = set(chosen)
    nodes = [
        GNode(
            id=str(n),
            label=str(graph.nodes[n].get("label", n)),
            title=f"{graph.nodes[n].get('label', n)} ({graph.degree(n)} triplets)",
            color="#f4a261" if n in highlight else "#97c2fc",
            size=18 if n in highlight else 12,
        )
        for n in chosen
    ]
    edges: list[GEdge] = []
    seen_pairs: set = set()
    for u, v, a in graph.edges(data=True):
        if u in keep and v in keep:
            pair = (u, v, a.get("predicate", ""))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
            title = f"{a.get('subject', u)} {a.get('predicate', '')} {a.get('object', v)}"
            edges.append(
                GEdge(
                    str(u),
                    str(v),
                    label=str(a.get("predicate", "")),
                    title=title,
                    detail=title + "\nSource chunks: " + ", ".join(a.get("chunk_ids", ()) or ()),
                )
            )
    return nodes, edges, matched


def name_edge_sources(edges: list[GEdge], corpus) -> list[GEdge]:
    """The same edges with each "Source chunks:" line naming chunks by title and number and
    followed by the first source chunk's text (what a click on the edge shows)."""
    from dataclasses import replace

    from components.chunk_names import chunk_texts

    ids = [c for e in edges for c in e.detail.partition("\nSource chunks: ")[2].split(", ") if c]
    texts = chunk_texts(corpus, ids)
    out = []
    for e in edges:
        head, _, srcs = e.detail.partition("\nSource chunks: ")
        cids = [c for c in srcs.split(", ") if c]
        if not cids:
            out.append(e)
            continue
        names = ", ".join(texts.get(c, (c, ""))[0] for c in cids)
        first = texts.get(cids[0], ("", ""))[1]
        out.append(replace(e, detail=f"{head}\nSource: {names}" + (f"\n{first}" if first else "")))
    return out


#: What the corpus entity graph's colours mean.
ENTITY_LEGEND = [
    LegendItem("entity", "#97c2fc"),
    LegendItem("matches the search", "#f4a261"),
    LegendItem("triplet (subject → object, labelled by predicate)", "#888888", "line"),
]
