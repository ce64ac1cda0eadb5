"""Interactive graphs with pyvis (vis-network), embedded offline and with every label escaped.

pyvis builds the node and edge lists; we render them with our own small page instead of pyvis's
template because that template pulls Bootstrap from a CDN (the app must work offline, and a failed
request is a console error) and, when a title mentions `href`, writes titles with innerHTML.
vis-network's own JS and CSS are inlined from the pyvis package. The data goes in as JSON with
`<`, `>` and `&` escaped, so no entity name can close the script element; labels are plain text
(vis-network draws them on canvas). The page runs in a `sandbox="allow-scripts"` frame under a
hash-based CSP (components.shell.safe.sandboxed): a slip could not reach the app's origin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import streamlit as st

from components.graphs.layout import MAX_FAN
from components.graphs.page import CHROME_HEIGHT, LEGEND_CSS, PAGE_SCRIPT, legend_html, vis_assets
from components.shell.safe import csp_meta, esc, json_for_script, sandboxed

#: Most nodes a corpus-level graph shows; beyond that vis-network becomes unreadable and slow.
DEFAULT_NODE_CAP = 150


@dataclass(frozen=True)
class GNode:
    id: str
    label: str
    title: str = ""
    color: str = "#97c2fc"
    size: int = 14
    detail: str = ""  # plain text shown under the graph when the node is clicked
    border: str = ""  # outline colour (e.g. seed entities); the fill stays the tree colour


@dataclass(frozen=True)
class GEdge:
    source: str
    target: str
    label: str = ""
    title: str = ""
    color: str = "#888888"
    dashed: bool = False
    width: float = 1.5
    detail: str = ""  # plain text shown under the graph when the edge is clicked: triplet + chunk


@dataclass(frozen=True)
class LegendItem:
    """One legend entry: a swatch (dot for nodes, line for edges) and what it means."""

    text: str
    color: str
    kind: str = "dot"  # dot | ring | line | dashed


LABEL_CHARS = 24  # 32 left dense forests at ~10 px on screen; 24 gains about a pixel


def short_label(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


#: Label font sizes of the interactive graph (canvas px at zoom 1); the layout leaves room for them.
NODE_FONT = 15


def edge_font(node_font: float) -> float:
    return max(11, node_font - 2)


def label_boxes(nodes: list[GNode], edges: list[GEdge], node_font: float, *, centred: bool = False) -> dict:
    """component_layout's label sizes for these nodes and edges at `node_font`; `centred`: edge
    labels centred on the midpoint (vis-network), else room for the export's too."""
    from components.graphs.layout import edge_box_height, node_box_height, text_width

    ef = edge_font(node_font)
    edge_w: dict[tuple[str, str], float] = {}
    for e in edges:  # two edges between one pair (a kept triplet and a pruned one): the widest label
        edge_w[(e.source, e.target)] = max(edge_w.get((e.source, e.target), 0.0), text_width(short_label(e.label), ef))
    return {
        "label_width": {n.id: text_width(short_label(n.label), node_font) for n in nodes},
        "label_height": node_box_height(node_font),
        "node_size": {n.id: n.size for n in nodes},
        "edge_label_width": edge_w,
        "edge_label_height": ef + 6.0 if centred else edge_box_height(ef),
    }


#: The wide canvas the layout is made for (a graph across the page at 1440 x 900, less the fit's
#: padding: its height is the drawing's less FRAME_PADDING); the smallest on-screen label size the
#: page keeps when the fit zooms out, and the most it grows the font for that (both as in PAGE_SCRIPT).
WIDE_FRAME = (1220.0, 340.0)
FRAME_PADDING = 80
#: A graph in a page's main column at 1440 x 900 with the sidebar open (~970 px), less the padding.
PAGE_FRAME_WIDTH = 920.0
MIN_LABEL_PX = 12.0
MAX_FONT_GROWTH = 7


