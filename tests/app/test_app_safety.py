"""Document text stays text in every rendering the app builds itself: highlights, graph pages,
the offline HTML export; saved runs reopen unchanged. Uses real T2RAG and KG2RAG traces over a
corpus whose entity and chunk text are an HTML payload."""

from __future__ import annotations

import json
import re

import pytest

from tests._app_helpers import XSS, build_xss_corpus

BREAKOUT = "</script><script>alert(2)</script>"


@pytest.fixture(scope="module")
def xss_run(tmp_path_factory, embedder):
    from engine.methods import build_method
    from engine.reasoners import make_reasoner
    from engine.runs import Run
    from engine.store import Workspace

    root = tmp_path_factory.mktemp("xss_ws")
    build_xss_corpus(root, "xss", embedder=embedder)
    corpus = Workspace(root, embedder=embedder).open("xss")
    reasoner = make_reasoner("", embedder=corpus.embedder)
    q = corpus.questions()[0]
    results = [build_method(m, reasoner).answer(q.question, corpus) for m in ("t2rag", "kg2rag")]
    return corpus, Run(
        question=q.question + " " + BREAKOUT, results=results, gold=list(q.answers), qid=q.qid, corpus=corpus.name
    )


def test_highlight_escapes_text_and_marks_only_the_needles():
    from components.shell.safe import highlight

    out = highlight(f"{XSS} was born in Lisbon.", ["lisbon", "<b>"])
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert out.endswith("<mark>Lisbon</mark>.")
    assert out.count("<mark>") == 1  # "<b>" occurs nowhere, so nothing else is wrapped


def test_json_for_script_cannot_close_the_script_element():
    from components.shell.safe import json_for_script

    data = {"label": BREAKOUT, "amp": "a & b", "ls": "x\u2028y"}
    out = json_for_script(data)
    assert "</script" not in out.lower() and "<" not in out and "&" not in out
    assert json.loads(out) == data


def test_graph_page_keeps_labels_as_data_and_runs_sandboxed():
    from html import unescape

    from components.graphs.graph import GEdge, GNode, graph_html, short_label
    from components.graphs.page import PAGE_SCRIPT as _INIT
    from components.graphs.page import vis_assets as _vis_assets
    from components.shell.safe import sandboxed, script_hash

    html = graph_html(
        [GNode("a", XSS, title=BREAKOUT), GNode("b", "Lisbon")], [GEdge("a", "b", label=f"born in {XSS}")]
    )
    assert "<img" not in html
    # only the three script elements this module writes: vis-network, the data, the bootstrap
    assert html.lower().count("</script>") == 3
    data = json.loads(re.search(r'id="graph-data">(.*?)</script>', html, re.S).group(1))
    # plain text for vis-network's canvas (an HTML escape would be drawn as "&lt;")
    # (a long label is cut short for the drawing; the hover title is kept whole, as data too)
    assert {n["label"] for n in data["nodes"]} == {short_label(XSS), "Lisbon"}
    assert {n["title"] for n in data["nodes"]} == {BREAKOUT, "Lisbon"}
    js, _ = _vis_assets()
    csp = re.search(r'Content-Security-Policy" content="([^"]*)"', html).group(1)
    assert "default-src 'none'" in csp and script_hash(js) in csp and script_hash(_INIT) in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";")[0]
    outer = sandboxed(html, (js, _INIT), 300)
    frames = re.findall(r"<iframe[^>]*>", outer)
    assert len(frames) == 1 and 'sandbox="allow-scripts"' in frames[0] and "allow-same-origin" not in outer
    assert "<script" not in outer.split("srcdoc=", 1)[0]  # the wrapper runs nothing of its own
    # the frame's srcdoc reads back as the page, character for character; no raw line break in it
    srcdoc = re.search(r'srcdoc="([^"]*)"', outer).group(1)
    assert unescape(srcdoc) == html and "\n" not in srcdoc
    # the library's script escaped once and reused: the same frame as escaping the whole page
    assert sandboxed(html, (js, _INIT), 300, fixed=js) == outer
    bare = html.replace(js, "")  # a page without it: escaped whole
    assert sandboxed(bare, (js, _INIT), 300, fixed=js) == sandboxed(bare, (js, _INIT), 300)
    decoy = js[:100] + html  # the script's opening before the script itself
    assert sandboxed(decoy, (js, _INIT), 300, fixed=js) == sandboxed(decoy, (js, _INIT), 300)
    # no external resource: vis-network is inlined (its licence comment may mention URLs)
    assert not re.search(r'(src|href)\s*=\s*["\']?https?:', html)


def test_export_is_self_contained_and_inert(xss_run):
    from components.report.export import export_html

    _, run = xss_run
    html = export_html(run)
    assert "<img" not in html and "alert(2)</script>" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "'unsafe-inline'" not in html.split("script-src", 1)[1].split(";")[0]  # scripts allowed by hash
    assert not re.search(r'(src|href)\s*=\s*["\']?https?:', html)
    payload = json.loads(re.search(r'id="run-data">(.*?)</script>', html, re.S).group(1))
    assert payload["question"].endswith(BREAKOUT)  # the data still says exactly what was asked
    assert [m["method"] for m in payload["methods"]] == ["t2rag", "kg2rag"]
    t2 = payload["methods"][0]["steps"]
    assert t2[0]["title"] == "Decompose the question" and t2[-1]["title"] == "Answer"
    assert any(XSS in line for step in t2 for sec in step["sections"] for line in sec["lines"])
    kg_titles = [s["title"] for s in payload["methods"][1]["steps"]]
    assert kg_titles[0] == "Seed chunks" and "Spanning trees and ranking" in kg_titles


