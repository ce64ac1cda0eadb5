"""One real-browser test: `streamlit run app.py` on a free loopback port, headless Debian Chromium
driven over the DevTools protocol. Loads Ask and Compare, runs them, checks visible text and the
console, saves screenshots; then opens a corpus whose entity is an HTML payload and checks that no
script ran and no such element exists anywhere on the page (iframes included). The demo walk also
opens Compare's timelines and runs a what-if on Ask against a loopback OpenAI-compatible provider
(tests/loopback.py), so replies are really replayed."""

from __future__ import annotations

import json
import time

import pytest

from tests._app_helpers import (
    XSS,
    Browser,
    build_small_corpus,
    build_xss_corpus,
    needs_chromium,
    open_browser,
    sample_server,
)

pytestmark = [pytest.mark.timeout(900), needs_chromium()]

# Probes for the payload as a live element, in the page and in every iframe we can enter.
_FIND_PAYLOAD = """(() => {
  const docs = [document];
  for (let i = 0; i < docs.length; i++) for (const f of docs[i].querySelectorAll('iframe')) {
    try { if (f.contentDocument) docs.push(f.contentDocument); } catch (e) {} }
  let n = 0; for (const d of docs) n += d.querySelectorAll('img[src="x"], img[onerror]').length;
  return n;
})()"""
# The graphs: every inner graph page (read from its srcdoc attribute: its own document is
# cross-origin to the app), with the sandbox of its frame and whether the app can reach into it.
_GRAPHS = """(() => {
  const docs = [document], out = [];
  for (let i = 0; i < docs.length; i++) for (const f of docs[i].querySelectorAll('iframe')) {
    let d = null; try { d = f.contentDocument; } catch (e) {}
    if (d) docs.push(d);
    const src = f.getAttribute('srcdoc') || '';
    const g = src.includes('graph-data') && new DOMParser().parseFromString(src, 'text/html').getElementById('graph-data');
    if (g) out.push({data: g.textContent, sandbox: f.getAttribute('sandbox'), reachable: d !== null});
  }
  return out;
})()"""
_GRAPH_DATA = "(" + _GRAPHS + ").map(g => g.data).join('\\n')"


def _assert_graphs_sandboxed(b) -> None:
    graphs = b.eval(_GRAPHS) or []
    assert graphs, "no graph on the page"
    for g in graphs:  # scripts run, but in an opaque origin the app's page cannot be reached from
        assert g["sandbox"] == "allow-scripts" and g["reachable"] is False, g


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    """The sample corpus and `xss`, whose entity is an HTML payload."""
    yield from sample_server(tmp_path_factory, embedder, lambda root: build_xss_corpus(root, "xss", embedder=embedder))


def _provider_reply(messages, body) -> str:
    """A temperature-0 model for the walk's what-if: the same prompt gets the same reply."""
    from engine.reasoners import prompts

    system = str(messages[0].get("content", "")) if messages else ""
    if system == prompts.DECOMPOSE.system:
        return json.dumps({"triplets": [["the question's subject", "is", "?answer"]]})
    if system == prompts.SOLVE.system:
        return json.dumps({"bindings": {}})
    return "a spirit"


@pytest.fixture(scope="module")
def provider():
    """An OpenAI-compatible provider on loopback (tests/loopback.py) the walk points Settings at."""
    from tests.loopback import LoopbackServer

    with LoopbackServer() as srv:
        srv.reply = _provider_reply
        yield srv


@pytest.fixture()
def browser(chromium, tmp_path):
    b = open_browser(chromium, tmp_path / "profile")
    yield b
    b.close()


def _nav(b: Browser, label: str) -> None:
    assert b.click_link(label), f"no navigation link {label!r}"


