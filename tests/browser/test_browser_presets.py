"""A real browser loads the paper's KG2RAG: Settings → KG2RAG → "Load the paper preset", then Ask on
the KG2RAG page; the result's badge names the `paper` preset and opens (one click) on "every setting
is the paper's" and SPEC's named fixes. Headless Chromium over DevTools (tests/_app_helpers.py)."""

from __future__ import annotations

import json
import time

import pytest

from tests._app_helpers import Browser, StreamlitServer, build_small_corpus, find_chromium

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    if find_chromium() is None:
        pytest.fail("Chromium is not installed: the browser test needs it (Debian: apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("browser_presets_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    srv = StreamlitServer(root, tmp_path_factory.mktemp("logs") / "streamlit.log")
    srv.wait_healthy()
    yield srv
    srv.stop()


@pytest.fixture()
def browser(server, tmp_path):
    b = Browser(find_chromium(), tmp_path / "profile")
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1400, "height": 2200, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    yield b
    b.close()


def _until(b: Browser, js: str, what: str, timeout: float = 60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = b.eval(js)
        if value:
            return value
        b.pump(0.3)
    raise AssertionError(f"{what} never happened; page text: {b.text()[:1500]!r}")


def _nav(b: Browser, label: str) -> None:
    _until(
        b,
        "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
        + json.dumps(label)
        + ")); if (!a) return false; a.click(); return true; })()",
        f"link {label!r}",
    )


def _click_in_section(b: Browser, section: str, label: str) -> None:
    """Click the button `label` inside the expander whose title starts with `section`."""
    _until(
        b,
        "(() => { const d = [...document.querySelectorAll('details')].find(x => x.querySelector('summary')"
        ".innerText.trim().endsWith(" + json.dumps(section) + ")); if (!d) return false; const btn = "
        "[...d.querySelectorAll('button')].find(x => x.innerText.trim() === " + json.dumps(label) + ");"
        " if (!btn || btn.disabled) return false; btn.click(); return true; })()",
        f"button {label!r} in {section!r}",
    )


def _click(b: Browser, label: str, timeout: float = 60) -> None:
    _until(
        b,
        "(() => { const x = [...document.querySelectorAll('button')].find(x => x.innerText.trim()"
        ".startsWith(" + json.dumps(label) + ")); if (!x || x.disabled) return false; x.click(); return true;"
        " })()",
        f"button {label!r}",
        timeout,
    )


def test_settings_paper_preset_then_ask_kg2rag_shows_the_paper_badge(server, browser, tmp_path):
    b = browser
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    _nav(b, "Settings")
    b.wait_text("Method settings")
    b.wait_text("🛠 tuned preset")  # each method starts on tuned, its departures counted on the badge
    _click_in_section(b, "KG2RAG", "Load the paper preset")
    # the KG2RAG section's badge turns to paper; T2RAG's stays tuned
    b.wait_text("📄 paper preset")
    assert "🛠 tuned preset" in b.text()

    _nav(b, "KG2RAG")
    b.wait_text("🕸️ KG2RAG")
    _click(b, "Ask")
    b.wait_text("Step 1 of", timeout=180)
    b.wait_text("📄 paper preset")
    assert "seeds: dense, top" in b.text()  # the first stage as it ran
    _click(b, "📄 paper preset")  # one click opens what departs: nothing but SPEC's fixes
    b.wait_text("Every setting is the paper's.")
    text = b.text()
    assert "skip a misfit tree" in text and "normalized entity matching" in text
    b.screenshot(tmp_path / "kg2rag_paper.png")
    assert (tmp_path / "kg2rag_paper.png").stat().st_size > 10_000
    errors = [e for e in b.console_errors() if "Unrecognized feature" not in e]
    assert not errors, errors
