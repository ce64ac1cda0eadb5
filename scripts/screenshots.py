"""`make screenshots`: every page of the app at 1440x900 and 390x844, written to screenshots/
(git-ignored). Starts `streamlit run app.py` on a free loopback port over the workspace (the
bundled sample corpora: `python -m engine sample ensure`), drives headless Chromium over the
DevTools protocol, and walks a demo: landing, Compare stepped in sync to the tree graph, Ask,
KG2RAG at its weighted graph, Evaluate, Settings, presentation mode. Uses the offline reasoner.
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
    b.send("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": mobile},
           session=True)


def _click(b: Browser, label: str, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if b.click_button(label):
            b.pump(1)
            return
        b.pump(0.3)
    raise SystemExit(f"no button {label!r} on the page")


def _nav(b: Browser, label: str) -> None:
    b.eval("(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
           + json.dumps(label) + ")); if (a) a.click(); })()")
    b.pump(2)


def _scroll_to(b: Browser, needle: str) -> None:
    """Scroll the first element whose text starts with `needle` to the top of the view."""
    b.eval("(() => { const e = [...document.querySelectorAll('p, h1, h2, h3, h4, strong')].find(x => "
           "x.innerText.trim().startsWith(" + json.dumps(needle) + ")); if (e) e.scrollIntoView({block: 'start'}); })()")
    b.pump(1.5)


def _shoot(b: Browser, out: Path, name: str, scroll: str = "") -> None:
    for tag, (w, h, mobile) in SIZES.items():
        _size(b, w, h, mobile)
        b.pump(2.5)
        if scroll:
            _scroll_to(b, scroll)
        b.screenshot(out / f"{name}_{tag}.png")
        print(f"  {name}_{tag}.png")
    _size(b, *SIZES["1440"])
    b.pump(1)


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
        _shoot(b, out, "02_compare_answers", "Question:")
        for _ in range(8):
            if "Weighted graph" in b.text():
                break
            _click(b, "Next ▶")
        _shoot(b, out, "03_compare_sync_graph", "Step both methods")
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
    finally:
        b.close()
        srv.stop()
    print(f"screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