def _click(b: Browser, label: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if b.click_button(label):
            return
        b.pump(0.3)
    raise AssertionError(f"button {label!r} never became clickable")


def _real_errors(b: Browser) -> list[str]:
    # Chromium reports feature-policy names it does not know as errors of Streamlit's own bundle;
    # they are not failures of this app.
    return [e for e in b.console_errors() if "Unrecognized feature" not in e]


def test_ask_and_compare_in_a_real_browser(server, browser, tmp_path):
    b = browser
    t0 = time.monotonic()
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    first_usable = time.monotonic() - server.started
    print(f"\nstreamlit run -> first usable page: {first_usable:.1f}s (page load {time.monotonic() - t0:.1f}s)")

    _nav(b, "Ask (T2RAG)")
    b.wait_text("Ask with T2RAG")
    _click(b, "Ask")
    b.wait_text("Step 1 of", timeout=180)
    assert "Answer ·" in b.text() and "Gold answer" in b.text()
    _click(b, "Next ▶")
    b.wait_text("Step 2 of")
    assert "Walked propositions" in b.text() or "walked propositions" in b.text()
    b.pump(2)
    b.screenshot(tmp_path / "ask.png")
    print(f"screenshot: {tmp_path / 'ask.png'}")

    _nav(b, "Compare")
    b.wait_text("Methods")
    _click(b, "Compare")
    b.wait_text("Evidence overlap", timeout=180)
    b.wait_text("Step both methods together")
    text = b.text()
    assert "T2RAG" in text and "KG2RAG" in text and "Start: Decompose ↔ Seeds" in text
    b.pump(3)
    b.screenshot(tmp_path / "compare.png")
    print(f"screenshot: {tmp_path / 'compare.png'}")
    _baseline_context_stays_open(b)
    assert (tmp_path / "ask.png").stat().st_size > 10_000 and (tmp_path / "compare.png").stat().st_size > 10_000
    assert not _real_errors(b), _real_errors(b)
    assert not b.dialogs()


_OPEN_CONTEXT = (
    "(() => [...document.querySelectorAll('details')].filter(d => d.open && d.querySelector('summary')"
    ".innerText.includes('Context exactly as sent')).length)()"
)


def _baseline_context_stays_open(b: Browser) -> None:
    """Compare with a baseline: the baseline's "Context exactly as sent", opened under the
    side-by-side, stays open when the step control above it changes what the columns show (a
    plain expander there was redrawn as new, closed, on every step)."""
    b.wait_js(
        "(() => { const i = [...document.querySelectorAll('[data-testid=stMultiSelect] input')][0];"
        " if (!i) return false; i.click(); i.focus(); return document.activeElement === i; })()",
        what="the methods' picker",
    )
    b.send("Input.insertText", {"text": "Semantic RAG"}, session=True)
    box = b.wait_js(
        "(() => { const o = [...document.querySelectorAll('[role=option]')].find(x => "
        "x.innerText.trim() === 'Semantic RAG'); if (!o) return null; const r = o.getBoundingClientRect();"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()",
        what="the Semantic RAG option",
    )
    _click_at(b, *box)
    b.wait_js(
        "document.querySelector('[data-testid=stMultiSelect] [data-tag][aria-label=\"Semantic RAG\"]') !== null",
        what="Semantic RAG chosen beside T2RAG and KG2RAG",
    )
    _click(b, "Compare")
    b.wait_js(
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes('Baseline: Semantic RAG'))",
        timeout=180,
        what="the baseline's expander",
    )
    assert _open_expanders(b, "Baseline: Semantic RAG") == 1
    b.wait_js(
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes('Context exactly as sent'))",
        what="the baseline's context",
    )
    assert _open_expanders(b, "Context exactly as sent") == 1
    b.wait_js(_OPEN_CONTEXT + " === 1", what="the context opened")
    for step in (2, 3):
        _click(b, "Next ▶")
        b.wait_text(f"Step {step} of")
        b.pump(1.5)
        assert b.eval(_OPEN_CONTEXT) == 1, f"the baseline's context closed at step {step}"


def _wait_graph_data(b: Browser, needle: str, timeout: float = 60) -> str:
    """The graph frames' data once it holds `needle` (a frame draws late on a busy machine)."""
    end = time.monotonic() + timeout
    data = ""
    while time.monotonic() < end:
        data = b.eval(_GRAPH_DATA) or ""
        if needle in data:
            return data
        b.pump(0.5)
    raise AssertionError(f"{needle!r} not in the graph data: {data[:300]!r}")


def _assert_inert(b: Browser, where: str) -> None:
    assert b.eval(_FIND_PAYLOAD) == 0, f"a live payload element on {where}"
    assert not b.dialogs(), f"a script ran on {where}: {b.dialogs()}"


def test_html_in_documents_and_entities_stays_inert(server, browser, tmp_path):
    b = browser
    b.navigate(server.url + "/?corpus=xss")
    b.wait_text("Corpus: xss", timeout=120)
    b.pump(1)
    assert b.click_tab("Graph")
    b.wait_text("(cap 150 nodes)", timeout=60)
    _wait_graph_data(b, "\\u003cimg src=x onerror=alert(1)\\u003e")  # plain text, JSON-escaped
    _assert_graphs_sandboxed(b)
    _assert_inert(b, "the corpus tables and graph")

    _nav(b, "Ask (T2RAG)")
    b.wait_text("Ask with T2RAG")
    _click(b, "Ask")
    b.wait_text("Step 1 of", timeout=180)
    _assert_inert(b, "T2RAG decomposition")
    for step in range(4):  # every round: state lists, bindings, highlighted chunks, dependency graph
        if not b.click_button("Next ▶"):
            break
        b.pump(2)
        _assert_inert(b, f"T2RAG step {step + 2}")
    assert XSS in b.text()  # shown, as text

    _nav(b, "KG2RAG")
    b.wait_text("Knowledge-graph-guided")
    _click(b, "Ask")
    b.wait_text("Step 1 of", timeout=180)
    for step in range(5):  # hops, the weighted graph (pyvis), ranking, context, answer
        if not b.click_button("Next ▶"):
            break
        b.pump(2)
        if "Weighted graph:" in b.text():
            # the label goes in as plain text (drawn on canvas), inside JSON whose & < > are escaped
            _wait_graph_data(b, "\\u003cimg src=x onerror=alert(1)\\u003e")
            b.screenshot(tmp_path / "xss_graph.png")
            print(f"screenshot: {tmp_path / 'xss_graph.png'}")
        _assert_inert(b, f"KG2RAG step {step + 2}")
    assert not _real_errors(b), _real_errors(b)


