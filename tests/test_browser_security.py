"""In a real browser against `streamlit run`: a visitor types their own endpoint into Settings with
the operator's canary key in the server's environment, applies and asks; the listener on their
endpoint never receives the canary (AppTest covers the control run that does receive it:
tests/test_security_endpoints.py)."""

from __future__ import annotations

import json

import pytest

from tests._app_helpers import Browser, StreamlitServer, build_small_corpus, needs_chromium, require_chromium
from tests.loopback import LoopbackServer

pytestmark = [pytest.mark.timeout(600), needs_chromium()]
CANARY = "sk-canary-BROWSER-0123456789"


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


def test_a_visitor_endpoint_typed_in_the_browser_never_gets_the_operator_key(tmp_path, embedder):
    chromium = require_chromium()
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
