"""Interactive graphs with pyvis (vis-network), embedded offline and with every label escaped.

pyvis builds the node and edge lists; we render them with our own small page instead of pyvis's
template because that template pulls Bootstrap from a CDN (the app must work offline, and a failed
request is a console error) and, when a title mentions `href`, writes titles with innerHTML.
vis-network's own JS and CSS are inlined from the pyvis package. The data goes in as JSON with
`<`, `>` and `&` escaped, so no entity name can close the script element; labels are plain text
(vis-network draws them on canvas). The page runs in a `sandbox="allow-scripts"` frame under a
hash-based CSP (components.safe.sandboxed): a slip could not reach the app's origin.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import streamlit as st

from components.safe import csp_meta, json_for_script, sandboxed

#: Most nodes a corpus-level graph shows; beyond that vis-network becomes unreadable and slow.
DEFAULT_NODE_CAP = 150


@dataclass(frozen=True)
class GNode:
    id: str
    label: str
    title: str = ""
    color: str = "#97c2fc"
    size: int = 14


@dataclass(frozen=True)
class GEdge:
    source: str
    target: str
    label: str = ""
    title: str = ""
    color: str = "#888888"
    dashed: bool = False
    width: float = 1.5


@lru_cache(maxsize=1)
def _vis_assets() -> tuple[str, str]:
    import pyvis

    lib = Path(pyvis.__file__).parent / "lib" / "vis-9.1.2"
    return ((lib / "vis-network.min.js").read_text(encoding="utf-8"),
            (lib / "vis-network.css").read_text(encoding="utf-8"))


def _network_data(nodes: list[GNode], edges: list[GEdge], directed: bool) -> tuple[list, list]:
    from pyvis.network import Network

    net = Network(directed=directed, cdn_resources="in_line")
    for n in nodes:
        # plain text: vis-network 9 draws labels on canvas and sets string titles as text, so an
        # HTML escape would show as "&quot;"; the page runs sandboxed anyway (components.safe)
        net.add_node(n.id, label=n.label, title=n.title or n.label, color=n.color, size=n.size)
    for e in edges:
        if e.source not in net.node_ids or e.target not in net.node_ids:
            continue
        net.add_edge(e.source, e.target, label=e.label, title=e.title or e.label,
                     color=e.color, dashes=e.dashed, width=e.width)
    data = net.get_network_data()
    return data[0], data[1]


#: The page's one script of its own (its CSP allows it by hash, with vis-network's).
_INIT = """
(function() {
  var d = JSON.parse(document.getElementById("graph-data").textContent);
  var net = new vis.Network(document.getElementById("g"),
      {nodes: new vis.DataSet(d.nodes), edges: new vis.DataSet(d.edges)}, d.options);
  net.once("stabilizationIterationsDone", function() { net.setOptions({physics: false}); });
})();
"""


def graph_html(nodes: list[GNode], edges: list[GEdge], *, height: int = 520, directed: bool = False,
               physics: bool = True) -> str:
    """A self-contained HTML page drawing the graph (no network requests)."""
    js, css = _vis_assets()
    vnodes, vedges = _network_data(nodes, edges, directed)
    options = {
        "physics": {"enabled": physics, "stabilization": {"iterations": 150},
                    "barnesHut": {"springLength": 140}},
        "edges": {"font": {"size": 10, "align": "middle"}, "smooth": False,
                  "arrows": {"to": {"enabled": directed, "scaleFactor": 0.5}}},
        "nodes": {"shape": "dot", "font": {"size": 13}},
        "interaction": {"hover": True, "tooltipDelay": 120},
    }
    payload = json_for_script({"nodes": vnodes, "edges": vedges, "options": options})
    return f"""<!doctype html><html><head><meta charset="utf-8">{csp_meta((js, _INIT))}
<style>{css}
html,body{{margin:0;padding:0;overflow:hidden;font-family:sans-serif}} #g{{box-sizing:border-box;width:100%;height:{int(height)}px;border:1px solid #ddd}}</style>
<script>{js}</script></head><body><div id="g"></div>
<script type="application/json" id="graph-data">{payload}</script>
<script>{_INIT}</script></body></html>"""


def show_graph(nodes: list[GNode], edges: list[GEdge], *, height: int = 520, directed: bool = False,
               caption: str = "") -> None:
    if not nodes:
        st.info("Nothing to draw.")
        return
    js, _ = _vis_assets()
    page = graph_html(nodes, edges, height=height, directed=directed)
    st.iframe(sandboxed(page, (js, _INIT), height + 4), height=height + 12)
    if caption:
        st.caption(caption)


def entity_subgraph(graph, search: str = "", cap: int = DEFAULT_NODE_CAP) -> tuple[list[GNode], list[GEdge], int]:
    """Nodes and edges of the corpus entity graph to draw, and how many nodes matched in all.

    With a search string: the matching entities and their neighbours, matches first. Without:
    the best-connected entities. Either way at most `cap` nodes, so a big corpus stays drawable.
    """
    query = (search or "").strip().lower()
    if query:
        hits = [n for n, a in graph.nodes(data=True)
                if query in str(n).lower() or query in str(a.get("label", "")).lower()]
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
    nodes = [GNode(id=str(n), label=str(graph.nodes[n].get("label", n)),
                   title=f"{graph.nodes[n].get('label', n)} ({graph.degree(n)} triplets)",
                   color="#f4a261" if n in highlight else "#97c2fc",
                   size=18 if n in highlight else 12)
             for n in chosen]
    edges: list[GEdge] = []
    seen_pairs: set = set()
    for u, v, a in graph.edges(data=True):
        if u in keep and v in keep:
            pair = (u, v, a.get("predicate", ""))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
            title = f"{a.get('subject', u)} {a.get('predicate', '')} {a.get('object', v)}"
            edges.append(GEdge(str(u), str(v), label=str(a.get("predicate", "")), title=title))
    return nodes, edges, matched