def test_the_offline_html_export_steps_through_a_comparison(chromium, tmp_path, embedder):
    from components.report.export import export_html
    from engine.methods import build_method
    from engine.reasoners import make_reasoner
    from engine.runs import Run
    from engine.store import Workspace

    build_xss_corpus(tmp_path / "ws", "xss", embedder=embedder)
    corpus = Workspace(tmp_path / "ws", embedder=embedder).open("xss")
    q = corpus.questions()[0]
    reasoner = make_reasoner("", embedder=corpus.embedder)
    run = Run(
        question=q.question,
        gold=list(q.answers),
        corpus="xss",
        results=[build_method(m, reasoner).answer(q.question, corpus) for m in ("t2rag", "kg2rag")],
    )
    page = tmp_path / "export.html"
    page.write_text(export_html(run, corpus=corpus), encoding="utf-8")

    b = Browser(chromium, tmp_path / "profile")
    try:
        b.navigate(page.as_uri())
        b.wait_text("Step 1 of")
        assert "Decompose the question" in b.text()
        while b.click_button("Next ▶"):
            b.pump(0.2)
        assert "Answer" in b.text() and "Lisbon" in b.text()
        assert b.eval("document.querySelectorAll('.graph svg circle').length") == 0  # the answer step has none
        assert b.eval(
            "[...document.querySelectorAll('.tabs button')].find(x => x.innerText.startsWith('KG2RAG: '))"
            ".click() || true"
        )
        b.wait_text("Seed chunks")
        assert XSS in b.text()  # drawn as text
        while "Spanning trees" not in b.text() and b.click_button("Next ▶"):
            b.pump(0.2)
        # the tree graph is in the offline page: a static SVG with a legend, labels as text
        assert b.eval("document.querySelectorAll('.graph svg circle').length") > 0
        assert "seed entity" in b.eval("document.querySelector('.graph .legend').textContent")
        labels = b.eval("[...document.querySelectorAll('.graph svg text')].map(t => t.textContent).join('|')")
        assert "&quot;" not in labels and "&#x27;" not in labels and "&lt;" not in labels
        from components.graphs.graph import short_label

        assert short_label(XSS) in labels.split("|")  # the payload entity is drawn, as text (cut short)
        # each method's timeline: a static SVG under the steps, its bars and labels drawn offline
        tl = b.eval("""(() => [...document.querySelectorAll('.timelines figure')].map(f => ({
          method: f.dataset.method, bars: f.querySelectorAll('svg rect').length,
          drawn: f.querySelector('svg').getBoundingClientRect().height,
          labels: [...f.querySelectorAll('svg text')].map(t => t.textContent).join('|')})))()""")
        assert [t["method"] for t in tl] == ["t2rag", "kg2rag"], tl
        assert all(t["bars"] >= 3 and t["drawn"] > 100 for t in tl), tl
        assert "decompose" in tl[0]["labels"] and "generate" in tl[1]["labels"]
        assert all("&lt;" not in t["labels"] and "&quot;" not in t["labels"] for t in tl)
        b.screenshot(tmp_path / "export.png")
        print(f"screenshot: {tmp_path / 'export.png'}")
        assert b.eval(_FIND_PAYLOAD) == 0 and not b.dialogs()
        assert not _real_errors(b), _real_errors(b)
    finally:
        b.close()


def test_the_offline_export_opens_a_chunk_with_its_span_from_a_citation_and_a_graph_node(chromium, tmp_path, embedder):
    """The export opened as a file (no server): a citation of the evidence chain and a node of the
    tree graph each open their chunk under the step, with the sentence they point at marked."""
    from components.report.export import export_html
    from engine.methods import build_method
    from engine.reasoners import make_reasoner
    from engine.runs import Run
    from engine.store import Workspace

    build_small_corpus(tmp_path / "ws", "small", questions=1, embedder=embedder)
    corpus = Workspace(tmp_path / "ws", embedder=embedder).open("small")
    q = corpus.questions()[0]
    reasoner = make_reasoner("", embedder=corpus.embedder)
    run = Run(
        question=q.question,
        gold=list(q.answers),
        corpus="small",
        results=[build_method(m, reasoner).answer(q.question, corpus) for m in ("t2rag", "kg2rag")],
    )
    page = tmp_path / "export.html"
    page.write_text(export_html(run, corpus=corpus), encoding="utf-8")
    view = """(() => { const v = document.getElementById('chunk-view'); if (!v) return null;
      const m = v.querySelector('mark'); return {name: v.querySelector('h3').textContent,
      mark: m ? m.textContent : '', text: v.querySelector('.chunk-text').textContent,
      visible: v.getBoundingClientRect().top < innerHeight && v.getBoundingClientRect().bottom > 0}; })()"""

    b = Browser(chromium, tmp_path / "profile")
    try:
        b.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1440, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        b.navigate(page.as_uri())
        b.wait_text("Step 1 of")
        # KG2RAG: the evidence chain cites the selected trees' chunks
        assert b.eval(
            "[...document.querySelectorAll('.tabs button')].find(x => x.innerText.startsWith('KG2RAG: '))"
            ".click() || true"
        )
        b.wait_text("Evidence chain")
        cite = b.eval(
            "(() => { const c = document.querySelector('.chain button.cite'); c.click(); return c.textContent; })()"
        )
        b.pump(0.3)
        got = b.eval(view)
        assert got and got["name"] == cite and got["visible"]
        assert got["mark"] and got["mark"] in got["text"]  # the sentence the tree's triplets come from
        # the tree graph: a real click on an entity opens a chunk stating it, the sentence marked
        while "Spanning trees" not in b.text() and b.click_button("Next ▶"):
            b.pump(0.2)
        assert b.eval("document.getElementById('chunk-view')") is None  # a new step starts without one
        node = b.eval("""(() => { const c = document.querySelector('.graph svg circle.has-chunk');
          c.scrollIntoView({block: 'center'}); const r = c.getBoundingClientRect();
          return {x: r.left + r.width / 2, y: r.top + r.height / 2, label: c.querySelector('title').textContent}; })()""")
        b.pump(0.3)
        node = {
            **node,
            **b.eval("""(() => { const r = document.querySelector('.graph svg circle.has-chunk')
          .getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"""),
        }
        _click_at(b, node["x"], node["y"])
        b.pump(0.3)
        got = b.eval(view)
        assert got, "clicking the node opened no chunk"
        entity = node["label"].split(":")[0].strip().lower()
        assert got["mark"] and entity in got["mark"].lower()  # the marked sentence names the entity
        assert b.eval("document.querySelectorAll('#chunk-view mark').length") == 1
        b.screenshot(tmp_path / "export_chunk.png")
        assert not _real_errors(b), _real_errors(b)
    finally:
        b.close()


