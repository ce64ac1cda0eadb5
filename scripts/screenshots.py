"""`make screenshots`: every page of the app at 1440x900 and 390x844, written to screenshots/
(git-ignored). Starts `streamlit run app.py` on a free loopback port over the workspace (the
bundled sample corpora: `python -m engine sample ensure`), drives headless Chromium over the
DevTools protocol, and walks a demo: landing, Compare's verdict, Compare stepped in sync to the tree graph and its
timelines, Ask, KG2RAG at its weighted graph, Evaluate, Settings, presentation mode, Compare with four
methods from a link; all with the offline reasoner. Last, a what-if on Ask with replies to replay: Settings
point the session at a loopback OpenAI-compatible provider (tests/loopback.py, canned replies standing in for a model).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from tests._app_helpers import Browser, StreamlitServer, find_chromium  # noqa: E402

SIZES = {"1440": (1440, 900, False), "390": (390, 844, True)}


def _size(b: Browser, w: int, h: int, mobile: bool) -> None:
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": mobile},
        session=True,
    )


def _click(b: Browser, label: str, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if b.click_button(label):
            b.pump(1)
            return
        b.pump(0.3)
    raise SystemExit(f"no button {label!r} on the page")


def _nav(b: Browser, label: str) -> None:
    b.eval(
        "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
        + json.dumps(label)
        + ")); if (a) a.click(); })()"
    )
    b.pump(2)


def _goto(b: Browser, label: str, needle: str, timeout: float = 120) -> None:
    """Navigate until the page shows `needle` (a click landing during a rerun is dropped)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        _nav(b, label)
        if needle in b.text():
            return
        b.pump(2)
    raise SystemExit(f"page {label!r} never showed {needle!r}")


def _scroll_to(b: Browser, needle: str) -> None:
    """Scroll the first element whose text starts with `needle` to the top of the view."""
    b.eval(
        "(() => { const e = [...document.querySelectorAll('p, h1, h2, h3, h4, strong')].find(x => "
        "x.innerText.trim().startsWith(" + json.dumps(needle) + ")); if (e) e.scrollIntoView({block: 'start'}); })()"
    )
    b.pump(1.5)


def _wait_js(b: Browser, expression: str, timeout: float = 120) -> object:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = b.eval(expression)
        if value:
            return value
        b.pump(0.5)
    raise SystemExit(f"never held: {expression[:100]}")


def _open_expanders(b: Browser, needle: str) -> None:
    _wait_js(
        b,
        "[...document.querySelectorAll('details summary')].some(x => x.innerText.includes(" + json.dumps(needle) + "))",
    )
    b.eval(
        "[...document.querySelectorAll('details')].filter(d => !d.open && d.querySelector('summary').innerText"
        ".includes(" + json.dumps(needle) + ")).forEach(d => d.querySelector('summary').click())"
    )
    b.pump(2)


def _type_into(b: Browser, label_start: str, text: str) -> None:
    _wait_js(
        b,
        "(() => { const i = [...document.querySelectorAll('input')].find(x => (x.getAttribute("
        "'aria-label') || '').startsWith(" + json.dumps(label_start) + ")); if (!i) return false;"
        " i.focus(); i.select(); return true; })()",
    )
    b.send("Input.insertText", {"text": text}, session=True)


def _shoot(b: Browser, out: Path, name: str, scroll: str = "", scroll_js: str = "") -> None:
    for tag, (w, h, mobile) in SIZES.items():
        _size(b, w, h, mobile)
        b.pump(2.5)
        if scroll:
            _scroll_to(b, scroll)
        if scroll_js:
            b.eval(scroll_js)
            b.pump(1.5)
        b.screenshot(out / f"{name}_{tag}.png")
        print(f"  {name}_{tag}.png")
    _size(b, *SIZES["1440"])
    b.pump(1)


def _whatif(b: Browser, out: Path) -> None:
    """Ask with a model (the loopback provider), then re-run with one chunk fewer per round."""
    from tests.browser.test_browser import _provider_reply
    from tests.loopback import LoopbackServer

    with LoopbackServer() as provider:
        provider.reply = _provider_reply
        _goto(b, "Settings", "Method settings")
        _type_into(b, "Model", "openai/gpt-4o-mini")
        _type_into(b, "API base", provider.base_url)
        _type_into(b, "API key", "sk-test")
        _click(b, "Apply")
        b.wait_text("In use: openai/gpt-4o-mini", timeout=120)
        _goto(b, "Ask (T2RAG)", "Ask with T2RAG")
        _click(b, "Ask")
        b.wait_text("openai/gpt-4o-mini · ", timeout=300)  # this run's usage line, not the earlier offline run
        _open_expanders(b, "What if")
        _wait_js(
            b,
            "[...document.querySelectorAll('input')].some(x => x.getAttribute('aria-label') === 'Chunks "
            "retrieved (k)')",
        )
        b.eval(
            "[...document.querySelectorAll('input')].find(x => x.getAttribute('aria-label') === 'Chunks retrieved "
            "(k)').closest('[data-testid=stNumberInput]').querySelector('[data-testid=stNumberInputStepDown]')"
            ".click()"
        )
        b.pump(2)
        _click(b, "🔁 Re-run")
        _wait_js(b, "document.querySelector('.tl-whatif-diff .tl-replayed') !== null", timeout=300)
        # the table's top row (the settings changed) just under the page header
        _shoot(
            b,
            out,
            "10_ask_whatif",
            scroll_js="(() => { const t = document.querySelector('.tl-whatif-diff');"
            " t.scrollIntoView({block: 'start'}); const m = t.closest('[data-testid=stMain]') ||"
            " document.scrollingElement; m.scrollBy(0, -90); })()",
        )