def _wide_layout(
    nodes: list[GNode],
    kept: list[GEdge],
    frame: tuple[float, float] = WIDE_FRAME,
    margin: float | None = None,
    max_fan: int | None = None,
) -> tuple[dict, dict, float]:
    """The wide packing, with room for labels at the size they will be drawn: the page zooms out
    to fit a big drawing and then grows the font to stay readable (at least MIN_LABEL_PX on
    screen, at most MAX_FONT_GROWTH times the base), so a bigger drawing needs room for bigger
    labels. A few rounds find a font that leaves room for itself, or else the page's biggest (a
    graph too big for the frame then gets smaller labels rather than overlapping ones). The
    positions, the label boxes at the base font, the labels' size on screen (px) once fitted, and
    the font the layout left room for (the page never grows labels past it)."""
    from components.graphs.layout import component_layout, drawing_extent

    font, cap = float(NODE_FONT), float(NODE_FONT * MAX_FONT_GROWTH)
    pairs = [(e.source, e.target) for e in kept]
    need = font
    for attempt in range(3):  # at most three layouts: the base font, a guess, the page's biggest
        boxes = label_boxes(nodes, kept, font, centred=True)
        pos = component_layout(
            [n.id for n in nodes],
            pairs,
            aspect=frame[0] / frame[1],
            margin=None if margin is None else margin * boxes["label_height"],
            **({} if max_fan is None else {"max_fan": max_fan}),
            **boxes,
        )
        w, h = drawing_extent(pos, **boxes)
        need = MIN_LABEL_PX / min(frame[0] / max(w, 1.0), frame[1] / max(h, 1.0))
        if need <= font or font >= cap:
            break
        font = min(cap, round(need * 1.25, 1)) if attempt == 0 else cap
    return pos, label_boxes(nodes, kept, NODE_FONT, centred=True), MIN_LABEL_PX * min(1.0, font / need), font


#: Most leaves of a hub side by side that the wide layout tries, widest first (a star of long
#: labels across the whole frame leaves them tiny; in rows they can be read).
WIDE_FANS = (MAX_FAN, 3, 2)


def _best_wide_layout(nodes: list[GNode], kept: list[GEdge], frame: tuple[float, float]) -> tuple[dict, float]:
    """The wide packing with a hub's leaves side by side, else in rows of 3, then 2: the first
    whose labels are readable in `frame`, else the most readable. Positions and the room font."""
    best: tuple[float, dict, float] | None = None
    for fan in WIDE_FANS:
        pos, _, px, room = _wide_layout(nodes, kept, frame, None, fan)
        if best is None or px > best[0] + 0.05:
            best = (px, pos, room)
        if px >= MIN_LABEL_PX - 0.05:
            break
    assert best is not None
    return best[1], best[2]


#: The narrow canvas (a phone at 390 px, whose graph frame is ~326 px wide, less the fit's padding;
#: a Compare column at 1440 px is ~380 px wide: the page switches to it when the frame's width /
#: height < 1.6); its height is the wide one's.
NARROW_WIDTH = 270.0
#: Longest node label drawn in the narrow layout (the whole text is in the hover and the panel).
NARROW_LABEL_CHARS = 14
#: Room between two components in the narrow layout, in label heights (the wide one keeps 1.5).
NARROW_MARGIN = 0.5
#: Most leaves of a hub side by side in the narrow layout (more go in staggered rows).
NARROW_FAN = 2
_WALK_NUMBER = re.compile(r"^(\d+\.)\s")


def narrow_label(text: str) -> str:
    """A node's label in the narrow layout: cut shorter, so the drawing fits a phone's width."""
    text = " ".join(str(text).split())
    return text if len(text) <= NARROW_LABEL_CHARS else text[: NARROW_LABEL_CHARS - 1].rstrip() + "…"


def narrow_edge_label(text: str) -> str:
    """An edge's label in the narrow layout: its walk number alone ("2.") when it has one, else cut."""
    m = _WALK_NUMBER.match(" ".join(str(text).split()))
    return m.group(1) if m else narrow_label(text)