# --- the demo walk: landing card -> Compare -> both methods stepped in sync -> click a graph node ---

_ANSWER_BOXES = (
    """(() => [...document.querySelectorAll('.tl-answer')].map(e => ({cls: e.className, text: e.innerText})))()"""
)
# The wrapper frame of every graph (same origin as the app) and where its sandboxed page sits.
_GRAPH_FRAMES = """(() => [...document.querySelectorAll('iframe')].map(f => {
  let d = null; try { d = f.contentDocument; } catch (e) {}
  const inner = d && d.querySelector('iframe[sandbox]');
  if (!inner) return null;
  const a = f.getBoundingClientRect(), b = inner.getBoundingClientRect();
  return {x: a.left + b.left, y: a.top + b.top, w: b.width, h: b.height, srcdoc: inner.getAttribute('srcdoc')};
}).filter(Boolean))()"""


def _in_graph_frames(b: Browser, expression: str) -> list:
    """`expression` evaluated in every graph page. The pages run in sandboxed frames (an opaque
    origin, which Chromium puts in a process of its own), so they are reached as DevTools
    targets attached to the page, not through the app's DOM."""
    b.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}, session=True)
    b.pump(0.5)
    sessions = {
        e["params"]["sessionId"]
        for e in b.events
        if e["method"] == "Target.attachedToTarget" and e["params"]["targetInfo"]["type"] == "iframe"
    }
    sessions -= {e["params"]["sessionId"] for e in b.events if e["method"] == "Target.detachedFromTarget"}
    out, page = [], b.session
    for sid in sessions:
        b.session = sid  # Browser.send(session=True) talks to b.session
        try:
            res = b.send(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True, timeout=10
            )
        except (RuntimeError, TimeoutError):
            continue
        finally:
            b.session = page
        value = res.get("result", {}).get("value")
        if value is not None:
            out.append(value)
    return out


_PROBE = """(() => { const g = document.getElementById('graph-data'); if (!g) return null;
  return {probe: JSON.parse(document.body.getAttribute('data-probe') || 'null'),
          legend: [...document.querySelectorAll('#legend span')].map(s => s.textContent),
          detail: document.getElementById('detail').textContent, font: document.body.getAttribute('data-font')}; })()"""


def _show_each_graph(b: Browser) -> None:
    """Scroll each graph into view in turn: a frame off screen is not painted (Chromium throttles
    it), and the graph fits itself when it is first drawn."""
    n = b.eval("document.querySelectorAll('iframe').length") or 0
    for i in range(n):
        b.eval(f"document.querySelectorAll('iframe')[{i}].scrollIntoView({{block: 'center'}})")
        b.pump(1.0)


def _click_at(b: Browser, x: float, y: float) -> None:
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        b.send(
            "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}, session=True
        )
        b.pump(0.1)


def _next_step(b: Browser, timeout: float = 60) -> None:
    """Press "Next ▶" once and wait for the step caption to change (a fixed pause pressed again
    while a slow rerun was still drawing, and a step could be skipped on a busy machine)."""
    now = "(document.body.innerText.match(/Step \\d+ of \\d+/) || [''])[0]"
    before = b.eval(now)
    _click(b, "Next ▶")
    b.wait_js(now + " !== " + json.dumps(before), timeout=timeout, what="the next step")
    b.pump(0.5)


