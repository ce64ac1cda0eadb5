"""Positions for a graph drawing: each connected component laid out on its own, then the
components packed row by row, biggest first, with a gap between them.

Why not vis-network's physics: its forces pull separate components into one blob, so two trees
that share no entity look connected, and the result changes on every redraw. A fixed layout
computed here is the same each time, keeps components apart, and lets the page fit it at once.

Labels take room: every node is a box (its dot and its label under it) and every labelled edge a
box at its midpoint (where both drawings put the edge's label). After the component's own layout,
a few rounds push overlapping boxes apart, and the components are packed by their boxes' true
extent, so no label covers another label, a node or an edge label at the font the caller gave.
"""

from __future__ import annotations

import math

import numpy as np

#: A character's width in em, a little over the 0.55 of a sans-serif average, and the room kept
#: between two boxes (canvas units).
CHAR_EM = 0.6
PAD = 6.0
#: Most leaves of one node in a single row of a tree drawing; more go in staggered rows.
MAX_FAN = 6
#: A component's first layout gets this many times the area of its boxes.
SPREAD = 3.0


def text_width(text: str, font: float) -> float:
    """Canvas width of a one-line label at `font` (canvas units)."""
    return CHAR_EM * font * len(text)


def node_box_height(font: float) -> float:
    """Height under a dot that its label takes: vis-network hangs it at size + font / 2 + 4; the
    export's baseline sits at size + font (plus the descent)."""
    return 1.5 * font + 6.0


def edge_box_height(font: float) -> float:
    """An edge label's box, centred on the midpoint: vis centres it there, the export puts its
    baseline 4 above."""
    return 2 * (4.0 + 0.85 * font) + 2.0


def _raw_positions(
    g, comp: list[str], side: float, nb: dict, eb: dict, max_fan: int = MAX_FAN
) -> dict[str, tuple[float, float]]:
    import networkx as nx

    if len(comp) == 1:
        return {comp[0]: (0.0, 0.0)}
    if len(comp) == 2:
        a, b = comp
        (wa, ra, ha), (wb, rb, _) = nb[a], nb[b]
        ew, eh = eb.get(frozenset(comp), (0.0, 0.0))
        # side by side when the labels leave room for the edge's label between the two boxes,
        # else one above the other with the edge's label between a's label and b's dot
        dx = max(side, ew + max(wa / 2, ra) + max(wb / 2, rb) + 3 * PAD)
        if dx <= 1.6 * side:
            return {a: (-dx / 2, 0.0), b: (dx / 2, 0.0)}
        dy = 2 * (ra + ha + PAD) + eh + 2 * PAD
        return {a: (0.0, -dy / 2), b: (0.0, dy / 2)}
    sub = g.subgraph(comp)
    if sub.number_of_edges() <= len(comp) + 2:  # a tree, or nearly
        return _tidy_tree(sub, nb, eb, max_fan)
    raw = nx.kamada_kawai_layout(sub) if len(comp) <= 60 else nx.spring_layout(sub, seed=7)
    # room for the labels from the start: the component's area a few times its boxes' area, wider
    # than high as the labels are (pushing boxes apart later is slow to spread a crowd)
    widths = [max(nb[n][0], 2 * nb[n][1]) + PAD for n in comp] + [
        w + PAD for (w, _) in (eb.get(frozenset(e), (0.0, 0.0)) for e in sub.edges)
    ]
    heights = [2 * nb[n][1] + nb[n][2] + PAD for n in comp] + [
        h + PAD for (_, h) in (eb.get(frozenset(e), (0.0, 0.0)) for e in sub.edges)
    ]
    area = SPREAD * sum(w * h for w, h in zip(widths, heights))
    stretch = math.sqrt(max(1.0, sum(widths) / max(sum(heights), 1.0)) ** 0.5)
    if area > 0:  # sized by its labels (the separation below makes room where needed)
        side = min(side, math.sqrt(area))
    sx, sy = side * stretch / 2, side / stretch / 2
    return {n: (float(x) * sx, float(y) * sy) for n, (x, y) in raw.items()}