def _narrow_layout(nodes: list[GNode], kept: list[GEdge], frame_height: float) -> tuple[dict, list[str], float]:
    """The narrow packing: the wide one's method for a narrow frame, with the narrow labels and a
    hub's leaves in rows of NARROW_FAN. When that leaves the labels too small to read, again
    without edge labels (their text is in the hover and the panel), then with one leaf a row: the
    first whose labels are readable, else the most readable. The positions, each edge's narrow
    label (in `kept`'s order), and the font the layout left room for."""
    from dataclasses import replace

    short_nodes = [replace(n, label=narrow_label(n.label)) for n in nodes]
    numbers = [narrow_edge_label(e.label) for e in kept]
    tries = [(numbers, NARROW_FAN), ([""] * len(kept), NARROW_FAN), ([""] * len(kept), 1)]
    best: tuple[float, dict, list[str], float] | None = None
    for elabels, fan in tries if any(numbers) else tries[1:]:
        short_edges = [replace(e, label=t) for e, t in zip(kept, elabels)]
        pos, _, px, room = _wide_layout(short_nodes, short_edges, (NARROW_WIDTH, frame_height), NARROW_MARGIN, fan)
        if best is None or px > best[0] + 0.05:
            best = (px, pos, elabels, room)
        if px >= MIN_LABEL_PX - 0.05:
            break
    assert best is not None
    return best[1], best[2], best[3]


def _network_data(
    nodes: list[GNode],
    edges: list[GEdge],
    directed: bool,
    frame_height: float = WIDE_FRAME[1],
    frame_width: float = WIDE_FRAME[0],
) -> tuple[list, list]:
    """vis-network nodes and edges (network_data without the fonts)."""
    vnodes, vedges, _ = network_data(nodes, edges, directed, frame_height, frame_width)
    return vnodes, vedges


def network_data(
    nodes: list[GNode],
    edges: list[GEdge],
    directed: bool,
    frame_height: float = WIDE_FRAME[1],
    frame_width: float = WIDE_FRAME[0],
) -> tuple[list, list, dict]:
    """vis-network nodes and edges, with the positions of a wide layout made for a frame
    `frame_width` x `frame_height` (the drawing's size less the fit's padding) and of a narrow one's
    (a phone, a Compare column), each with its own labels (`label_wide`, `label_narrow`); and the
    font each layout left room for (`{"wide": f, "narrow": f}`)."""
    from pyvis.network import Network

    ids = {n.id for n in nodes}
    kept = [e for e in edges if e.source in ids and e.target in ids]
    # two packings of the components: one for a wide canvas, one for a narrow one (the page picks)
    pos, room = _best_wide_layout(nodes, kept, (frame_width, frame_height))
    narrow, narrow_edge, narrow_room = _narrow_layout(nodes, kept, frame_height)
    net = Network(directed=directed, cdn_resources="in_line")
    for n in nodes:
        # plain text: vis-network 9 draws labels on canvas and sets string titles as text, so an
        # HTML escape would show as "&quot;"; the page runs sandboxed anyway (components.shell.safe)
        x, y = pos[n.id]
        color = {
            "background": n.color,
            "border": n.border or n.color,
            "highlight": {"background": n.color, "border": "#222"},
        }
        net.add_node(
            n.id,
            label=short_label(n.label),
            title=n.title or n.label,
            color=color,
            size=n.size,
            x=x,
            y=y,
            borderWidth=3 if n.border else 1,
            detail=n.detail or n.title or n.label,
            wide=[x, y],
            narrow=list(narrow[n.id]),
            label_wide=short_label(n.label),
            label_narrow=narrow_label(n.label),
        )
    for e, narrow_text in zip(kept, narrow_edge):
        net.add_edge(
            e.source,
            e.target,
            label=short_label(e.label),
            title=e.title or e.label,
            color=e.color,
            dashes=[6, 6] if e.dashed else False,
            width=e.width,
            detail=e.detail or e.title or e.label,
            label_wide=short_label(e.label),
            label_narrow=narrow_text,
        )
    data = net.get_network_data()
    return data[0], data[1], {"wide": room, "narrow": narrow_room}