# The plotly timelines on the page: their row labels (a tree) and how many bars plotly drew.
_TIMELINES = """(() => [...document.querySelectorAll('.js-plotly-plot')].map(p => ({
  x: ((p.querySelector('.xtitle') || {}).textContent || ''),
  rows: [...p.querySelectorAll('.ytick text')].map(t => t.textContent.replace(/\u00a0/g, ' ').trim()),
  bars: p.querySelectorAll('g.trace.bars g.point path').length,
  texts: [...p.querySelectorAll('g.trace.bars text')].map(t => t.textContent),
  visible: p.getBoundingClientRect().height > 50
})).filter(p => p.x.startsWith('seconds into the run')))()"""


def _open_expanders(b: Browser, needle: str) -> int:
    return b.eval(
        "(() => { const s = [...document.querySelectorAll('details')].filter(d => !d.open && "
        "d.querySelector('summary').innerText.includes(" + json.dumps(needle) + "));"
        " s.forEach(d => d.querySelector('summary').click()); return s.length; })()"
    )


def _type_into(b: Browser, label_start: str, text: str) -> None:
    """Type into the text input whose label starts with `label_start`, as a user would."""
    b.wait_js(
        "(() => { const i = [...document.querySelectorAll('input')].find(x => (x.getAttribute("
        "'aria-label') || '').startsWith(" + json.dumps(label_start) + ")); if (!i) return false;"
        " i.focus(); i.select(); return document.activeElement === i; })()",
        timeout=60,
        what=f"an input labelled {label_start!r}",
    )  # widgets load after the page's skeleton
    b.send("Input.insertText", {"text": text}, session=True)
    b.pump(0.2)


def _check_compare_timelines(b: Browser) -> None:
    """The timeline of each Compare column, opened: plotly drew a bar for every row of the tree."""
    b.wait_js(
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes('Timelines'))",
        what="the timelines expander",
    )
    _open_expanders(b, "Timelines")
    tls = b.wait_js(
        "(() => { const t = " + _TIMELINES + "; return t.length >= 2 && t.every(x => x.bars > 0)"
        " && t.every(x => x.visible) ? t : null; })()",
        what="two drawn timelines",
    )
    heads = [t["rows"][0] for t in tls]
    assert heads[:2] == ["T2RAG", "KG2RAG"], heads
    # level once both have settled (a caption above one may still be re-flowing)
    boxes = b.wait_js(
        "(() => { const r = [...document.querySelectorAll('.js-plotly-plot')].map(p => "
        "p.getBoundingClientRect()).filter(r => r.height > 50).map(r => [r.left, r.top]);"
        " return r.length >= 2 && Math.abs(r[0][1] - r[1][1]) < 5 ? r : null; })()",
        timeout=20,
        what="two level timelines",
    )
    assert len(boxes) >= 2 and boxes[0][0] < boxes[1][0] and abs(boxes[0][1] - boxes[1][1]) < 5, boxes  # level
    for t in tls:
        assert t["bars"] == len(t["rows"]) >= 4, t  # one bar per span: the run, its steps, their calls
        assert any(r.startswith("├ ") for r in t["rows"]), t["rows"]  # the steps drawn as a tree
    assert "├ round 1" in tls[0]["rows"] and "├ seed" in tls[1]["rows"]


_OPEN_CALLS = (
    "(() => [...document.querySelectorAll('details')].filter(d => d.open && d.querySelector('summary')"
    ".innerText.includes('🔎 solve')).length)()"
)


def _check_call_stays_open_while_the_other_column_steps(b: Browser) -> None:
    """On Compare, T2RAG stays on its last round while KG2RAG walks its later stages: an LLM call
    opened in the T2RAG column stays open across those steps (a plain expander snapped shut when
    the page's content before it changed)."""
    for _ in range(8):
        if b.eval(_OPEN_CALLS) == 0 and _open_expanders(b, "🔎 solve"):
            break
        _click(b, "◀ Previous")
        b.pump(1.5)
    b.wait_js(_OPEN_CALLS + " >= 1", what="the solve call opened")
    before = b.eval("document.body.innerText.match(/Step (\\d+) of/)[1]")
    _click(b, "Next ▶")
    b.wait_js(
        "document.body.innerText.match(/Step (\\d+) of/)[1] !== " + json.dumps(before), what="the next joint step"
    )
    b.pump(2)
    assert "🔎 solve" in b.text(), "T2RAG left its round"
    assert b.eval(_OPEN_CALLS) >= 1, "the opened LLM call closed when the other column stepped"


