"""Issue 11 in a real browser (headless Chromium over DevTools, as tests/browser/test_browser.py).

1. The graph frame: drawn in an iframe sandboxed with `allow-scripts` only, on an opaque origin,
   under a CSP that admits only its own scripts by hash. A page with a deliberate escaping slip
   (`<script>` and `onerror=` injected into the drawing) runs neither; the graph still draws.
2. `streamlit run` with a canary key in its environment: a link names the visitor's endpoint in
   its query parameters, then a question is asked; their listener gets nothing. The graph on the
   Corpora page sits in the sandboxed frame, of opaque origin, and is drawn.
3. The same endpoint typed into Settings: refused at Apply, and the engine refuses to send the
   operator's key there when asked anyway (AppTest covers the control run that does receive it:
   tests/security/test_security_endpoints.py).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from tests._app_helpers import Browser, StreamlitServer, build_small_corpus, needs_chromium, require_chromium
from tests.loopback import LoopbackServer

pytestmark = [pytest.mark.timeout(900), needs_chromium()]
CANARY = f"sk-canary-{uuid.uuid4().hex}"
MODEL = "openai/gpt-4o-mini"
_SLIP = '<img src=x onerror="window.slipped_img=1"><script>window.slipped_script=1</script>'
_PROBE = (
    "[window.origin, document.querySelectorAll('canvas').length, typeof vis, "
    "typeof window.slipped_img, typeof window.slipped_script]"
)


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


def open_browser(chromium: str, profile: Path) -> Browser:
    b = Browser(chromium, profile)
    # sandboxed frames of opaque origin run out of process: attach to them to look inside
    b.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}, session=True)
    return b


def frame_probes(b: Browser, url_part: str = "about:srcdoc") -> list:
    """Evaluate `_PROBE` inside every attached child frame whose URL contains `url_part`."""
    out = []
    for e in list(b.events):
        if e["method"] != "Target.attachedToTarget":
            continue
        info = e["params"]["targetInfo"]
        if info["type"] != "iframe":
            continue
        page_session, b.session = b.session, e["params"]["sessionId"]
        try:
            res = b.send("Runtime.evaluate", {"expression": _PROBE, "returnByValue": True}, session=True, timeout=10)
            out.append(res.get("result", {}).get("value"))
        except Exception:  # noqa: BLE001 - a frame that went away with a rerun
            pass
        finally:
            b.session = page_session
    return [p for p in out if p]


@pytest.mark.parametrize("with_csp", [True, False], ids=["csp", "control-without-csp"])
def test_a_slip_in_the_graph_page_runs_no_script(chromium, tmp_path, with_csp):
    from components.graphs.graph import GEdge, GNode, graph_html
    from components.graphs.page import PAGE_SCRIPT as _INIT
    from components.graphs.page import vis_assets as _vis_assets
    from components.shell.safe import sandboxed

    page = graph_html([GNode("a", "Ada"), GNode("b", "Quillton")], [GEdge("a", "b", label="born in")], height=300)
    slipped = page.replace('<div id="g"></div>', '<div id="g"></div>' + _SLIP)
    if not with_csp:  # the control: the same slip without the policy does run, so the probe can fail
        slipped = slipped.replace("Content-Security-Policy", "X-No-Policy")
    wrapper = sandboxed(slipped, (_vis_assets()[0], _INIT), 300)
    if not with_csp:
        wrapper = wrapper.replace("Content-Security-Policy", "X-No-Policy")
    (tmp_path / "frame.html").write_text(wrapper, encoding="utf-8")
    b = open_browser(chromium, tmp_path / "profile")
    try:
        b.navigate((tmp_path / "frame.html").as_uri())
        b.pump(3)
        frames = frame_probes(b)
        assert len(frames) == 1, frames
        origin, canvases, vis, img, script = frames[0]
        assert origin == "null" and canvases == 1 and vis == "object"  # opaque origin; the graph drew
        if with_csp:
            assert (img, script) == ("undefined", "undefined")
        else:
            assert (img, script) == ("number", "number")
        # the page cannot reach into the frame either: different (opaque) origin
        assert b.eval("document.querySelector('iframe').contentDocument === null")
        assert b.eval("document.querySelector('iframe').getAttribute('sandbox')") == "allow-scripts"
    finally:
        b.close()


@pytest.fixture(scope="module")
def canary_app(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("sec_browser_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    with LoopbackServer() as operator_srv, LoopbackServer() as listener:
        srv = StreamlitServer(
            root,
            tmp_path_factory.mktemp("logs") / "streamlit.log",
            extra_env={
                "OPENAI_API_KEY": CANARY,
                "TRIPLET_LENS_MODEL": MODEL,
                "TRIPLET_LENS_API_BASE": operator_srv.base_url,
                "TRIPLET_LENS_DEMO": "",
                "TRIPLET_LENS_API_BASES": "",
                "TRIPLET_LENS_CAP_SESSION": "",
                "TRIPLET_LENS_CAP_DAY": "",
            },
        )
        try:
            srv.wait_healthy()
            yield srv, operator_srv, listener
        finally:
            srv.stop()


def _click(b: Browser, label: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if b.click_button(label):
            return
        b.pump(0.3)
    raise AssertionError(f"button {label!r} never became clickable")


def test_query_parameters_name_no_endpoint_and_the_graph_frame_is_sandboxed(canary_app, chromium, tmp_path):
    srv, operator_srv, listener = canary_app
    b = open_browser(chromium, tmp_path / "profile")
    try:
        # a crafted link naming the listener (the typed Settings form: tests/browser/test_browser_security.py)
        b.navigate(
            f"{srv.url}/ask?model={MODEL}&api_base={listener.base_url}&base_url={listener.base_url}"
            f"&api_key=sk-x&corpus=hotpotqa-sample"
        )
        b.wait_text("Ask with T2RAG", timeout=120)
        _click(b, "Ask")
        b.wait_text("Step 1 of", timeout=180)
        assert listener.requests == [] and listener.headers == []
        # the question went to the operator's endpoint with the operator's key
        assert operator_srv.answered and all(CANARY in h.get("authorization", "") for h in operator_srv.headers)

        # the corpus graph: inside a frame sandboxed with allow-scripts only, of opaque origin, drawn
        b.navigate(f"{srv.url}/corpora")
        b.wait_text("Corpus: hotpotqa-sample", timeout=60)
        b.eval("[...document.querySelectorAll('[role=tab]')].find(t => t.innerText.trim() === 'Graph').click()")
        find = (
            "(() => { const out = []; for (const f of document.querySelectorAll('iframe')) { "
            "try { const d = f.contentDocument; if (d) for (const g of d.querySelectorAll('iframe')) "
            "out.push(g.getAttribute('sandbox')); } catch (e) {} } return out; })()"
        )
        end = time.monotonic() + 90  # the graph is drawn once the tab's script has run (slow on a busy machine)
        sandboxes = []
        while time.monotonic() < end and not sandboxes:
            b.pump(1)
            sandboxes = b.eval(find) or []
        b.pump(2)
        assert sandboxes == ["allow-scripts"], sandboxes
        drawn = [p for p in frame_probes(b) if p[2] == "object"]
        assert drawn and all(p[0] == "null" and p[1] >= 1 for p in drawn), drawn
    finally:
        b.close()


def _type(b: Browser, label: str, text: str) -> None:
    probe = (
        "(() => { const i = document.querySelector('input[aria-label="
        + json.dumps(json.dumps(label))[1:-1]
        + "]'); if (!i) return false; i.focus(); i.select(); return true; })()"
    )
    for _ in range(100):  # a label's text can be on screen a moment before its input is
        if b.eval(probe):
            break
        b.pump(0.2)
    else:
        raise AssertionError(f"no input labelled {label!r}")
    b.send("Input.insertText", {"text": text}, session=True)
    b.pump(0.3)


def test_a_visitor_endpoint_typed_in_the_browser_never_gets_the_operator_key(chromium, tmp_path, embedder):
    build_small_corpus(tmp_path / "ws", "hotpotqa-sample", questions=1, embedder=embedder)
    listener = LoopbackServer().start()
    srv = StreamlitServer(tmp_path / "ws", tmp_path / "streamlit.log", extra_env={"OPENAI_API_KEY": CANARY})
    b = None
    try:
        srv.wait_healthy()
        b = Browser(chromium, tmp_path / "profile")
        b.navigate(srv.url + "/settings")
        b.wait_text("Settings", timeout=120)
        b.wait_text("API base (optional)")
        _type(b, "Model", "openai/gpt-4o-mini")
        _type(b, "API base (optional)", listener.base_url)
        assert b.click_button("Apply")
        b.wait_text("not one the operator configured", timeout=60)  # refused at Apply, before sending
        assert "Reasoner: openai/gpt-4o-mini" in b.text()  # the session keeps the visitor's choice...
        went = b.eval(
            "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim()"
            ".endsWith('Ask (T2RAG)')); if (!a) return false; a.click(); return true; })()"
        )
        assert went  # (a link click keeps the session; a reload would start a new one)
        b.wait_text("Ask with T2RAG", timeout=60)
        for _ in range(100):  # the page finishes drawing before its Ask button is enabled
            if b.click_button("Ask"):
                break
            b.pump(0.3)
        else:
            raise AssertionError("the Ask button never became clickable")
        b.wait_text("could not finish", timeout=120)  # ...and the engine refuses to send the key there
        b.pump(1)
        assert listener.requests == []
        assert not any(CANARY in str(h) for h in listener.headers)
    finally:
        if b is not None:
            b.close()
        srv.stop()
        listener.stop()
