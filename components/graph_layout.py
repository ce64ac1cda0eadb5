"""Positions for a graph drawing: each connected component laid out on its own, then the
components packed row by row, biggest first, with a gap between them.

Why not vis-network's physics: its forces pull separate components into one blob, so two trees
that share no entity look connected, and the result changes on every redraw. A fixed layout
computed here is the same each time, keeps components apart, and lets the page fit it at once.
"""
from __future__ import annotations

import math


def component_layout(node_ids: list[str], pairs: list[tuple[str, str]], *, unit: float = 170.0,
                     gap: float = 0.3, max_row: float | None = None,
                     label_width: dict[str, float] | None = None, aspect: float = 1.0) -> dict[str, tuple[float, float]]:
    """`node_id -> (x, y)` in vis-network canvas units (y grows downwards).

    `label_width` (canvas units per node) widens a component's cell by its longest label, so
    labels at the edge of one component do not run into the next. A component of n nodes gets a square box of side about `unit * sqrt(n)`; boxes are placed left
    to right and wrap at `max_row` (by default so that the whole drawing has about the width /
    height ratio `aspect` of the canvas it will be fitted to).
    """
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(node_ids)
    g.add_edges_from((u, v) for u, v in pairs if u in g and v in g and u != v)
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    boxes: list[tuple[list[str], dict[str, tuple[float, float]], float]] = []
    for comp in comps:
        side = unit * max(1.0, math.sqrt(len(comp)) * 1.4)
        if len(comp) == 1:
            pos = {comp[0]: (0.0, 0.0)}
        elif len(comp) == 2:
            pos = {comp[0]: (-side / 2, 0.0), comp[1]: (side / 2, 0.0)}
        else:
            sub = g.subgraph(comp)
            raw = nx.kamada_kawai_layout(sub) if len(comp) <= 60 else nx.spring_layout(sub, seed=7)
            pos = {n: (float(x) * side / 2, float(y) * side / 2) for n, (x, y) in raw.items()}
        boxes.append((comp, pos, side if len(comp) > 1 else unit))
    widths = label_width or {}
    cells = [side * (1 + gap) + max((widths.get(n, 0.0) for n in comp), default=0.0) for comp, _, side in boxes]
    total = sum(c * c for c in cells)
    row_width = max_row or max(max(cells, default=unit), math.sqrt(total * aspect))
    out: dict[str, tuple[float, float]] = {}
    x = y = row_h = 0.0
    for (comp, pos, side), cell in zip(boxes, cells):
        if x > 0 and x + cell > row_width:
            x, y, row_h = 0.0, y + row_h, 0.0
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
        for n, (px, py) in pos.items():
            out[n] = (round(x + cell / 2 + px - cx, 1), round(y + cell / 2 + py - cy, 1))
        x += cell
        row_h = max(row_h, cell)
    return out
