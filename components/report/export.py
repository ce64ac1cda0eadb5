"""A run or a comparison as one self-contained HTML file that works offline.

The page holds its data as JSON inside `<script type="application/json">` (with `<`, `>`, `&`
escaped so no text can close the element) and a small script that draws it with `textContent`
only: every string from a document, an entity or an LLM reply stays text. No external request.
"""

from __future__ import annotations

from dataclasses import asdict

from components.contract import result_steps
from components.report.export_settings import CSS as SETTINGS_CSS
from components.report.export_settings import settings_block
from components.shell.safe import csp_meta, esc, json_for_script
from components.steps import usage_lines
from components.widgets.preset_badge import preset_lines
from engine.methods.registry import title as method_title
from engine.runs import Run

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.4em} .q{font-size:1.15em;background:#f4f6fa;padding:.6em 1em;border-radius:6px}
.tabs button,.nav button{margin:.2em;padding:.4em .9em;border:1px solid #99a;border-radius:5px;background:#fff;cursor:pointer}
.tabs button.on{background:#3b6ea8;color:#fff} .step{border:1px solid #ddd;border-radius:6px;padding:1em;margin-top:.8em}
.sec h3{font-size:1em;margin:.8em 0 .3em} .sec div{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.85em}
details{margin:.4em 0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;font-size:.8em}
.usage{color:#555;font-size:.9em} .answer{font-weight:bold}
.graph{border:1px solid #ddd;border-radius:6px;margin:.6em 0} .graph svg{width:100%;height:auto;display:block}
.legend{font-size:.8em;padding:.3em .5em} .legend span{margin-right:1em;white-space:nowrap}
.legend i{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:4px;vertical-align:middle}
.legend i.line,.legend i.dashed{width:20px;height:0;border-radius:0;border-top:3px solid}
.legend i.dashed{border-top-style:dashed} .legend i.ring{background:#fff!important;border:3px solid;box-sizing:border-box}
.tabs button.v-correct{border-color:#2a9d5c} .tabs button.v-wrong,.tabs button.v-error{border-color:#d64545}
.chain{font-size:.9em;margin:.5em 0} .chain ol{list-style:none;padding-left:0;margin:.2em 0} .chain li{margin:.2em 0}
.chain button.cite,.chunk-view button.cite{border:1px solid #9ab;border-radius:10px;background:#eef2f7;margin:0 .2em;
padding:.05em .6em;cursor:pointer;font-size:.95em}
.chunk-view{border:2px solid #3b6ea8;border-radius:6px;padding:.6em 1em;margin-top:.8em;background:#fbfcfe}
.chunk-view .chunk-text{white-space:pre-wrap;line-height:1.5} .chunk-view mark{background:#ffe08a;padding:0 .1em}
.graph svg circle.has-chunk{cursor:pointer}
.timelines figure{margin:1em 0;border:1px solid #ddd;border-radius:6px;padding:.6em .8em}
.timelines figcaption{font-size:.9em;margin-bottom:.3em} .timelines svg{width:100%;height:auto;display:block}
.timelines .legend{color:#555;margin:.2em 0 0}
"""

_JS = """
(function(){
  var data = JSON.parse(document.getElementById('run-data').textContent);
  var root = document.getElementById('app');
  var state = {m: 0, s: 0, chunk: null};
  // a chunk with the sentence holding the first needle marked; the text stays text (no markup)
  function chunkView(m){
    var c = state.chunk, got = m.chunks[c.id] || [c.id, ''], box = el('div', undefined, 'chunk-view');
    box.id = 'chunk-view'; box.appendChild(el('h3', got[0]));
    if (c.others && c.others.length > 1) {
      var pick = el('div', 'Chunks stating its triplets: ');
      c.others.forEach(function(id){ pick.appendChild(citeButton(m, id, c.needles, c.others)); });
      box.appendChild(pick);
    }
    var text = got[1] || '(text not in the export)', body = el('div', undefined, 'chunk-text');
    var sentences = text.split(/(?<=[.!?])\\s+/), span = '';
    c.needles.some(function(n){ n = (n || '').trim().toLowerCase(); if (n.length < 2) return false;
      span = sentences.find(function(x){ return x.toLowerCase().indexOf(n) >= 0; }) || ''; return !!span; });
    var at = span ? text.indexOf(span) : -1;
    if (at < 0) body.textContent = text;
    else { body.appendChild(document.createTextNode(text.slice(0, at)));
      body.appendChild(el('mark', span, 'span'));
      body.appendChild(document.createTextNode(text.slice(at + span.length))); }
    box.appendChild(body);
    return box;
  }
  function openChunk(id, needles, others){
    state.chunk = {id: id, needles: needles || [], others: others || []}; draw();
    var v = document.getElementById('chunk-view'); if (v) v.scrollIntoView({block: 'center'});
  }
  function citeButton(m, id, needles, others){
    var b = el('button', (m.chunks[id] || [id])[0], 'cite'); b.dataset.chunk = id;
    b.onclick = function(){ openChunk(id, needles, others); }; return b;
  }
  function chain(m){
    var box = el('div', undefined, 'chain');
    if (!m.chain.length) return box;
    box.appendChild(el('b', 'Evidence chain (answer \u2190 value / tree \u2190 chunk; click a chunk to read it)'));
    var ol = el('ol');
    m.chain.forEach(function(c, i){
      var li = el('li', '[' + (i + 1) + '] ' + c.claim + (c.support ? ' \u2190 \u201c' + c.support + '\u201d' : '') + ' \u2190 ');
      c.chunks.forEach(function(id){ li.appendChild(citeButton(m, id, c.needles)); });
      ol.appendChild(li);
    });
    box.appendChild(ol); return box;
  }
  function el(tag, text, cls){ var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs){ var e = document.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); return e; }
  // a static drawing of the step's graph: positions come from the app's layout, labels are text
  function graph(g, m){
    var wrap = el('div', undefined, 'graph'), leg = el('div', undefined, 'legend');
    g.legend.forEach(function(it){
      var s = el('span'), i = el('i', undefined, it.kind);
      if (it.kind === 'dot') i.style.background = it.color; else i.style.borderColor = it.color;
      s.appendChild(i); s.appendChild(document.createTextNode(it.text)); leg.appendChild(s);
    });
    wrap.appendChild(leg);
    var xs = g.nodes.map(function(n){ return n.x; }), ys = g.nodes.map(function(n){ return n.y; });
    var x0 = Math.min.apply(null, xs) - 160, x1 = Math.max.apply(null, xs) + 160;
    var y0 = Math.min.apply(null, ys) - 60, y1 = Math.max.apply(null, ys) + 60;
    var fs = g.font || Math.max(14, (x1 - x0) / 60);
    if (g.font) {  // the layout left room for labels of this size: frame them all, whatever their length
      var half = function(n){ return Math.max(0.3 * fs * n.short.length, n.size); };
      x0 = Math.min.apply(null, g.nodes.map(function(n){ return n.x - half(n); })) - fs;
      x1 = Math.max.apply(null, g.nodes.map(function(n){ return n.x + half(n); })) + fs;
      y0 = Math.min.apply(null, g.nodes.map(function(n){ return n.y - n.size; })) - fs;
      y1 = Math.max.apply(null, g.nodes.map(function(n){ return n.y + n.size; })) + 2.5 * fs;
    }
    var root = svg('svg', {viewBox: [x0, y0, x1 - x0, y1 - y0].join(' '), role: 'img'});
    var at = {}; g.nodes.forEach(function(n){ at[n.id] = n; });
    g.edges.forEach(function(e){
      var a = at[e.source], b = at[e.target];
      var line = svg('line', {x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: e.color, 'stroke-width': e.width * 1.3});
      if (e.dashed) line.setAttribute('stroke-dasharray', '8 6');
      var t = svg('title'); t.textContent = e.title || e.label; line.appendChild(t); root.appendChild(line);
      if (e.short) { var lb = svg('text', {x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, 'font-size': fs * 0.85,
          'text-anchor': 'middle', fill: '#444', 'paint-order': 'stroke', stroke: '#fff', 'stroke-width': 4});
        lb.textContent = e.short; root.appendChild(lb); }
    });
    g.nodes.forEach(function(n){
      var c = svg('circle', {cx: n.x, cy: n.y, r: n.size * 0.8, fill: n.color,
          stroke: n.border || n.color, 'stroke-width': n.border ? 4 : 1});
      var t = svg('title'); t.textContent = n.title || n.label; c.appendChild(t); root.appendChild(c);
      var from = m.node_chunks[n.id];
      if (from && from.length) { c.setAttribute('class', 'has-chunk'); c.dataset.node = n.id;
        c.onclick = function(){ openChunk(from[0], [n.label], from); }; }
      var lb = svg('text', {x: n.x, y: n.y + n.size + fs, 'font-size': fs, 'text-anchor': 'middle', fill: '#222',
          'paint-order': 'stroke', stroke: '#fff', 'stroke-width': 4});
      lb.textContent = n.short; root.appendChild(lb);
    });
    wrap.appendChild(root);
    return wrap;
  }
  function draw(){
    root.textContent = '';
    var tabs = el('div', undefined, 'tabs');
    data.methods.forEach(function(m, i){
      var b = el('button', m.title + ': ' + m.answer + (m.mark ? ' ' + m.mark : ''));
      b.className = 'v-' + m.verdict + (i === state.m ? ' on' : '');
      b.onclick = function(){ state.m = i; state.s = 0; state.chunk = null; draw(); }; tabs.appendChild(b);
    });
    root.appendChild(tabs);
    var m = data.methods[state.m];
    var u = el('div', undefined, 'usage'); m.usage.forEach(function(l){ u.appendChild(el('div', l)); }); root.appendChild(u);
    root.appendChild(chain(m));
    var nav = el('div', undefined, 'nav');
    var prev = el('button', '\\u25c0 Previous'); prev.disabled = state.s === 0; prev.onclick = function(){ state.s--; state.chunk = null; draw(); };
    var next = el('button', 'Next \\u25b6'); next.disabled = state.s >= m.steps.length - 1; next.onclick = function(){ state.s++; state.chunk = null; draw(); };
    nav.appendChild(prev); nav.appendChild(next);
    nav.appendChild(el('span', ' Step ' + (state.s + 1) + ' of ' + m.steps.length));
    root.appendChild(nav);
    var st = m.steps[state.s]; var box = el('div', undefined, 'step');
    box.appendChild(el('h2', st.title));
    st.sections.forEach(function(sec){
      var s = el('div', undefined, 'sec'); s.appendChild(el('h3', sec.heading));
      sec.lines.forEach(function(l){
        // a line tagged "[tag] " is drawn in the colour its section gives that tag (e.g. a T2RAG queue)
        var q = /^\\[([A-Za-z0-9_-]+)\\] /.exec(l), d = el('div', l, q && sec.tags[q[1]] ? q[1] : undefined);
        if (q && sec.tags[q[1]]) d.style.color = sec.tags[q[1]];
        s.appendChild(d); });
      box.appendChild(s);
    });
    if (st.graph) box.appendChild(graph(st.graph, m));
    st.calls.forEach(function(c){
      var d = el('details'); d.appendChild(el('summary', 'LLM call: ' + c[0]));
      d.appendChild(el('h4', 'Prompt')); d.appendChild(el('pre', c[1] || '(none)'));
      d.appendChild(el('h4', 'Raw reply')); d.appendChild(el('pre', c[2] || '(empty)'));
      box.appendChild(d);
    });
    root.appendChild(box);
    if (state.chunk) root.appendChild(chunkView(m));
  }
  draw();
})();
"""


def run_payload(run: Run, corpus=None) -> dict:
    from components.chunk_names import chunk_names
    from components.contract import view_for
    from components.widgets.answer_box import verdict

    ids = [c for r in run.results for c in view_for(r).chunk_ids(r)]
    names = chunk_names(corpus, ids) if corpus is not None else {}
    methods = []
    for r in run.results:
        v = verdict(r, run.gold)
        methods.append(
            {
                "method": r.method,
                "title": method_title(r.method),
                "answer": r.answer or "(no answer)",
                "verdict": v.kind,
                "mark": v.mark,
                "usage": preset_lines(r)[:1] + usage_lines(r, names),  # the preset's name; its table is static
                "steps": [asdict(s) for s in result_steps(r, names)],
                **evidence_payload(r, corpus),
            }
        )
    return {"question": run.question, "gold": list(run.gold), "corpus": run.corpus, "methods": methods}


def evidence_payload(result, corpus=None) -> dict:
    """The answer's evidence chain (from the result's view, read from the trace), the text of
    every chunk it or a graph node points at, and which chunks state each graph node (the view's
    `node_chunks`), so the offline page opens a chunk with its sentence marked from a citation or
    a node click."""
    from components.chunk_names import chunk_texts
    from components.contract import view_for
    from components.widgets.evidence_chain import chain_chunk_texts, chain_for

    cits = chain_for(result)
    node_chunks = view_for(result).node_chunks(result)
    texts = chain_chunk_texts(result, corpus)
    missing = [c for ids in node_chunks.values() for c in ids if c not in texts]
    texts.update(chunk_texts(corpus, missing) if corpus is not None and missing else {})
    return {
        "chain": [
            {
                "claim": c.claim,
                "support": c.support,
                "chunks": list(c.chunk_ids),
                "needles": [n for n in c.needles if n],
            }
            for c in cits
        ],
        "chunks": {cid: [name, text] for cid, (name, text) in texts.items()},
        "node_chunks": node_chunks,
    }


def export_file_name(run: Run) -> str:
    """`triplet-lens_<corpus>_<question slug>_<time>.html`: one name per run, so a second export
    does not overwrite the first."""
    import re
    import time as _time

    slug = re.sub(r"[^a-z0-9]+", "-", run.question.lower()).strip("-")[:40].rstrip("-") or "question"
    corpus = re.sub(r"[^A-Za-z0-9_-]+", "-", run.corpus or "run").strip("-") or "run"
    stamp = _time.strftime("%Y%m%d-%H%M%S", _time.localtime(run.created or _time.time()))
    kind = "comparison" if run.kind == "comparison" else run.results[0].method if run.results else "run"
    return f"triplet-lens_{corpus}_{slug}_{kind}_{stamp}"


def timelines_html(run: Run) -> str:
    """A static timeline (inline SVG, no script) per result: where time and money went."""
    from components.compare.timeline_svg import timeline_svg
    from components.compare.timeline_view import legend, summary
    from engine.runs.timeline import timeline

    figures = []
    all_spans = [timeline(r) for r in run.results]
    scale = max((s.end for spans in all_spans for s in spans), default=0.0)  # one time scale for all
    for r, spans in zip(run.results, all_spans):
        drawing = timeline_svg(spans, x_max=scale)
        if not drawing:
            continue
        figures.append(
            f'<figure class="timeline" data-method="{esc(r.method)}"><figcaption><b>'
            f"{esc(method_title(r.method))}</b> · {esc(summary(spans))}</figcaption>"
            f'{drawing}<p class="legend">{esc(legend(spans))} Hover a bar for its tokens, cost and detail.'
            "</p></figure>"
        )
    if not figures:
        return ""
    return (
        '<section class="timelines"><h2>Where time and money went</h2><p class="usage">One time scale for '
        "all methods: equal lengths are equal times.</p>" + "".join(figures) + "</section>"
    )


def verdict_block(run: Run, corpus=None) -> str:
    """The Compare verdict strip as static markup (escaped text, inline styles, no script), so the
    file says who did better and why even with scripts off."""
    from components.compare.verdict import run_verdict, verdict_html

    v = run_verdict(run, corpus)
    return f'<section class="verdict">{verdict_html(v)}</section>' if v is not None else ""


def export_html(run: Run, title: str = "Triplet Lens run", corpus=None) -> str:
    """The whole page as a string. The question and gold answer are also written into the static
    markup (escaped), so the file says what it is even with scripts disabled."""
    payload = json_for_script(run_payload(run, corpus))
    gold = f"<p>Gold answer: <b>{esc(' / '.join(run.gold))}</b></p>" if run.gold else ""
    methods = ", ".join(method_title(r.method) for r in run.results)
    strip = verdict_block(run, corpus) + settings_block(run)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{csp_meta((_JS,))}
<title>{esc(title)}</title><style>{_CSS}{SETTINGS_CSS}</style></head>
<body><h1>{esc(title)}: {esc(methods)}</h1>
<p class="q">{esc(run.question)}</p>{gold}{strip}
<div id="app"><noscript>Enable JavaScript to step through the run.</noscript></div>
<script type="application/json" id="run-data">{payload}</script>
<script>{_JS}</script>
{timelines_html(run)}
<p class="usage">Exported from Triplet Lens{(" (corpus " + esc(run.corpus) + ")") if run.corpus else ""}.</p>
</body></html>
"""
