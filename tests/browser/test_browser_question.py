"""In a real browser (headless Chromium, `streamlit run app.py`): a typed question runs on the first
mouse click, and Enter in the box submits it too. The first click used to be lost (the button was
disabled until the typed text was committed), and Enter did nothing; AppTest cannot see either,
because it hands the text and the click to the script together."""

from __future__ import annotations

import json
import time

import pytest

from tests._app_helpers import Browser, StreamlitServer, build_small_corpus, needs_chromium, require_chromium

pytestmark = [pytest.mark.timeout(900), needs_chromium()]
QUESTION = "What kind of demon is Lilu?"


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("question_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    srv = StreamlitServer(root, tmp_path_factory.mktemp("logs") / "streamlit.log")
    srv.wait_healthy()
    yield srv
    srv.stop()


@pytest.fixture()
def browser(tmp_path):
    b = Browser(require_chromium(), tmp_path / "profile")
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1440, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    yield b
    b.close()


def _wait_js(b: Browser, expression: str, timeout: float = 90, what: str = ""):
    end = time.monotonic() + timeout
    value = None
    while time.monotonic() < end:
        value = b.eval(expression)
        if value:
            return value
        b.pump(0.3)
    raise AssertionError(f"{what or expression[:80]} never held; last value {value!r}; page: {b.text()[:800]!r}")


def _open_typing(b: Browser, server, link: str, title: str) -> None:
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    _wait_js(
        b,
        "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
        + json.dumps(link)
        + ")); if (!a) return false; a.click(); return true; })()",
        what=f"the {link} link",
    )
    b.wait_text(title, timeout=120)
    _wait_js(
        b,
        "(() => { const l = [...document.querySelectorAll('label')].find(x => x.innerText.trim() === "
        "'Type a question'); if (!l) return false; l.click(); return true; })()",
        what="the Type radio",
    )
    _idle(b)
    # focus the box as a user does, then type into it with real key input
    _wait_js(
        b,
        "(() => { const i = document.querySelector('input[aria-label=\"Your question\"]'); if (!i) "
        "return false; i.focus(); return document.activeElement === i; })()",
        what="the question box",
    )
    b.send("Input.insertText", {"text": QUESTION}, session=True)
    _wait_js(
        b,
        "document.querySelector('input[aria-label=\"Your question\"]').value === " + json.dumps(QUESTION),
        what="the typed text",
    )


def _idle(b: Browser) -> None:
    """No script run in flight (Streamlit shows its running indicator while one is)."""
    b.pump(0.5)
    _wait_js(b, "!document.querySelector('[data-testid=\"stStatusWidget\"]')", what="an idle app")


def _result_shown(b: Browser, timeout: float = 240) -> None:
    _wait_js(
        b,
        "document.body.innerText.includes('Question: ' + " + json.dumps(QUESTION) + ") && "
        "document.querySelectorAll('.tl-answer').length > 0",
        timeout=timeout,
        what="the result",
    )


def _mouse_click(b: Browser, label: str) -> None:
    """A real mouse click (press and release at the button), which first takes focus off the box."""
    box = _wait_js(
        b,
        "(() => { const x = [...document.querySelectorAll('button')].find(x => x.innerText.trim() === "
        + json.dumps(label)
        + "); if (!x) return null; const r = x.getBoundingClientRect();"
        " return [r.left + r.width / 2, r.top + r.height / 2]; })()",
        what=f"the {label} button",
    )
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        b.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            session=True,
        )


def test_a_typed_question_runs_on_one_click(server, browser):
    b = browser
    _open_typing(b, server, "Ask (T2RAG)", "Ask with T2RAG")
    assert "Up to 2,000 characters" in b.text()  # the limit, before anything is submitted
    _mouse_click(b, "Ask")  # once: no second click anywhere in this test
    _result_shown(b)
    assert "Step 1 of" in b.text()
    assert not [e for e in b.console_errors() if "Unrecognized feature" not in e]


def test_enter_in_the_box_submits_the_question(server, browser):
    b = browser
    _open_typing(b, server, "KG2RAG", "Knowledge-graph-guided expansion")
    for kind in ("keyDown", "keyUp"):
        b.send(
            "Input.dispatchKeyEvent",
            {
                "type": kind,
                "key": "Enter",
                "code": "Enter",
                "windowsVirtualKeyCode": 13,
                **({"text": "\r"} if kind == "keyDown" else {}),
            },
            session=True,
        )
    _result_shown(b)
    assert "Step 1 of" in b.text()
