"""In a real browser (headless Chromium, `streamlit run app.py`): a typed question runs on the first
mouse click, and Enter in the box submits it too. The first click used to be lost (the button was
disabled until the typed text was committed), and Enter did nothing; AppTest cannot see either,
because it hands the text and the click to the script together."""

from __future__ import annotations

import json

import pytest

from tests._app_helpers import Browser, needs_chromium, open_browser

pytestmark = [pytest.mark.timeout(900), needs_chromium()]
QUESTION = "What kind of demon is Lilu?"


@pytest.fixture()
def browser(chromium, tmp_path):
    b = open_browser(chromium, tmp_path / "profile", 1440, 900)
    yield b
    b.close()


def _open_typing(b: Browser, server, link: str, title: str) -> None:
    b.navigate(server.url)
    b.wait_text("Corpus: hotpotqa-sample", timeout=120)
    b.wait_js(
        "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
        + json.dumps(link)
        + ")); if (!a) return false; a.click(); return true; })()",
        what=f"the {link} link",
    )
    b.wait_text(title, timeout=120)
    b.wait_js(
        "(() => { const l = [...document.querySelectorAll('label')].find(x => x.innerText.trim() === "
        "'Type a question'); if (!l) return false; l.click(); return true; })()",
        what="the Type radio",
    )
    _idle(b)
    # focus the box as a user does, then type into it with real key input
    b.wait_js(
        "(() => { const i = document.querySelector('input[aria-label=\"Your question\"]'); if (!i) "
        "return false; i.focus(); return document.activeElement === i; })()",
        what="the question box",
    )
    b.send("Input.insertText", {"text": QUESTION}, session=True)
    b.wait_js(
        "document.querySelector('input[aria-label=\"Your question\"]').value === " + json.dumps(QUESTION),
        what="the typed text",
    )


def _idle(b: Browser) -> None:
    """No script run in flight (Streamlit shows its running indicator while one is)."""
    b.pump(0.5)
    b.wait_js("!document.querySelector('[data-testid=\"stStatusWidget\"]')", what="an idle app")


def _result_shown(b: Browser, timeout: float = 240) -> None:
    b.wait_js(
        "document.body.innerText.includes('Question: ' + " + json.dumps(QUESTION) + ") && "
        "document.querySelectorAll('.tl-answer').length > 0",
        timeout=timeout,
        what="the result",
    )


def _mouse_click(b: Browser, label: str) -> None:
    """A real mouse click (press and release at the button), which first takes focus off the box."""
    box = b.wait_js(
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
    b.wait_text("Step 1 of", timeout=60)  # the stepper is drawn after the answer, in the same run
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
    b.wait_text("Step 1 of", timeout=60)  # the stepper is drawn after the answer, in the same run