#: The page's one script of its own (its CSP allows it by hash, with vis-network's). The layout
#: comes fixed from Python (components.graphs.layout), so the page only fits it to the frame: at
#: once, and again on every resize (a frame inside a hidden tab has width 0 until the tab opens).
#: Labels keep a readable on-screen size when the fit zooms out (a phone, a big graph). A click
#: writes the node's or edge's detail (plain text, textContent) into the panel under the graph.
def graph_html(
    nodes: list[GNode],
    edges: list[GEdge],
    *,
    height: int = 520,
    directed: bool = False,
    legend: list[LegendItem] | None = None,
    node_font: int = NODE_FONT,
    width: float = PAGE_FRAME_WIDTH,
) -> str:
    """A self-contained HTML page drawing the graph (no network requests): a legend row, the
    canvas (fixed layout for a frame about `width` px wide, fitted), and a panel showing what was
    clicked."""
    js, css = vis_assets()
    vnodes, vedges, room = network_data(nodes, edges, directed, max(200.0, float(height - FRAME_PADDING)), width)
    e_font = edge_font(node_font)
    options = {
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False},
        "edges": {
            "font": {"size": e_font, "align": "horizontal", "background": "rgba(255,255,255,0.85)", "strokeWidth": 0},
            "smooth": False,
            "arrows": {"to": {"enabled": directed, "scaleFactor": 0.5}},
        },
        "nodes": {
            "shape": "dot",
            "font": {"size": node_font, "strokeWidth": 3, "strokeColor": "#ffffff"},
            "scaling": {"label": {"drawThreshold": 1}},
        },
        "interaction": {"hover": True, "tooltipDelay": 120},
    }
    hint = "Click a node or an edge to see its triplet and source chunk here."
    payload = json_for_script(
        {
            "nodes": vnodes,
            "edges": vedges,
            "options": options,
            "hint": hint,
            "font": {"node": node_font, "edge": e_font},
            "room": room,
        }
    )
    return f"""<!doctype html><html><head><meta charset="utf-8">{csp_meta((js, PAGE_SCRIPT))}
<style>{css}{LEGEND_CSS}
html,body{{margin:0;padding:0;overflow:hidden;font-family:sans-serif}} #g{{box-sizing:border-box;width:100%;height:{int(height)}px;border:1px solid #ddd}}</style>
<script>{js}</script></head><body><div id="bar"><div id="legend" style="height:62px">{legend_html(legend or [])}</div>
<button id="fit" type="button" title="Fit the whole graph in view">⤢ Fit</button></div><div id="g"></div>
<div id="detail">{esc(hint)}</div>
<script type="application/json" id="graph-data">{payload}</script>
<script>{PAGE_SCRIPT}</script></body></html>"""


@lru_cache(maxsize=16)
def _cached_frame(
    nodes: tuple[GNode, ...],
    edges: tuple[GEdge, ...],
    height: int,
    directed: bool,
    legend: tuple[LegendItem, ...],
    width: float,
) -> str:
    """graph_html in its sandboxed frame, kept for the graphs drawn last: the layout is a pure
    function of its input and takes ~0.1 s for a KG2RAG forest, and the frame escapes a megabyte of
    page, which every rerun of a step showing the graph would pay again."""
    page = graph_html(list(nodes), list(edges), height=height, directed=directed, legend=list(legend), width=width)
    js, _ = vis_assets()
    return sandboxed(page, (js, PAGE_SCRIPT), height + CHROME_HEIGHT + 4, fixed=js)


def show_graph(
    nodes: list[GNode],
    edges: list[GEdge],
    *,
    height: int = 520,
    directed: bool = False,
    width: float = PAGE_FRAME_WIDTH,
    caption: str = "",
    legend: list[LegendItem] | None = None,
) -> None:
    """The graph in a sandboxed frame `height` px high, laid out for a frame about `width` wide."""
    if not nodes:
        st.info("Nothing to draw.")
        return
    frame = _cached_frame(tuple(nodes), tuple(edges), height, directed, tuple(legend or ()), width)
    st.iframe(frame, height=height + CHROME_HEIGHT + 12)
    if caption:
        st.caption(caption)