def _whatif_on_ask_with_a_model(b: Browser, provider) -> None:
    """Point the session at a model (the loopback provider), ask on the Ask page, change k in the
    What if… expander and re-run: the diff shows replies replayed from the first run, and the
    re-run's timeline draws them as replayed, $0."""
    _nav(b, "Settings")
    b.wait_text("Method settings")
    _type_into(b, "Model", "openai/gpt-4o-mini")
    _type_into(b, "API base", provider.base_url)
    _type_into(b, "API key", "sk-test")
    _click(b, "Apply")
    b.wait_text("In use: openai/gpt-4o-mini", timeout=60)
    assert "answered" in b.text() and len(provider.chat_requests()) >= 1  # the check reached the provider
    _nav(b, "Ask (T2RAG)")
    b.wait_text("Ask with T2RAG")
    asked = len(provider.chat_requests())
    _click(b, "Ask")
    b.wait_text("openai/gpt-4o-mini · ", timeout=180)  # the usage line of the model's run
    assert len(provider.chat_requests()) > asked  # the model answered this question
    b.wait_js(
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes('What if'))",
        what="the What if… expander",
    )
    assert _open_expanders(b, "What if") == 1
    step_down = (
        "(() => { const i = [...document.querySelectorAll('input')].find(x => x.getAttribute('aria-label')"
        " === 'Chunks retrieved (k)'); if (!i) return null; const box = i.closest("
        "'[data-testid=stNumberInput]'); return box; })()"
    )
    b.wait_js(step_down + " !== null", what="the k input")
    b.eval(
        step_down.replace(
            "return box;", "box.querySelector('[data-testid=stNumberInputStepDown]').click(); return true;"
        )
    )
    b.wait_js(
        "(() => { const i = [...document.querySelectorAll('input')].find(x => x.getAttribute('aria-label')"
        " === 'Chunks retrieved (k)'); return i && i.value === '4'; })()",
        what="k = 4",
    )
    _click(b, "🔁 Re-run")
    marked = b.wait_js(
        "(() => { const r = document.querySelector('.tl-whatif-diff .tl-replayed');"
        " return r && r.getBoundingClientRect().height > 0 ? r.textContent : null; })()",
        timeout=180,
        what="the diff with its replayed calls, in view",
    )
    assert int(marked.split()[0]) >= 1 and marked.endswith("replayed"), marked  # the decomposition at least
    diff = b.eval("document.querySelector('.tl-whatif-diff').innerText")
    assert "→ 4" in diff and "new" in diff, diff
    # the re-run's timeline draws the replayed calls as such (grey, "replayed, $0"); the first run's none
    tls = b.wait_js(
        "(() => { const t = " + _TIMELINES + "; return t.some(x => x.texts.some(y => "
        "y.startsWith('replayed, $0'))) ? t : null; })()",
        what="a timeline with replayed calls",
    )
    replayed = [t for t in tls if any(x.startswith("replayed, $0") for x in t["texts"])]
    assert len(replayed) == 1 and len(tls) >= 3, tls
    # stepping the trace above redraws the page: the opened what-if stays open, its diff in view
    _click(b, "Next ▶")
    b.wait_text("Step 2 of")
    b.wait_js(
        "(() => { const r = document.querySelector('.tl-whatif-diff .tl-replayed');"
        " return r && r.getBoundingClientRect().height > 0; })()",
        what="the what-if still open after Next",
    )


def _adopt_the_rerun(b: Browser) -> None:
    """The what-if's re-run becomes the Ask page's result: the stepper starts again on its trace,
    whose replayed calls say so."""
    _click(b, "▶ Use the re-run as this page's result and step through it")
    b.wait_text("A what-if re-run.", timeout=60)
    text = b.text()
    assert "replayed from an earlier run (free)" in text and "Step 1 of" in text, text[:2000]
    assert "decompose · openai/gpt-4o-mini" in text and "· replayed from an earlier run" in text
    assert b.eval("document.querySelector('.tl-whatif-diff') === null")  # the diff was of the first run
    _click(b, "Next ▶")
    b.wait_text("Step 2 of")