def main() -> int:
    out = REPO / "screenshots"
    out.mkdir(exist_ok=True)
    chromium = find_chromium()
    if chromium is None:
        print("Chromium is not installed (Debian: apt-get install -y chromium)")
        return 1
    ws = Path(os.environ.get("TRIPLET_LENS_WORKSPACE", REPO / "workspace"))
    tmp = Path(tempfile.mkdtemp(prefix="tl-shots-"))
    srv = StreamlitServer(ws, tmp / "streamlit.log", {"TRIPLET_LENS_MODEL": ""})
    srv.wait_healthy()
    b = Browser(chromium, tmp / "profile")
    try:
        _size(b, *SIZES["1440"])
        b.navigate(srv.url + "/?corpus=hotpotqa-sample")
        b.wait_text("Start here", timeout=180)
        _shoot(b, out, "01_landing")
        _click(b, "Compare the two methods on this question")
        b.wait_text("Step both methods together", timeout=300)
        _wait_js(b, "document.querySelector('.tl-verdict-final') !== null")
        _shoot(b, out, "02_compare_verdict", scroll_js="document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        _shoot(b, out, "02_compare_answers", "Question:")
        for _ in range(8):
            if "Weighted graph" in b.text():
                break
            _click(b, "Next ▶")
        _shoot(b, out, "03_compare_sync_graph", "Step both methods")
        _shoot(b, out, "03_compare_kg2rag_graph", "Weighted graph")  # the KG2RAG column's graph in view
        _open_expanders(b, "Timelines")
        _wait_js(b, "document.querySelectorAll('.js-plotly-plot g.trace.bars').length >= 2")
        _shoot(
            b,
            out,
            "09_compare_timelines",
            scroll_js="[...document.querySelectorAll('details summary')].find(s => "
            "s.innerText.includes('Timelines')).scrollIntoView({block: 'start'})",
        )
        _nav(b, "KG2RAG")
        b.wait_text("Knowledge-graph-guided")
        _click(b, "Ask")
        b.wait_text("Step 1 of", timeout=300)
        while "Weighted graph:" not in b.text() and b.click_button("Next ▶"):
            b.pump(1.5)
        _shoot(b, out, "04_kg2rag_graph", "Weighted graph")
        _nav(b, "Ask (T2RAG)")
        b.wait_text("Ask with T2RAG")
        _click(b, "Ask")
        b.wait_text("Step 1 of", timeout=300)
        _click(b, "Next ▶")
        _shoot(b, out, "05_ask_round", "Placeholders filled")
        _nav(b, "Evaluate")
        _shoot(b, out, "06_evaluate")
        _nav(b, "Settings")
        _shoot(b, out, "07_settings")
        _nav(b, "Compare")
        b.wait_text("Step both methods together", timeout=120)
        _click(b, "🎬 Presentation mode")
        b.wait_text("Exit presentation", timeout=60)
        while "Spanning trees" not in b.text() and b.click_button("Next ▶"):
            b.pump(1)
        _shoot(b, out, "08_presentation_trees")
        while b.click_button("Next ▶"):
            b.pump(1.5)
        _shoot(b, out, "11_presentation_verdict")
        _click(b, "✖ Exit presentation")
        b.wait_text("Step both methods together", timeout=120)  # back where presentation mode was entered
        # any set of methods, from a link: T2RAG, KG2RAG and two baselines side by side
        qid = b.eval("new URLSearchParams(location.search).get('q')")
        b.navigate(srv.url + f"/compare?corpus=hotpotqa-sample&q={qid}&methods=t2rag,kg2rag,hipporag2,bm25")
        _wait_js(b, "document.querySelectorAll('.tl-verdict-final .tl-verdict-line').length === 4", timeout=300)
        _shoot(
            b, out, "12_compare_four_methods", scroll_js="document.querySelector('[data-testid=stMain]').scrollTo(0, 0)"
        )
        _shoot(b, out, "12_compare_four_answers", "Question:")
        _whatif(b, out)
    finally:
        b.close()
        srv.stop()
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