def test_saved_run_reopens_with_the_full_trace(xss_run):
    from engine.runs import list_runs, load_run, save_run

    corpus, run = xss_run
    path = save_run(corpus, run)
    assert path.parent == corpus.path / "runs" and list_runs(corpus)[0] == path
    again = load_run(path)
    assert again.question == run.question and again.gold == run.gold
    t2 = again.by_method("t2rag")
    assert t2.trace.decomposition is not None and len(t2.trace.rounds) == len(run.results[0].trace.rounds)
    assert again.by_method("kg2rag").trace.seeds[0].chunk_id == run.results[1].trace.seeds[0].chunk_id


def test_runs_save_and_load_through_the_engine_session_and_a_demo_session_writes_none(xss_run, tmp_path):
    """Runs live in the engine (engine/runs/__init__.py): the session saves and loads them from Python, and a
    demo visitor's session refuses to write to the server whatever a page draws."""
    from engine.session import ConfigLocked, Session

    corpus, run = xss_run
    path = Session(workspace=tmp_path).save_run(corpus, run)
    before = set(Session.list_runs(corpus))
    assert path in before
    assert Session.load_run(path).by_method("kg2rag").answer == run.results[1].answer
    with pytest.raises(ConfigLocked, match="read-only demo"):
        Session(workspace=tmp_path, demo=True).save_run(corpus, run)
    assert set(Session.list_runs(corpus)) == before


def test_a_single_trace_file_from_the_cli_opens_as_a_run(xss_run, tmp_path):
    from engine.methods import save_result
    from engine.runs import load_run

    _, run = xss_run
    save_result(run.results[0], tmp_path / "t.json")  # what `python -m engine ask --trace-out` writes
    again = load_run(tmp_path / "t.json")
    assert again.kind == "result" and again.results[0].answer == run.results[0].answer


def test_a_file_that_is_not_a_trace_is_refused_readably(tmp_path):
    from engine.runs import run_from_json

    with pytest.raises(ValueError, match="not a JSON file"):
        run_from_json("{oops")
    with pytest.raises(ValueError, match="not a Triplet Lens trace"):
        run_from_json('{"hello": 1}')


def test_the_timeline_and_whatif_diff_keep_trace_text_as_text(xss_run):
    """A trace's strings (an answer, a model name, an uploaded file's step labels) reach plotly's
    labels and hovers and the what-if table escaped: plotly reads a subset of HTML there."""
    import copy
    import json as _json

    from components.compare.timeline_view import figure
    from components.compare.whatif_view import diff_table_html
    from engine.runs.timeline import timeline
    from engine.runs.whatif import diff_runs

    _, run = xss_run
    result = copy.deepcopy(run.results[0])
    result.answer = result.trace.synthesis.answer = XSS
    for c in result.trace.calls():
        c.model = XSS
    fig = _json.dumps(figure(timeline(result)).to_plotly_json(), default=str)
    assert XSS in "".join(s.detail + s.label for s in timeline(result))  # the payload is in the spans...
    assert "<img" not in fig and "&lt;img src=x" in fig  # ...and only escaped in the figure
    other = copy.deepcopy(result)
    other.reasoner = XSS
    table = diff_table_html(diff_runs(run.results[0], other))
    assert "<img" not in table and "&lt;img" in table


def test_the_exports_timeline_drawings_keep_trace_text_as_text(xss_run):
    """The export draws one static SVG timeline per result (no script). A trace's strings (a model
    name, an answer, an error, a step label from an uploaded file) land in its text nodes and
    hover titles as text: the file holds no element or attribute this module did not write."""
    import copy
    import xml.etree.ElementTree as ET

    from components.report.export import export_html
    from engine.runs import Run

    _, run = xss_run
    t2 = copy.deepcopy(run.results[0])
    t2.answer = t2.trace.synthesis.answer = XSS + BREAKOUT
    for c in t2.trace.calls():
        c.model, c.error = XSS, f"failed {BREAKOUT}"
    page = export_html(Run(question=run.question, gold=run.gold, corpus=run.corpus, results=[t2, run.results[1]]))
    assert "<img" not in page and "alert(2)</script>" not in page
    section = page.split('<section class="timelines">', 1)[1].split("</section>", 1)[0]
    svgs = re.findall(r'<svg class="timeline-svg".*?</svg>', section, re.S)
    assert len(svgs) == 2  # one per method
    texts = []
    for svg in svgs:  # well-formed, only the drawing's own elements, no event handler, no link
        root = ET.fromstring(svg)
        tags = {e.tag.split("}", 1)[1] for e in root.iter()}
        assert tags <= {"svg", "g", "title", "text", "rect", "line"}, tags
        attrs = {a for e in root.iter() for a in e.attrib}
        assert not any(a.lower().startswith("on") or "href" in a.lower() for a in attrs), attrs
        texts += [e.text or "" for e in root.iter() if e.text]
    assert any(XSS in t for t in texts)  # the payload model name is drawn, as text
    assert any(BREAKOUT in t for t in texts)  # the error in a bar's hover title, as text
    assert "&lt;img src=x onerror=alert(1)&gt;" in section
