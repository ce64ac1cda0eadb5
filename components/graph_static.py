"""A graph as plain data with fixed positions: what presentation mode redraws interactively and
the HTML export draws as a static SVG (components.export), with the same layout as the app.

Only data crosses here (strings, numbers); the export's script builds the SVG with
createElementNS and textContent, so a label is text there as well.
"""
from __future__ import annotations

from dataclasses import asdict


def graph_payload(nodes, edges, legend=None, *, directed: bool = False) -> dict | None:
    """`{"nodes", "edges", "legend", "directed"}` with x / y on every node, or None if empty."""
    from components.graph import short_label
    from components.graph_layout import component_layout

    if not nodes:
        return None
    ids = {n.id for n in nodes}
    kept = [e for e in edges if e.source in ids and e.target in ids]
    pos = component_layout([n.id for n in nodes], [(e.source, e.target) for e in kept],
                           label_width={n.id: 7.5 * len(short_label(n.label)) for n in nodes}, aspect=1.8)
    return {"nodes": [{**asdict(n), "short": short_label(n.label), "x": pos[n.id][0], "y": pos[n.id][1]}
                      for n in nodes],
            "edges": [{**asdict(e), "short": short_label(e.label)} for e in kept],
            "legend": [asdict(x) for x in (legend or [])], "directed": directed}


def from_payload(payload: dict):
    """Back to (nodes, edges, legend) for components.graph.show_graph."""
    from components.graph import GEdge, GNode, LegendItem

    keys_n = set(GNode.__dataclass_fields__)
    keys_e = set(GEdge.__dataclass_fields__)
    return ([GNode(**{k: v for k, v in n.items() if k in keys_n}) for n in payload["nodes"]],
            [GEdge(**{k: v for k, v in e.items() if k in keys_e}) for e in payload["edges"]],
            [LegendItem(**x) for x in payload.get("legend", [])])
