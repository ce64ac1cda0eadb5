"""The graph page's fixed parts: vis-network's JS and CSS from the pinned pyvis package, our own
script that draws the data (picks the wide or narrow packing by the frame's aspect, fits on load
and resize, grows labels to stay readable, writes a click's detail as plain text), the legend's
CSS and the room the legend and the detail panel take. `components.graphs.graph` fills it with data."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from components.shell.safe import esc


@lru_cache(maxsize=1)
def vis_assets() -> tuple[str, str]:
    import pyvis

    lib = Path(pyvis.__file__).parent / "lib" / "vis-9.1.2"
    return (
        (lib / "vis-network.min.js").read_text(encoding="utf-8"),
        (lib / "vis-network.css").read_text(encoding="utf-8"),
    )


#: Longest label drawn in full; longer ones end in "…" (the whole text is in the hover and the panel).


PAGE_SCRIPT = """
(function() {
  var d = JSON.parse(document.getElementById("graph-data").textContent);
  var nodes = new vis.DataSet(d.nodes), edges = new vis.DataSet(d.edges);
  var box = document.getElementById("g"), panel = document.getElementById("detail");
  var net = new vis.Network(box, {nodes: nodes, edges: edges}, d.options);
  var base = d.font, room = d.room || {}, last = 0, shape = "wide";
  var widths = edges.get().map(function(e) { return [e.id, e.width || 1]; });
  function font(f) {
    // small changes are skipped (each one redraws), but never a growth: that would leave labels
    // a fraction of a pixel under the 12 px they are grown to
    if (Math.abs(f - last) < 0.5 && f <= last) return;
    last = f;
    net.setOptions({nodes: {font: {size: f}}, edges: {font: {size: f * base.edge / base.node}}});
    // edges grow with the labels: a fitted forest is drawn at a third of its size, where a weight's
    // 8 px line became a pale hairline; lines take no room the layout must leave, labels do
    var grow = f / base.node;
    edges.update(widths.map(function(w) { return {id: w[0], width: w[1] * grow}; }));
    document.body.setAttribute("data-font", String(Math.round(f)));
  }
  function readable() {
    var s = net.getScale() || 1;
    // at least 12 px on screen (a phone fits a big drawing at a third of its size), within reason,
    // and never past the font the layout left room for (bigger labels would run into each other)
    font(Math.min(room[shape] || base.node * 7, base.node * 7, Math.max(base.node, 12 / s)));
  }
  function fit() {
    if (!box.clientWidth || !box.clientHeight) return;
    var want = box.clientWidth / box.clientHeight >= 1.6 ? "wide" : "narrow";
    if (want !== shape) {
      shape = want;
      // vis keeps the old label when given "": an empty one is a zero-width space (draws nothing)
      nodes.update(nodes.get().map(function(n) {
        return {id: n.id, x: n[want][0], y: n[want][1], label: n["label_" + want] || "\\u200b"};
      }));
      edges.update(edges.get().map(function(e) { return {id: e.id, label: e["label_" + want] || "\\u200b"}; }));
    }
    font(base.node);  // fit to the drawing at the base size, then grow labels if it zoomed out
    net.fit({animation: false, padding: 40});
    readable();
    // grown labels reach past the drawing the fit saw: fit again with them, so none is cut at
    // the frame's edge, and keep them readable at the new zoom (a few rounds: the growth stops at
    // the font the layout left room for, so this settles)
    for (var i = 0; i < 3 && last > base.node; i++) {
      var before = last;
      net.fit({animation: false, padding: 24});
      readable();
      if (Math.abs(last - before) < 0.5) break;
    }
    // a drawing of two or three nodes is not blown up to fill a big frame: past this zoom its dots
    // and labels only get bigger without showing more (the fit stays centred)
    if (net.getScale() > 1.5) { net.moveTo({scale: 1.5}); readable(); }
    document.body.setAttribute("data-fitted", String(Date.now()));
    probe();
  }
  // For the browser tests (read from outside through the DOM): how many nodes (their dots) lie
  // outside the canvas after the fit, the labels' on-screen size, and where the first node is.
  // Also, on screen: how much of the frame the drawing fills (its labels included) and how many
  // label boxes overlap (node labels with each other, edge labels with node labels and each other).
  function probe() {
    var r = box.getBoundingClientRect(), out = 0, first = null, s = net.getScale();
    nodes.get().forEach(function(n) {
      var p = net.canvasToDOM(net.getPosition(n.id)), k = (n.size || 10) * s;
      if (p.x - k < -1 || p.y - k < -1 || p.x + k > r.width + 1 || p.y + k > r.height + 1) out++;
      if (first === null) first = [p.x + r.left, p.y + r.top];
    });
    var boxes = labelBoxes(s), all = boxes.nodes.concat(boxes.edges), overlaps = [];
    for (var i = 0; i < all.length; i++) for (var j = i + 1; j < all.length; j++) {
      var a = all[i], b = all[j];
      if (a.kind === "edge" && b.kind === "node" && (a.from === b.id || a.to === b.id)) continue;
      if (b.kind === "edge" && a.kind === "node" && (b.from === a.id || b.to === a.id)) continue;
      if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) overlaps.push([a.label, b.label]);
    }
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    all.forEach(function(b) { x0 = Math.min(x0, b.x0); y0 = Math.min(y0, b.y0); x1 = Math.max(x1, b.x1); y1 = Math.max(y1, b.y1); });
    var fill = all.length ? Math.max((x1 - x0) / r.width, (y1 - y0) / r.height) : 0;
    document.body.setAttribute("data-probe", JSON.stringify({outside: out, total: nodes.length, first: first,
      screenFont: last * s, fill: fill, capped: s >= 1.49, overlaps: overlaps.length,
      overlapping: overlaps.slice(0, 5)}));
  }
  // Screen boxes of the labels: a node's (vis-network's own box: its dot and its label) and each
  // edge label's (measured text, drawn centred on the edge's middle).
  function labelBoxes(s) {
    var ctx = document.createElement("canvas").getContext("2d"), ef = last * base.edge / base.node;
    ctx.font = ef + "px arial";
    var ns = nodes.get().map(function(n) {
      var b = net.getBoundingBox(n.id), p = net.canvasToDOM({x: b.left, y: b.top}),
          q = net.canvasToDOM({x: b.right, y: b.bottom});
      return {kind: "node", id: n.id, label: n.label, x0: p.x, y0: p.y, x1: q.x, y1: q.y};
    });
    var es = edges.get().filter(function(e) { return e.label && e.label !== "\u200b"; }).map(function(e) {
      var a = net.getPosition(e.from), b = net.getPosition(e.to), w = ctx.measureText(e.label).width / 2,
          m = net.canvasToDOM({x: (a.x + b.x) / 2, y: (a.y + b.y) / 2});
      return {kind: "edge", from: e.from, to: e.to, label: e.label, x0: m.x - w * s, x1: m.x + w * s,
              y0: m.y - ef * s / 2, y1: m.y + ef * s / 2};
    });
    return {nodes: ns, edges: es};
  }
  net.once("afterDrawing", fit);
  window.addEventListener("resize", fit);
  if (window.ResizeObserver) new ResizeObserver(fit).observe(box);
  net.on("zoom", readable);
  net.on("click", function(p) {
    var item = p.nodes.length ? nodes.get(p.nodes[0]) : (p.edges.length ? edges.get(p.edges[0]) : null);
    panel.textContent = item ? (item.detail || item.title || item.label || "") : d.hint;
  });
  document.getElementById("fit").addEventListener("click", fit);
})();
"""

LEGEND_CSS = """
#legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;padding:4px 6px;max-height:62px;overflow-y:auto}
#legend span{display:inline-flex;align-items:center;gap:5px;white-space:nowrap}
#legend i{display:inline-block;width:12px;height:12px;border-radius:50%}
#legend i.ring{background:#fff!important;border:3px solid;box-sizing:border-box}
#legend i.line{width:22px;height:0;border-radius:0;border-top:3px solid}
#legend i.dashed{width:22px;height:0;border-radius:0;border-top:3px dashed}
#bar{display:flex;justify-content:space-between;align-items:flex-start}
#fit{font-size:12px;margin:3px;cursor:pointer}
#detail{box-sizing:border-box;height:72px;overflow-y:auto;font-size:13px;padding:4px 8px;
 border:1px solid #ddd;border-top:0;white-space:pre-wrap;background:#fafafa}
"""
#: Room the legend row and the detail panel take besides the canvas.
CHROME_HEIGHT = 70 + 72


def legend_html(items: list) -> str:
    """The legend row: a swatch per `LegendItem` (dot, ring, line or dashed line) and its text."""
    parts = []
    for it in items:
        style = (
            f"border-color:{esc(it.color)}" if it.kind in ("ring", "line", "dashed") else f"background:{esc(it.color)}"
        )
        parts.append(f'<span><i class="{esc(it.kind)}" style="{style}"></i>{esc(it.text)}</span>')
    return "".join(parts)
