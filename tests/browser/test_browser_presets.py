"""A real browser loads the paper's KG2RAG: Settings → KG2RAG → "Load the paper preset", then Ask on
the KG2RAG page; the result's badge names the `paper` preset and opens (one click) on "every setting
is the paper's", its inputs that are not (MiniLM, offline triplets, no cross-encoder) and SPEC's named
fixes; the inputs line under the card says the same. Headless Chromium over DevTools (tests/_app_helpers.py)."""

from __future__ import annotations

import json
import time

import pytest

from tests._app_helpers import Browser, click_in_section, needs_chromium, open_browser

pytestmark = [pytest.mark.timeout(900), needs_chromium()]


@pytest.fixture()
def browser(chromium, server, tmp_path):
    b = open_browser(chromium, tmp_path / "profile")
    yield b
    b.close()


def _nav(b: Browser, label: str) -> None:
    end = time.monotonic() + 60
    while not b.click_link(label):
        assert time.monotonic() < end, f"no link {label!r}; page text: {b.text()[:1500]!r}"
        b.pump(0.3)


def _click(b: Browser, label: str, timeout: float = 60) -> None:
    b.wait_js(
        "(() => { const x = [...document.querySelectorAll('button')].find(x => x.innerText.trim()"
        ".startsWith(" + json.dumps(label) + ")); if (!x || x.disabled) return false; x.click(); return true;"
        " })()",
        timeout=timeout,
        what=f"button {label!r}",
    )


def test_settings_paper_preset_then_ask_kg2rag_shows_the_paper_badge(server, browser, tmp_path):
    b = browser
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    _nav(b, "Settings")
    b.wait_text("Method settings")
    b.wait_text("🛠 tuned preset")  # each method starts on tuned, its departures counted on the badge
    click_in_section(b, "KG2RAG", "Load the paper preset", timeout=60)
    # the KG2RAG section's badge turns to paper; T2RAG's stays tuned
    b.wait_text("📄 paper preset")
    assert "🛠 tuned preset" in b.text()

    _nav(b, "KG2RAG")
    b.wait_text("🕸️ KG2RAG")
    _click(b, "Ask")
    b.wait_text("Step 1 of", timeout=180)
    b.wait_text("📄 paper preset")
    assert "seeds: dense, top" in b.text()  # the first stage as it ran
    # the paper's settings, not the paper's inputs: the line under the card and the badge say so
    text = b.text()
    assert "Inputs: embedder bundled:all-MiniLM-L6-v2 (paper: mxbai-embed-large)" in text, text[-1500:]
    assert "reranker cosine: no cross-encoder configured (paper: bge-reranker-large)" in text
    _click(b, "📄 paper preset")  # one click opens what departs: no setting, the inputs, SPEC's fixes
    b.wait_text("Every setting is the paper's. Its inputs are not:")
    text = b.text()
    assert "skip a misfit tree" in text and "normalized entity matching" in text
    b.screenshot(tmp_path / "kg2rag_paper.png")
    assert (tmp_path / "kg2rag_paper.png").stat().st_size > 10_000
    errors = [e for e in b.console_errors() if "Unrecognized feature" not in e]
    assert not errors, errors