def test_demo_walk_landing_compare_in_sync_and_a_graph_click(server, browser, provider, tmp_path):
    b = browser
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1440, "height": 1800, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    b.navigate(server.url + "/?corpus=hotpotqa-sample")
    b.wait_text("Start here", timeout=120)
    _click(b, "Compare the two methods on this question")
    b.wait_text("Step both methods together", timeout=240)
    # every answer box says its verdict, and its colour class is that verdict
    boxes = b.eval(_ANSWER_BOXES)
    assert len(boxes) >= 2, boxes
    for box in boxes:
        kind = next(c for c in box["cls"].split() if c.startswith("tl-answer-")).removeprefix("tl-answer-")
        word = {
            "correct": "correct",
            "partial": "partly",
            "wrong": "wrong",
            "error": "no answer",
            "unknown": "no gold",
        }[kind]
        assert word in box["text"], box
    # one control steps both columns until KG2RAG shows its weighted graph
    for _ in range(8):
        if "Weighted graph" in b.text():
            break
        _next_step(b)
    text = b.text()
    assert "Weighted graph" in text and "T2RAG" in text and "KG2RAG" in text
    assert "⇄" in text  # chunks used by both methods are marked
    b.pump(3)
    _show_each_graph(b)
    srcdocs = [f["srcdoc"] for f in b.eval(_GRAPH_FRAMES)]
    assert srcdocs and not any(
        "&quot;" in s.split('id="graph-data">', 1)[1] for s in srcdocs if 'id="graph-data">' in s
    )
    end = time.monotonic() + 60  # every graph reports its probe once drawn (slow on a busy machine)
    probes = [p for p in _in_graph_frames(b, _PROBE) if p]
    while time.monotonic() < end and not (probes and all(p["probe"] for p in probes)):
        b.pump(1)
        probes = [p for p in _in_graph_frames(b, _PROBE) if p]
    kg = [p for p in probes if any("seed entity" in x for x in p["legend"])]
    assert kg, probes
    for p in probes:  # fitted: every node's box inside its canvas; labels at a readable size
        assert p["probe"] and p["probe"]["total"] > 0 and p["probe"]["outside"] == 0, p["probe"]
        assert p["probe"]["screenFont"] >= 11.5, p["probe"]
    assert any(x.startswith("Tree 1") for x in kg[0]["legend"]) and any(
        "pruned" in x or "Tree" in x for x in kg[0]["legend"]
    )
    # clicking a node writes its triplets and source chunk into the panel under the graph
    b.eval(
        "[...document.querySelectorAll('iframe')].find(f => { try { const i = f.contentDocument"
        ".querySelector('iframe[sandbox]'); return i && i.getAttribute('srcdoc').includes('seed entity'); }"
        " catch (e) { return false; } }).scrollIntoView({block: 'center'})"
    )
    b.pump(1.5)
    kg = [p for p in _in_graph_frames(b, _PROBE) if p and any("seed entity" in x for x in p["legend"])]
    frame = next(f for f in b.eval(_GRAPH_FRAMES) if "seed entity" in f["srcdoc"])
    fx, fy = kg[0]["probe"]["first"]
    _click_at(b, frame["x"] + fx, frame["y"] + fy)
    b.pump(1)
    detail = next(
        p["detail"] for p in _in_graph_frames(b, _PROBE) if p and any("seed entity" in x for x in p["legend"])
    )
    assert "Triplets (source chunk)" in detail and "chunk" in detail, detail
    b.screenshot(tmp_path / "compare_sync.png")
    print(f"screenshot: {tmp_path / 'compare_sync.png'}")
    # a phone: the graphs refit and keep labels readable
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True},
        session=True,
    )
    b.pump(3)
    _show_each_graph(b)
    for p in [p for p in _in_graph_frames(b, _PROBE) if p]:
        assert p["probe"]["outside"] == 0 and p["probe"]["screenFont"] >= 11.5, p["probe"]
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1440, "height": 1800, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    # each column's timeline, drawn by plotly
    _check_compare_timelines(b)
    b.screenshot(tmp_path / "compare_timelines.png")
    _check_call_stays_open_while_the_other_column_steps(b)
    # a what-if on Ask with a model: replies replayed from the first run
    _whatif_on_ask_with_a_model(b, provider)
    b.eval("document.querySelector('.tl-whatif-diff').scrollIntoView({block: 'start'})")
    b.pump(1)
    b.screenshot(tmp_path / "ask_whatif.png")
    print(f"screenshots: {tmp_path / 'compare_timelines.png'}, {tmp_path / 'ask_whatif.png'}")
    _adopt_the_rerun(b)
    assert not _real_errors(b), _real_errors(b)
    assert not b.dialogs()


_OPEN_DETAILS = (
    "[...document.querySelectorAll('details')].filter(d => d.open)"
    ".map(d => d.querySelector('summary').innerText.split('\\n').pop())"
)


def test_an_opened_settings_expander_stays_open_when_a_message_appears_above_it(server, browser):
    """Settings: the user opens a baseline's settings, then applies a reasoner; the message this
    writes above the method settings used to redraw every expander under it as new, closed."""
    b = browser
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    _nav(b, "Settings")
    b.wait_text("Method settings")
    b.wait_js(
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes('Semantic RAG'))",
        what="the Semantic RAG settings",
    )
    assert _open_expanders(b, "Semantic RAG") == 1
    b.wait_js("(" + _OPEN_DETAILS + ").some(x => x.startsWith('Semantic RAG'))", what="Semantic RAG opened")
    _click(b, "Use the offline reasoner")
    b.wait_text("Reasoner: ", timeout=60)
    b.pump(2)
    shown = b.eval(_OPEN_DETAILS)
    assert any(x.startswith("Semantic RAG") for x in shown), shown
    assert any(x.startswith("T2RAG") for x in shown) and any(x.startswith("KG2RAG") for x in shown), shown


# --- the stakeholder demo path: landing -> Start here -> Compare stepped -> presentation -> export
# -> Evaluate with its defaults -> Settings, at a laptop's and a phone's size ---

_ERROR_BOXES = """(() => [...document.querySelectorAll('[data-testid="stException"], [data-testid="stAlertContentError"]')]
  .map(e => e.innerText.slice(0, 300)))()"""
_TOP_OF = """(sel => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().top : null; })"""
_MAIN_BOX = """(() => { const m = document.querySelector('[data-testid="stMainBlockContainer"]');
  const r = m.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.width)]; })()"""


def _clean(b: Browser, where: str) -> None:
    """No error box, no traceback on the page: what a live audience would see."""
    boxes = b.eval(_ERROR_BOXES)
    assert not boxes, f"{where}: {boxes}"
    assert "Traceback" not in b.text(), where


def _step_to_the_end(b: Browser, where: str, limit: int = 12, on_step=None) -> int:
    """Press Next ▶ until it is disabled, checking the page after each step (and handing it to
    `on_step`); the steps taken."""
    n = 0
    for n in range(1, limit + 1):
        if on_step is not None:
            on_step(b)
        before = b.eval("document.body.innerText.match(/Step (\\d+) of (\\d+)/)?.[0] || ''")
        if not b.click_button("Next ▶"):
            return n - 1
        b.wait_js(
            "(document.body.innerText.match(/Step (\\d+) of (\\d+)/)?.[0] || '') !== " + json.dumps(before),
            timeout=60,
            what=f"{where}: the step after {before!r}",
        )
        b.pump(1)
        _clean(b, f"{where}, step {n + 1}")
    return n


