"""A graph as plain data with fixed positions: what presentation mode redraws interactively and
the HTML export draws as a static SVG (components.report.export), with the same layout as the app.

Only data crosses here (strings, numbers); the export's script builds the SVG with
createElementNS and textContent, so a label is text there as well.
"""

from __future__ import annotations

from dataclasses import asdict


def graph_payload(nodes, edges, legend=None, *, directed: bool = False) -> dict | None:
    """`{"nodes", "edges", "legend", "directed", "font"}` with x / y on every node, or None if empty.

    `font` is the label size (drawing units) the layout leaves room for, and the export draws
    with: big enough to read at about 12 px when the drawing is shown 1070 px wide (the export's
    column), so it is found with the layout (a wider drawing needs a bigger font, which needs more
    room): a few rounds, each packing rows at most ~80 fonts wide.
    """
    from components.graphs.graph import label_boxes, short_label
    from components.graphs.layout import component_layout, drawing_extent

    if not nodes:
        return None
    ids = {n.id for n in nodes}
    kept = [e for e in edges if e.source in ids and e.target in ids]
    pairs = [(e.source, e.target) for e in kept]
    font = 15.0
    for attempt in range(4):
        boxes = label_boxes(nodes, kept, font)
        pos = component_layout([n.id for n in nodes], pairs, aspect=1.8, row_cap=80 * font, **boxes)
        need = max(14.0, (drawing_extent(pos, **boxes)[0] + 2 * font) / 89)  # the export frames the labels
        if need <= font or attempt == 3:
            break
        font = round(need * 1.1, 1)
    return {
        "nodes": [{**asdict(n), "short": short_label(n.label), "x": pos[n.id][0], "y": pos[n.id][1]} for n in nodes],
        "edges": [{**asdict(e), "short": short_label(e.label)} for e in kept],
        "legend": [asdict(x) for x in (legend or [])],
        "directed": directed,
        "font": font,
    }


def from_payload(payload: dict):
    """Back to (nodes, edges, legend) for components.graphs.graph.show_graph."""
    from components.graphs.graph import GEdge, GNode, LegendItem

    keys_n = set(GNode.__dataclass_fields__)
    keys_e = set(GEdge.__dataclass_fields__)
    return (
        [GNode(**{k: v for k, v in n.items() if k in keys_n}) for n in payload["nodes"]],
        [GEdge(**{k: v for k, v in e.items() if k in keys_e}) for e in payload["edges"]],
        [LegendItem(**x) for x in payload.get("legend", [])],
    )
