"""A run or a comparison as one self-contained HTML file that works offline.

The page holds its data as JSON inside `<script type="application/json">` (with `<`, `>`, `&`
escaped so no text can close the element) and a small script that draws it with `textContent`
only: every string from a document, an entity or an LLM reply stays text. No external request.
"""
from __future__ import annotations

from dataclasses import asdict

from components.runs import Run
from components.safe import csp_meta, esc, json_for_script
from components.steps import METHOD_TITLES, result_steps, usage_lines

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.4em} .q{font-size:1.15em;background:#f4f6fa;padding:.6em 1em;border-radius:6px}
.tabs button,.nav button{margin:.2em;padding:.4em .9em;border:1px solid #99a;border-radius:5px;background:#fff;cursor:pointer}
.tabs button.on{background:#3b6ea8;color:#fff} .step{border:1px solid #ddd;border-radius:6px;padding:1em;margin-top:.8em}
.sec h3{font-size:1em;margin:.8em 0 .3em} .sec div{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.85em}
details{margin:.4em 0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;font-size:.8em}
.usage{color:#555;font-size:.9em} .answer{font-weight:bold}
"""

_JS = """
(function(){
  var data = JSON.parse(document.getElementById('run-data').textContent);
  var root = document.getElementById('app');
  var state = {m: 0, s: 0};
  function el(tag, text, cls){ var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function draw(){
    root.textContent = '';
    var tabs = el('div', undefined, 'tabs');
    data.methods.forEach(function(m, i){
      var b = el('button', m.title + ': ' + m.answer); if (i === state.m) b.className = 'on';
      b.onclick = function(){ state.m = i; state.s = 0; draw(); }; tabs.appendChild(b);
    });
    root.appendChild(tabs);
    var m = data.methods[state.m];
    var u = el('div', undefined, 'usage'); m.usage.forEach(function(l){ u.appendChild(el('div', l)); }); root.appendChild(u);
    var nav = el('div', undefined, 'nav');
    var prev = el('button', '\\u25c0 Previous'); prev.disabled = state.s === 0; prev.onclick = function(){ state.s--; draw(); };
    var next = el('button', 'Next \\u25b6'); next.disabled = state.s >= m.steps.length - 1; next.onclick = function(){ state.s++; draw(); };
    nav.appendChild(prev); nav.appendChild(next);
    nav.appendChild(el('span', ' Step ' + (state.s + 1) + ' of ' + m.steps.length));
    root.appendChild(nav);
    var st = m.steps[state.s]; var box = el('div', undefined, 'step');
    box.appendChild(el('h2', st.title));
    st.sections.forEach(function(sec){
      var s = el('div', undefined, 'sec'); s.appendChild(el('h3', sec.heading));
      sec.lines.forEach(function(l){ s.appendChild(el('div', l)); }); box.appendChild(s);
    });
    st.calls.forEach(function(c){
      var d = el('details'); d.appendChild(el('summary', 'LLM call: ' + c[0]));
      d.appendChild(el('h4', 'Prompt')); d.appendChild(el('pre', c[1] || '(none)'));
      d.appendChild(el('h4', 'Raw reply')); d.appendChild(el('pre', c[2] || '(empty)'));
      box.appendChild(d);
    });
    root.appendChild(box);
  }
  draw();
})();
"""


def run_payload(run: Run) -> dict:
    return {
        "question": run.question, "gold": list(run.gold), "corpus": run.corpus,
        "methods": [{"method": r.method, "title": METHOD_TITLES.get(r.method, r.method),
                     "answer": r.answer or "(no answer)", "usage": usage_lines(r),
                     "steps": [asdict(s) for s in result_steps(r)]} for r in run.results],
    }


def export_html(run: Run, title: str = "Triplet Lens run") -> str:
    """The whole page as a string. The question and gold answer are also written into the static
    markup (escaped), so the file says what it is even with scripts disabled."""
    payload = json_for_script(run_payload(run))
    gold = f"<p>Gold answer: <b>{esc(' / '.join(run.gold))}</b></p>" if run.gold else ""
    methods = ", ".join(METHOD_TITLES.get(r.method, r.method) for r in run.results)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{csp_meta((_JS,))}
<title>{esc(title)}</title><style>{_CSS}</style></head>
<body><h1>{esc(title)}: {esc(methods)}</h1>
<p class="q">{esc(run.question)}</p>{gold}
<div id="app"><noscript>Enable JavaScript to step through the run.</noscript></div>
<script type="application/json" id="run-data">{payload}</script>
<script>{_JS}</script>
<p class="usage">Exported from Triplet Lens{(' (corpus ' + esc(run.corpus) + ')') if run.corpus else ''}.</p>
</body></html>
"""