def _graph_probes(b: Browser) -> list[dict]:
    _show_each_graph(b)
    end = time.monotonic() + 60
    probes = [p for p in _in_graph_frames(b, _PROBE) if p]
    while time.monotonic() < end and not (probes and all(p["probe"] for p in probes)):
        b.pump(1)
        probes = [p for p in _in_graph_frames(b, _PROBE) if p]
    return probes


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)], ids=["laptop", "phone"])
def test_the_demo_path_works_the_first_time(server, browser, tmp_path, width, height):
    b = browser
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        session=True,
    )
    b.navigate(server.url + "/?corpus=hotpotqa-sample")
    b.wait_text("Start here", timeout=120)
    b.wait_text("Triplet Lens", timeout=30)
    assert "T2RAG" in b.text() and "KG2RAG" in b.text()
    assert b.eval(_TOP_OF + "('.tl-landing')") < height  # the product says what it is on the first screen
    _clean(b, "landing")
    b.screenshot(tmp_path / f"landing_{width}.png")

    _click(b, "Compare the two methods on this question")
    b.wait_js("document.querySelector('.tl-verdict-final') !== null", timeout=240, what="the verdict")
    b.pump(2)
    _clean(b, "Compare")
    if width >= 1000:  # the result on the first screen: the verdict strip starts above the fold
        b.eval("window.scrollTo(0, 0); document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
        b.pump(0.5)
        assert b.eval(_TOP_OF + "('.tl-verdict-final')") < height - 80
    url = b.eval("location.href")
    assert "q=" in url and "methods=t2rag%2Ckg2rag" in url.replace(",", "%2C"), url
    kg: list[dict] = []

    def probe_the_weighted_graph(b: Browser) -> None:
        if not kg and "Weighted graph" in b.text():
            kg.extend(p for p in _graph_probes(b) if any("seed entity" in x for x in p["legend"]))
            b.screenshot(tmp_path / f"compare_graph_{width}.png")

    steps = _step_to_the_end(b, "Compare", on_step=probe_the_weighted_graph)
    assert steps >= 3
    assert "step=" in b.eval("location.href")  # the step is in the link too
    assert kg, "the KG2RAG weighted graph on one of Compare's steps"
    for p in kg:  # readable: labels >= 12 px on screen, none on top of another, the frame filled
        probe = p["probe"]
        print(f"\n{width}px KG2RAG graph probe: {probe}")
        assert round(probe["screenFont"], 1) >= 12 and probe["overlaps"] == 0, probe
        assert probe["capped"] or probe["fill"] >= 0.75, probe

    b.eval("window.scrollTo(0, 0)")
    _click(b, "🎬 Presentation mode")
    b.wait_text("Exit presentation", timeout=60)
    b.pump(2)
    first = b.eval(_MAIN_BOX)
    boxes = [first]
    n = 0
    while n < 30 and b.click_button("Next ▶"):
        n += 1
        b.pump(2.5)
        _clean(b, f"presentation step {n + 1}")
        boxes.append(b.eval(_MAIN_BOX))
    assert n >= 4 and "Side by side" in b.text()
    assert len(set(map(tuple, boxes))) == 1, boxes  # the page never shifts between steps
    assert b.eval("document.querySelector('.tl-verdict-final') !== null")
    _click(b, "✖ Exit presentation")
    b.wait_text("Step both methods together", timeout=60)

    # the export: the offline HTML file downloads and carries the verdict
    b.send("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}, session=True)
    _click(b, "⬇ Offline HTML")
    end = time.monotonic() + 60
    while time.monotonic() < end and not list(tmp_path.glob("*.html")):
        b.pump(0.5)
    page = next(tmp_path.glob("*.html")).read_text(encoding="utf-8")
    assert 'class="tl-verdict tl-verdict-final"' in page and "<script>alert" not in page
    assert not _real_errors(b), _real_errors(b)
    assert not b.dialogs()


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)], ids=["laptop", "phone"])
def test_the_demo_path_evaluate_and_settings_with_their_defaults(server, browser, width, height):
    """The walk's last pages, as they open: Evaluate's main button with every default, then Settings."""
    b = browser
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        session=True,
    )
    b.navigate(server.url + "/?corpus=hotpotqa-sample")
    b.wait_text("Start here", timeout=120)
    _nav(b, "Evaluate")
    b.wait_text("Run evaluation", timeout=120)
    _click(b, "Run evaluation")  # with every default as the page opens
    b.wait_js(
        'document.querySelector(\'[data-testid="stDataFrame"], [data-testid="stAlertContentError"], '
        '[data-testid="stException"]\') !== null',
        timeout=300,
        what="the evaluation's table or an error",
    )
    b.pump(2)
    _clean(b, "Evaluate with its defaults")

    _nav(b, "Settings")
    b.wait_text("Method settings", timeout=60)
    _clean(b, "Settings")
    assert not _real_errors(b), _real_errors(b)
    assert not b.dialogs()