def _tidy_tree(sub, nb: dict, eb: dict, max_fan: int = MAX_FAN) -> dict[str, tuple[float, float]]:
    """A tree drawn top-down from its centre (a BFS tree for a graph with a few cycles): each
    subtree as wide as its labels need, parents centred over their children, one level per
    depth with room for the edge labels between two levels."""
    adj = {n: sorted(sub[n], key=lambda c: (-sub.degree(c), c)) for n in sorted(sub)}

    def bfs(start: str) -> dict[str, str | None]:
        parent: dict[str, str | None] = {start: None}
        queue = [start]
        for n in queue:
            for c in adj[n]:
                if c not in parent:
                    parent[c] = n
                    queue.append(c)
        return parent

    # the root: the middle of a longest path (a tree's centre), so the drawing is as low as it can be
    far = list(bfs(next(iter(adj))))[-1]
    parent = bfs(far)
    path = [list(parent)[-1]]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])
    mid = path[(len(path) - 1) // 2 : len(path) // 2 + 1]
    root = min(mid, key=lambda n: (-len(adj[n]), n))
    children: dict[str, list[str]] = {n: [] for n in adj}
    depth = {root: 0}
    queue = [root]
    for n in queue:  # breadth first, neighbours in a fixed order: the biggest hubs first
        for c in adj[n]:
            if c not in depth:
                depth[c] = depth[n] + 1
                children[n].append(c)
                queue.append(c)
    own = {n: max(nb[n][0], 2 * nb[n][1]) + 2 * PAD for n in adj}
    node_h = max(2 * nb[n][1] + nb[n][2] for n in adj)
    edge_h = max((h for _, h in eb.values()), default=0.0)
    level = node_h + edge_h + 4 * PAD
    # a hub's leaves past max_fan go in staggered rows (a brick pattern, so each edge passes
    # between the leaves above): a star is then about as wide as high, not one long row
    block: dict[str, tuple[list[str], int, float]] = {}  # node -> (its leaves in the block, columns, slot)
    width: dict[str, float] = {}
    for n in reversed(queue):
        kids = children[n]
        leaves = [c for c in kids if not children[c]]
        if len(leaves) > max_fan:
            rows = math.ceil(math.sqrt(len(leaves) / max_fan * 2))
            cols = math.ceil(len(leaves) / rows)
            slot = max(own[c] for c in leaves)
            block[n] = (leaves, cols, slot)
            inner = sum(width[c] for c in kids if c not in leaves) + (cols + 0.5) * slot
        else:
            inner = sum(width[c] for c in kids)
        width[n] = max(own[n], inner)
    pos: dict[str, tuple[float, float]] = {}
    left = {root: -width[root] / 2}
    top = {root: 0.0}
    for n in queue:
        pos[n] = (left[n] + width[n] / 2, top[n])
        leaves, cols, slot = block.get(n, ([], 0, 0.0))
        kids = [c for c in children[n] if c not in leaves]
        inner = sum(width[c] for c in kids) + ((cols + 0.5) * slot if leaves else 0.0)
        x = left[n] + (width[n] - inner) / 2
        half_k = len(kids) // 2  # the block in the middle, under its hub
        for c in kids[:half_k]:
            left[c], top[c] = x, top[n] + level
            x += width[c]
        for i, c in enumerate(leaves):
            row, col = divmod(i, cols)
            left[c] = x + (col + 0.5 * (row % 2)) * slot
            top[c] = top[n] + level + row * (node_h + 2 * PAD)
            width[c] = slot
        x += (cols + 0.5) * slot if leaves else 0.0
        for c in kids[half_k:]:
            left[c], top[c] = x, top[n] + level
            x += width[c]
    return pos


def _separate(
    ids: list[str],
    pos: np.ndarray,
    comp_of: np.ndarray,
    nb: dict,
    edges: list[tuple[int, int]],
    ew: np.ndarray,
    eh: np.ndarray,
    rounds: int = 400,
) -> np.ndarray:
    """Push overlapping boxes apart (only within a component): node boxes move their node, an edge
    label's box moves both ends, and an edge label on one of its own ends' boxes moves the other end
    away. Deterministic; stops when nothing overlaps."""
    n, m = len(ids), len(edges)
    nw = np.array([max(nb[i][0] / 2, nb[i][1]) for i in ids])
    top = np.array([-nb[i][1] for i in ids])
    bottom = np.array([nb[i][1] + nb[i][2] for i in ids])
    half = np.concatenate([np.stack([nw, (bottom - top) / 2], 1), np.stack([ew / 2, eh / 2], 1)]) + PAD / 2
    offset = np.concatenate([(top + bottom) / 2, np.zeros(m)])
    eu = np.array([u for u, _ in edges], dtype=int)
    ev = np.array([v for _, v in edges], dtype=int)
    bcomp = np.concatenate([comp_of, comp_of[eu]]) if m else comp_of
    same = (bcomp[:, None] == bcomp[None, :]) & ~np.eye(n + m, dtype=bool)
    # an edge box and the node box of one of its ends: handled below, not by a rigid push
    if m:
        same[eu, n + np.arange(m)] = same[n + np.arange(m), eu] = False
        same[ev, n + np.arange(m)] = same[n + np.arange(m), ev] = False
    upper = np.triu(same, 1)
    slack = 2 * float(half.mean()) if n + m else 0.0
    pairs_a = pairs_b = np.zeros(0, dtype=int)
    stuck, refresh = 0, True
    for it in range(rounds):
        c = np.concatenate([pos, (pos[eu] + pos[ev]) / 2]) if m else pos.copy()
        c[:, 1] += offset
        fresh = refresh or it % 16 == 0
        if fresh:  # the pairs close enough to meet within the next rounds (all pairs: B x B)
            refresh = False
            reach = half[:, None, :] + half[None, :, :] + slack
            near = upper & np.all(np.abs(c[None, :, :] - c[:, None, :]) < reach, -1)
            pairs_a, pairs_b = np.nonzero(near)
        move = np.zeros((n, 2))
        d = c[pairs_b] - c[pairs_a]
        o = half[pairs_a] + half[pairs_b] - np.abs(d)
        hit = (o[:, 0] > 0) & (o[:, 1] > 0)
        any_hit = bool(hit.any())
        if any_hit:
            a, b, d, o = pairs_a[hit], pairs_b[hit], d[hit], o[hit]
            xaxis = o[:, 0] < o[:, 1]
            sign = np.where(d >= 0, 1.0, -1.0)  # a tie (same centre) goes by index: b after a
            push = np.stack([np.where(xaxis, o[:, 0], 0.0), np.where(xaxis, 0.0, o[:, 1])], 1) * sign / 2
            box_move = np.zeros((n + m, 2))
            np.add.at(box_move, b, push)
            np.add.at(box_move, a, -push)
            move += box_move[:n]
            if m:
                np.add.at(move, eu, box_move[n:])
                np.add.at(move, ev, box_move[n:])
        own = 0
        for ends, other in ((eu, ev), (ev, eu)) if m else ():
            dd = c[n:] - c[ends]
            oo = half[n:] + half[ends] - np.abs(dd)
            h = (oo[:, 0] > 0) & (oo[:, 1] > 0)
            if h.any():
                own += int(h.sum())
                away = pos[other] - pos[ends]
                norm = np.hypot(away[:, 0], away[:, 1])
                away = np.where(norm[:, None] > 0, away / np.maximum(norm, 1e-9)[:, None], [[0.0, 1.0]])
                step = np.minimum(oo[:, 0], oo[:, 1])[:, None] * away * h[:, None]
                np.add.at(move, other, step)
                np.add.at(move, ends, -step / 2)
        if not any_hit and not own:
            if fresh:
                break
            refresh = True  # check all pairs again before stopping
            continue
        pos = pos + 0.6 * move
        stuck += 1
        if stuck % 60 == 0:  # slow to settle: give the crowded components more room
            pos = pos * 1.15
    return pos


def _shelves(cells: list[tuple[float, float]], order: list[int], row_width: float):
    """Cells placed left to right in `order`, a new row when one would pass `row_width`; each
    row's cells centred in its height. Their origins (by cell) and the packing's size."""
    rows: list[list[int]] = [[]]
    x = 0.0
    for c in order:
        if rows[-1] and x + cells[c][0] > row_width:
            rows.append([])
            x = 0.0
        rows[-1].append(c)
        x += cells[c][0]
    origin: list[tuple[float, float]] = [(0.0, 0.0)] * len(cells)
    y = width = 0.0
    for row in rows:
        h = max((cells[c][1] for c in row), default=0.0)
        x = 0.0
        for c in row:
            origin[c] = (x, y + (h - cells[c][1]) / 2)
            x += cells[c][0]
        width, y = max(width, x), y + h
    return origin, (width, y)


def component_layout(
    node_ids: list[str],
    pairs: list[tuple[str, str]],
    *,
    unit: float = 170.0,
    gap: float = 0.3,
    max_row: float | None = None,
    label_width: dict[str, float] | None = None,
    aspect: float = 1.0,
    label_height: float = node_box_height(15),
    node_size: dict[str, float] | None = None,
    edge_label_width: dict[tuple[str, str], float] | None = None,
    edge_label_height: float = edge_box_height(13),
    row_cap: float | None = None,
    margin: float | None = None,
    max_fan: int = MAX_FAN,
) -> dict[str, tuple[float, float]]:
    """`node_id -> (x, y)` in vis-network canvas units (y grows downwards).

    `label_width` (canvas units per node) and `label_height` size the label under each node (of
    radius `node_size`, 14 by default); `edge_label_width` the label on an edge's midpoint. A
    component of n nodes starts in a box of side about `unit * sqrt(n)`, its boxes are pushed
    apart, and the components are placed left to right by their true extent (plus `gap` of a
    unit between them, or `margin` canvas units), wrapping at `max_row` (by default so that the
    whole drawing has about the width / height ratio `aspect` of the canvas it will be fitted to,
    and at most `row_cap`). A tree's hub with more than `max_fan` leaves puts them in staggered rows.
    """
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(node_ids)
    g.add_edges_from((u, v) for u, v in pairs if u in g and v in g and u != v)
    comps = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    widths, sizes = label_width or {}, node_size or {}
    nb = {
        n: (widths.get(n, 0.0), float(sizes.get(n, 14.0)), label_height if widths.get(n, 0.0) > 0 else 0.0)
        for n in g.nodes
    }
    eb: dict[frozenset, tuple[float, float]] = {}
    for (u, v), w in (edge_label_width or {}).items():
        if u in g and v in g and u != v and w > 0:
            k = frozenset((u, v))
            eb[k] = (max(w, eb.get(k, (0.0, 0.0))[0]), edge_label_height)
    ids: list[str] = []
    comp_idx: list[int] = []
    raw: list[tuple[float, float]] = []
    for ci, comp in enumerate(comps):
        side = unit * max(1.0, math.sqrt(len(comp)) * 1.4)
        p = _raw_positions(g, comp, side, nb, eb, max_fan)
        for nid in comp:
            ids.append(nid)
            comp_idx.append(ci)
            raw.append(p[nid])
    index = {nid: i for i, nid in enumerate(ids)}
    keys = sorted(eb, key=lambda k: sorted(k))
    edges = [tuple(sorted(index[x] for x in k)) for k in keys]
    ew = np.array([eb[k][0] for k in keys])
    eh = np.array([eb[k][1] for k in keys])
    pos = (
        _separate(ids, np.array(raw, dtype=float).reshape(-1, 2), np.array(comp_idx), nb, edges, ew, eh)
        if ids
        else np.zeros((0, 2))
    )

    # each component's true extent: its nodes' boxes and its edge labels' boxes
    ext = np.full((len(comps), 4), [np.inf, np.inf, -np.inf, -np.inf])
    for i, nid in enumerate(ids):
        w, r, h = nb[nid]
        x, y = pos[i]
        hw = max(w / 2, r)
        e = ext[comp_idx[i]]
        ext[comp_idx[i]] = [min(e[0], x - hw), min(e[1], y - r), max(e[2], x + hw), max(e[3], y + r + h)]
    for (a, b), w, h in zip(edges, ew, eh):
        x, y = (pos[a] + pos[b]) / 2
        e = ext[comp_idx[a]]
        ext[comp_idx[a]] = [min(e[0], x - w / 2), min(e[1], y - h / 2), max(e[2], x + w / 2), max(e[3], y + h / 2)]
    margin = max(unit * gap, 1.5 * label_height) if margin is None else margin
    cells = [(e[2] - e[0] + margin, e[3] - e[1] + margin) for e in ext]
    widest = max((w for w, _ in cells), default=unit)
    if max_row:
        widths = [max(widest, min(max_row, row_cap or max_row))]
    else:  # the row width whose packing best fills a canvas of ratio `aspect`
        total = sum(w for w, _ in cells)
        widths = sorted(
            {max(widest, min(total, widest * (total / widest) ** (k / 15), row_cap or math.inf)) for k in range(16)}
        )
    order = sorted(range(len(cells)), key=lambda c: (-round(cells[c][1], 3), c))  # tallest first
    best = None
    for row_width in widths:
        origin, size = _shelves(cells, order, row_width)
        score = max(size[0] / aspect, size[1])
        if best is None or score < best[0] - 1e-6:
            best = (score, origin)
    origin = best[1] if best else []
    out: dict[str, tuple[float, float]] = {}
    for i, nid in enumerate(ids):
        ci = comp_idx[i]
        ox, oy = origin[ci]
        e = ext[ci]
        out[nid] = (
            round(float(ox + margin / 2 + pos[i][0] - e[0]), 1),
            round(float(oy + margin / 2 + pos[i][1] - e[1]), 1),
        )
    return out


def drawing_extent(
    pos: dict[str, tuple[float, float]],
    label_width: dict[str, float],
    label_height: float,
    node_size: dict[str, float] | None = None,
    **_,
) -> tuple[float, float]:
    """Width and height the drawing takes with its nodes' labels (what a fit to the frame sees)."""
    if not pos:
        return 0.0, 0.0
    sizes = node_size or {}
    x0 = min(x - max(label_width.get(n, 0.0) / 2, sizes.get(n, 14.0)) for n, (x, _) in pos.items())
    x1 = max(x + max(label_width.get(n, 0.0) / 2, sizes.get(n, 14.0)) for n, (x, _) in pos.items())
    y0 = min(y - sizes.get(n, 14.0) for n, (_, y) in pos.items())
    y1 = max(y + sizes.get(n, 14.0) + label_height for n, (_, y) in pos.items())
    return x1 - x0, y1 - y0
