"""No label of a drawn graph covers another label, a node or an edge label.

The boxes are built from what is drawn, the way each drawing places its text:
- the interactive graph (vis-network, components.graphs.graph): node labels in `node_font` px below the
  dot (vis puts a dot's label at y + size + font/2 + 4, "hanging"), edge labels centred on the
  edge's midpoint in `edge_font` px;
- the export's static SVG (components.report.export): font `fs` = the payload's `font` (before it had
  one: `max(14, width / 60)` of the drawing),
  node text's baseline at y + size + fs, edge text's baseline 4 above the midpoint at 0.85 fs.
A character is taken as 0.55 em wide, a line as 1 em high (plus the baseline's descent).
"""

from __future__ import annotations

import itertools
import time

import pytest

from components.graphs.graph import GEdge, GNode, _network_data, short_label
from components.graphs.static import graph_payload

CHAR_EM = 0.55
VIS_NODE_FONT = 15  # components.graphs.graph.graph_html's node_font
VIS_EDGE_FONT = max(11, VIS_NODE_FONT - 2)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def _text_box(cx: float, top: float, text: str, font: float) -> Box:
    w = CHAR_EM * font * len(text)
    return (cx - w / 2, top, cx + w / 2, top + font)


def vis_boxes(vnodes: list[dict], vedges: list[dict], font: float = VIS_NODE_FONT) -> dict[str, list]:
    """Label and node boxes of the vis-network drawing, in canvas units at the base font (or the
    font the page sets after fitting the drawing to its frame)."""
    at = {n["id"]: n for n in vnodes}
    fs, fe = font, font * VIS_EDGE_FONT / VIS_NODE_FONT
    labels = [
        (n["id"], _text_box(n["x"], n["y"] + n["size"] + fs / 2 + 4 - 2, n["label"], fs)) for n in vnodes if n["label"]
    ]
    dots = [(n["id"], (n["x"] - n["size"], n["y"] - n["size"], n["x"] + n["size"], n["y"] + n["size"])) for n in vnodes]
    elabels = []
    for e in vedges:
        if e.get("label"):
            a, b = at[e["from"]], at[e["to"]]
            mx, my = (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2
            elabels.append(((e["from"], e["to"]), _text_box(mx, my - fe / 2, e["label"], fe)))
    return {"labels": labels, "dots": dots, "edge_labels": elabels}


def _fit_scale(vnodes: list[dict], frame: tuple[float, float]) -> float:
    """Screen px per canvas unit once the page has fitted the drawing to `frame`."""
    x0 = min(n["x"] - max(CHAR_EM * VIS_NODE_FONT * len(n["label"]) / 2, n["size"]) for n in vnodes)
    x1 = max(n["x"] + max(CHAR_EM * VIS_NODE_FONT * len(n["label"]) / 2, n["size"]) for n in vnodes)
    y0 = min(n["y"] - n["size"] for n in vnodes)
    y1 = max(n["y"] + n["size"] + 1.5 * VIS_NODE_FONT + 4 for n in vnodes)
    return min(frame[0] / (x1 - x0), frame[1] / (y1 - y0))


def fitted_font(vnodes: list[dict], frame: tuple[float, float] = (1220.0, 340.0)) -> float:
    """The node font (canvas units) the page sets after fitting the drawing to a frame (by default
    a 420 px graph at 1440 x 900 less the fit's padding): at least 12 px on screen."""
    return min(VIS_NODE_FONT * 7, max(VIS_NODE_FONT, 12 / _fit_scale(vnodes, frame)))


def _screen_font(vnodes: list[dict], frame: tuple[float, float]) -> float:
    """The labels' size on screen, in px, after the fit."""
    return fitted_font(vnodes, frame) * _fit_scale(vnodes, frame)


def svg_boxes(payload: dict) -> dict[str, list]:
    """The same for the export's SVG (components.report.export's `graph` script)."""
    nodes = payload["nodes"]
    at = {n["id"]: n for n in nodes}
    xs = [n["x"] for n in nodes]
    fs = payload.get("font") or max(14.0, (max(xs) - min(xs) + 320) / 60)
    fe = fs * 0.85
    labels = [
        (n["id"], _text_box(n["x"], n["y"] + n["size"] + fs - 0.8 * fs, n["short"], fs * 1.0))
        for n in nodes
        if n["short"]
    ]
    dots = [
        (
            n["id"],
            (n["x"] - 0.8 * n["size"], n["y"] - 0.8 * n["size"], n["x"] + 0.8 * n["size"], n["y"] + 0.8 * n["size"]),
        )
        for n in nodes
    ]
    elabels = []
    for e in payload["edges"]:
        if e["short"]:
            a, b = at[e["source"]], at[e["target"]]
            mx, my = (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2
            elabels.append(((e["source"], e["target"]), _text_box(mx, my - 4 - 0.8 * fe, e["short"], fe)))
    return {"labels": labels, "dots": dots, "edge_labels": elabels}


def _hit(p: Box, q: Box) -> bool:
    return p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]


def overlaps(boxes: dict[str, list]) -> dict[str, list]:
    """Overlapping pairs: label/label, label/another node's dot, label/edge label (and, not
    asserted, edge label/edge label of different node pairs)."""
    labels, dots, elabels = boxes["labels"], boxes["dots"], boxes["edge_labels"]
    out: dict[str, list] = {"label_label": [], "label_node": [], "label_edge": [], "edge_edge": []}
    for (a, p), (b, q) in itertools.combinations(labels, 2):
        if _hit(p, q):
            out["label_label"].append((a, b))
    for (a, p), (b, q) in itertools.product(labels, dots):
        if a != b and _hit(p, q):
            out["label_node"].append((a, b))
    for (a, p), (b, q) in itertools.product(labels, elabels):
        if _hit(p, q):
            out["label_edge"].append((a, b))
    for (a, p), (b, q) in itertools.combinations(elabels, 2):
        if set(a) != set(b) and _hit(p, q):
            out["edge_edge"].append((a, b))
    return out


def count(boxes: dict[str, list]) -> int:
    o = overlaps(boxes)
    return len(o["label_label"]) + len(o["label_node"]) + len(o["label_edge"])


# --- graphs ------------------------------------------------------------------------------------

NAMES = [
    "Blue Demon's Revenge of the Masked Wrestlers",
    "The Church of Jesus Christ of Latter-day Saints",
    "Mount Kilimanjaro National Park",
    "Ludwig van Beethoven",
    "Universidad Nacional Autónoma de México",
    "Ed Wood",
    "Scott Derrickson",
    "Kiss and Tell (1945 film)",
    "Shirley Temple",
    "Blue Demon",
    "Adriana Trigiani",
    "Big Stone Gap (film)",
    "Greenwich Village, New York City",
    "Eenasul Fateh",
    "Lisbon",
    "Portugal",
    "The Football Association Challenge Cup",
    "Royal Australian Air Force",
    "Sir Arthur Conan Doyle",
    "Meet Corliss Archer (radio series)",
    "Los Angeles",
    "Ann Arbor, Michigan",
    "Oberoi family",
    "The Oberoi Group",
    "Terry Richardson",
    "Hillary Clinton",
    "New York University",
    "Black Swan (2010 American psychological thriller)",
    "Jean Rhys",
    "Wide Sargasso Sea",
]
PREDS = [
    "directed by",
    "starred in",
    "is located in",
    "was born in",
    "is the capital of",
    "was a member of the national legislature of",
    "won",
    "founded",
    "wrote",
    "played for",
]


def _graph(pairs: list[tuple[int, int]], names=NAMES) -> tuple[list[GNode], list[GEdge]]:
    ids = sorted({i for p in pairs for i in p})
    nodes = [
        GNode(
            id=f"n{i}", label=names[i % len(names)] + ("" if i < len(names) else f" {i}"), size=18 if i % 5 == 0 else 12
        )
        for i in ids
    ]
    edges = [GEdge(f"n{u}", f"n{v}", label=f"{k + 1}. {PREDS[(u + v) % len(PREDS)]}") for k, (u, v) in enumerate(pairs)]
    return nodes, edges


def two_node_trees() -> tuple[list[GNode], list[GEdge]]:
    return _graph([(2 * i, 2 * i + 1) for i in range(6)])


def forest15() -> tuple[list[GNode], list[GEdge]]:
    pairs, nxt = [], 0
    for c in range(15):
        size = [2, 2, 3, 4, 2, 5, 2, 3, 2, 6, 2, 4, 2, 3, 8][c]
        root = nxt
        for k in range(1, size):
            pairs.append((root + (k - 1) // 2, root + k))
        nxt += size
    return _graph(pairs)


def kg2rag_trace_graph() -> tuple[list[GNode], list[GEdge]]:
    """The weighted graph of a scripted KG2RAG run over the suite's in-memory corpus."""
    from components.methods.kg2rag import weighted_graph
    from engine.methods.kg2rag import KG2RAG
    from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner, chunk
    from tests.doubles import HashEmbedder

    def obj(i: int) -> str:
        return NAMES[(i * 7 + 3) % len(NAMES)]

    chunks = [
        chunk(
            f"c{i}",
            NAMES[i],
            f"{NAMES[i]} {PREDS[i % len(PREDS)]} {obj(i)}. {NAMES[i]} "
            f"{PREDS[(i + 3) % len(PREDS)]} {NAMES[(i + 11) % len(NAMES)]}.",
        )
        for i in range(12)
    ]
    triplets = [(NAMES[i], PREDS[i % len(PREDS)], obj(i), (f"c{i}",)) for i in range(12)]
    triplets += [
        (NAMES[i], PREDS[(i + 3) % len(PREDS)], NAMES[(i + 11) % len(NAMES)], (f"c{i}",)) for i in range(0, 12, 2)
    ]
    corpus = MemoryCorpus(HashEmbedder(), chunks, triplets)
    q = f"Who {PREDS[0]} {NAMES[0]}?"
    res = KG2RAG(ScriptedReasoner({q: "Ed Wood"})).answer(q, corpus)
    nodes, edges, _ = weighted_graph(res.trace)
    return nodes, edges


SAMPLE_NAMES = [
    "Alû",
    "Arthur? Arthur!",
    "Blue Demon's",
    "Demon Dice",
    "Fridays",
    "legendary tribe or state of ancient China",
    "Lester Smith",
    "Leyenda de Azul",
    "Lilu",
    "Maha Sona",
    "masculine Akkadian word for a spirit",
    'mentioned in many other ancient texts including "Zhuangzi',
    "most feared god or demon in Sri Lanka",
    "name of a malevolent spirit in Chinese mythology and folklore",
    "Professor Li Yujie of Henan University",
    "ranked the fourth among the thirteen",
    "Samuel Gallu",
    "Tim Brown",
    "vengeful spirit of the Utukku",
    "Wangliang",
]


def sample_compare_graph() -> tuple[list[GNode], list[GEdge]]:
    """The KG2RAG weighted graph the Compare page draws for the hotpotqa-sample demo question (the
    browser test's): 20 entities, 13 edges, 8 trees, the walk numbering its edges."""
    walk = [
        (8, 10, "1. is"),
        (8, 5, "2. was"),
        (8, 15, "3. was"),
        (8, 11, "4. is"),
        (14, 8, "5. believes that"),
        (0, 18, "1. is"),
        (7, 2, "1. endorsed by"),
        (7, 4, "2. held on"),
        (9, 12, "1. is"),
        (19, 13, "1. is"),
        (3, 6, "1. created by"),
        (3, 17, "2. created by"),
        (1, 16, "1. directed by"),
    ]
    nodes = [GNode(id=f"n{i}", label=name, size=18) for i, name in enumerate(SAMPLE_NAMES)]
    return nodes, [GEdge(f"n{u}", f"n{v}", label=label) for u, v, label in walk]


def _graphs():
    out = [("two-node trees", two_node_trees), ("15-component forest", forest15)]
    out.append(("KG2RAG trace", kg2rag_trace_graph))
    out.append(("sample Compare graph", sample_compare_graph))
    return out


@pytest.mark.parametrize("name,make", _graphs(), ids=[g[0] for g in _graphs()])
def test_no_label_overlaps_in_the_interactive_graph(name, make):
    nodes, edges = make()
    vnodes, vedges = _network_data(nodes, edges, False)
    o = overlaps(vis_boxes(vnodes, vedges))
    assert not o["label_label"] and not o["label_node"] and not o["label_edge"], (name, o)


@pytest.mark.parametrize("name,make", _graphs(), ids=[g[0] for g in _graphs()])
def test_no_label_overlaps_when_the_page_fits_the_graph_to_the_presentation_frame(name, make):
    """Zoomed out to fit, the page grows the labels to stay readable: the layout left room."""
    nodes, edges = make()
    vnodes, vedges = _network_data(nodes, edges, False)
    o = overlaps(vis_boxes(vnodes, vedges, fitted_font(vnodes)))
    assert not o["label_label"] and not o["label_node"] and not o["label_edge"], (name, o)


@pytest.mark.parametrize("name,make", _graphs(), ids=[g[0] for g in _graphs()])
def test_presentation_graph_height_is_the_frame_the_layout_is_made_for(name, make):
    """Presentation mode draws its graph PRESENT_GRAPH_HEIGHT high: the layout is packed for that
    frame, so the fitted labels do not overlap and are no smaller than in the default frame."""
    from components.graphs.graph import FRAME_PADDING
    from components.report.present_view import PRESENT_GRAPH_HEIGHT

    nodes, edges = make()
    frame = (1220.0, float(PRESENT_GRAPH_HEIGHT - FRAME_PADDING))
    vnodes, vedges = _network_data(nodes, edges, False, frame[1])
    font = fitted_font(vnodes, frame)
    o = overlaps(vis_boxes(vnodes, vedges, font))
    assert not o["label_label"] and not o["label_node"] and not o["label_edge"], (name, o)
    small = _network_data(nodes, edges, False)[0]
    # (a heuristic packing: a taller frame may come out a few per cent worse, never much)
    assert _screen_font(vnodes, frame) >= 0.95 * _screen_font(small, (1220.0, 340.0)), name


@pytest.mark.parametrize("name,make", _graphs(), ids=[g[0] for g in _graphs()])
def test_no_label_overlaps_in_the_export_svg(name, make):
    nodes, edges = make()
    payload = graph_payload(nodes, edges)
    o = overlaps(svg_boxes(payload))
    assert not o["label_label"] and not o["label_node"] and not o["label_edge"], (name, o)


def test_layout_is_deterministic_and_fast():
    from components.graphs.graph import label_boxes
    from components.graphs.layout import component_layout

    nodes, edges = _graph([(i, j) for i in range(100) for j in (2 * i + 1, 2 * i + 2) if j < 100])
    assert len(nodes) == 100
    a = graph_payload(nodes, edges)
    assert a == graph_payload(nodes, edges)
    assert all(short_label(n.label) == p["short"] for n, p in zip(nodes, a["nodes"]))
    args = ([n.id for n in nodes], [(e.source, e.target) for e in edges])
    boxes = label_boxes(nodes, edges, 15)
    component_layout(*args, **boxes)
    took = []
    for _ in range(3):
        t = time.perf_counter()
        component_layout(*args, **boxes)
        took.append(time.perf_counter() - t)
    assert min(took) < 0.15, took  # ~20 ms here; a page draw makes up to four


# --- the narrow layout (a phone, a Compare column: the page's frame has width / height < 1.6) ---

#: Canvas px the fit fills (less its padding): a Compare column at 1440 x 900 (~430 x 480 px) and
#: a phone at 390 px (~360 x 480 px), for the KG2RAG graph's 480 px drawing.
COMPARE_FRAME = (380.0, 400.0)
PHONE_FRAME = (270.0, 400.0)


def narrow_view(vnodes: list[dict], vedges: list[dict]) -> tuple[list[dict], list[dict]]:
    """The drawing as the page shows it in a narrow frame: narrow positions, narrow labels."""
    return (
        [{**n, "x": n["narrow"][0], "y": n["narrow"][1], "label": n.get("label_narrow", n["label"])} for n in vnodes],
        [{**e, "label": e.get("label_narrow", e["label"])} for e in vedges],
    )


@pytest.mark.parametrize("frame", [COMPARE_FRAME, PHONE_FRAME], ids=["compare column", "phone"])
@pytest.mark.parametrize("name,make", _graphs(), ids=[g[0] for g in _graphs()])
def test_no_label_overlaps_in_the_narrow_layout(name, make, frame):
    nodes, edges = make()
    vnodes, vedges = narrow_view(*_network_data(nodes, edges, False, frame[1]))
    o = overlaps(vis_boxes(vnodes, vedges, fitted_font(vnodes, frame)))
    assert not o["label_label"] and not o["label_node"] and not o["label_edge"], (name, o)


@pytest.mark.parametrize("frame", [COMPARE_FRAME, PHONE_FRAME], ids=["compare column", "phone"])
@pytest.mark.parametrize("make", [kg2rag_trace_graph, sample_compare_graph], ids=["KG2RAG trace", "sample"])
def test_narrow_labels_stay_readable_for_a_kg2rag_graph(make, frame):
    """A KG2RAG weighted graph (~20 entities) fits a narrow frame with labels the page grows to
    about 12 px on screen; the narrow labels are short, the full text stays in the hover."""
    nodes, edges = make()
    vnodes, vedges = _network_data(nodes, edges, False, frame[1])
    assert all(len(n["label_narrow"]) <= 14 and n["title"] for n in vnodes)
    assert all(len(e["label_narrow"]) <= 14 for e in vedges)
    assert _screen_font(narrow_view(vnodes, vedges)[0], frame) >= 11.5, frame


def test_the_page_switches_labels_with_the_layout():
    """In a narrow frame the page shows the narrow labels (an empty one as a zero-width space:
    vis-network keeps the old label when given ""), and the wide ones back in a wide frame."""
    from components.graphs.page import PAGE_SCRIPT as _INIT

    nodes, edges = sample_compare_graph()
    vnodes, vedges = _network_data(nodes, edges, False, 400.0)
    assert all(n["label"] == n["label_wide"] and "label_narrow" in n for n in vnodes)
    assert all(e["label"] == e["label_wide"] and "label_narrow" in e for e in vedges)
    assert 'label: n["label_" + want] || "\\u200b"' in _INIT and 'label: e["label_" + want] || "\\u200b"' in _INIT


@pytest.mark.parametrize("make", [kg2rag_trace_graph, sample_compare_graph], ids=["KG2RAG trace", "sample"])
def test_wide_labels_stay_readable_for_a_kg2rag_graph_on_its_page(make):
    """The KG2RAG page's graph (600 px high in the main column at 1440 x 900): the layout leaves
    room for labels of about 12 px on screen (a hub's leaves go in rows when side by side they
    would not), and the page grows them no further than that room (no overlaps)."""
    from components.graphs.graph import FRAME_PADDING, PAGE_FRAME_WIDTH, network_data

    nodes, edges = make()
    frame = (PAGE_FRAME_WIDTH, 600.0 - FRAME_PADDING)
    vnodes, vedges, room = network_data(nodes, edges, False, frame[1], frame[0])
    font = min(room["wide"], fitted_font(vnodes, frame))
    assert not any(overlaps(vis_boxes(vnodes, vedges, font))[k] for k in ("label_label", "label_node", "label_edge"))
    # about 12 px (the layout reckons text a little wider than this check does); 32-character
    # labels in one row of leaves gave 8.3 px for the sample's graph on this page
    assert font * _fit_scale(vnodes, frame) >= 11.0
