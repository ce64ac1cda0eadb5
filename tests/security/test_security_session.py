"""Issue 11, the engine session beyond tests/security/test_security_endpoints.py: the demo lock holds when a
page forgets to disable its widgets (only the engine stands), Apply reports the model's state after
one request (ok / authentication failed / model not found / unreachable / no API key), the day cap
survives an app restart, and a malformed cap stops the app with a message naming it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.core.config import AppSettings
from engine.session import Session
from tests._app_helpers import build_small_corpus, free_port
from tests._apptest import APP, switch_to
from tests.loopback import LoopbackServer

pytestmark = pytest.mark.timeout(600)
MODEL = "openai/gpt-4o-mini"


@pytest.fixture(scope="module")
def small_ws(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("session_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    return root


def start_app(ws: Path, monkeypatch, **env: str) -> AppTest:
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws))
    for var in (
        "TRIPLET_LENS_DEMO",
        "TRIPLET_LENS_MODEL",
        "TRIPLET_LENS_API_BASE",
        "TRIPLET_LENS_API_BASES",
        "TRIPLET_LENS_CAP_SESSION",
        "TRIPLET_LENS_CAP_DAY",
    ):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    switch_to(at, page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_demo_lock_holds_when_a_page_draws_its_widgets_enabled(small_ws, monkeypatch):
    """Streamlit drops forged values for disabled widgets, so that alone proves little about the
    engine. Here the page is made to draw every widget enabled (a page bug): the forged values
    reach the session, which refuses each one."""
    at = start_app(
        small_ws,
        monkeypatch,
        TRIPLET_LENS_DEMO="1",
        TRIPLET_LENS_MODEL=MODEL,
        TRIPLET_LENS_API_BASE="http://127.0.0.1:9/v1",
    )
    sess = at.session_state["session"]
    before = (sess.model, sess.api_base, sess.key_set, sess.settings_for("t2rag"), sess.settings_for("kg2rag"))
    monkeypatch.setattr("components.shell.state.is_demo", lambda: False)
    at = goto(at, "settings")
    assert not at.text_input(key="set_api_base").disabled  # the page bug is in place
    at.text_input(key="set_model").set_value("openai/gpt-4o")
    at.text_input(key="set_api_base").set_value("http://127.0.0.1:9555/v1")
    at.text_input(key="set_api_key").set_value("sk-forged-key-000000")
    at.button(key="set_apply").click().run()
    refusals = sum("read-only demo" in e.value for e in at.error)
    at.button(key="set_offline").click().run()
    refusals += sum("read-only demo" in e.value for e in at.error)
    for form, name, value in (
        ("settings_t2rag", "k", 40),
        ("settings_t2rag", "rounds", 30),
        ("settings_kg2rag", "k", 50),
    ):
        at.number_input(key=f"{form}_{name}").set_value(value)
        at.button(key=f"{form}_apply").click().run()
        refusals += sum("read-only demo" in e.value for e in at.error)
    at.button(key="reset_t2rag").click().run()
    assert not at.exception and refusals >= 5, [e.value for e in at.error]
    assert (sess.model, sess.api_base, sess.key_set, sess.settings_for("t2rag"), sess.settings_for("kg2rag")) == before


@pytest.mark.parametrize("fault, first_words", [("", ""), ("401", "authentication failed"), ("404", "model not found")])
def test_apply_reports_the_providers_answer_after_one_request(tmp_path, fault, first_words):
    from engine.llm.litellm_call import import_litellm

    import_litellm()  # its import takes seconds; the timing below is about retries
    with LoopbackServer() as srv:
        if fault:
            srv.fail_after, srv.fail_mode = 0, fault
        sess = Session.from_app(AppSettings(workspace=tmp_path))
        sess.set_model(MODEL, srv.base_url, "sk-test-apply-123456")
        t0 = time.perf_counter()
        ok, message = sess.check_model()
        assert ok is (not fault) and message.startswith(first_words) and len(srv.requests) == 1, message
        assert time.perf_counter() - t0 < 5 and "sk-test-apply-123456" not in message  # never retried


def test_apply_reports_an_unreachable_server_and_a_missing_key(tmp_path, monkeypatch):
    sess = Session.from_app(AppSettings(workspace=tmp_path))
    sess.set_model(MODEL, f"http://127.0.0.1:{free_port()}/v1", "sk-test-apply-123456")
    ok, message = sess.check_model()
    assert not ok and message.startswith("unreachable"), message
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fresh = Session.from_app(AppSettings(workspace=tmp_path))  # no key, the provider's own endpoint
    fresh.set_model(MODEL, "")
    t0 = time.perf_counter()
    ok, message = fresh.check_model()
    assert not ok and "no API key" in message and "OPENAI_API_KEY" in message and time.perf_counter() - t0 < 1


def test_the_day_cap_survives_an_app_restart(small_ws, monkeypatch, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(small_ws, ws)
    caps = dict(TRIPLET_LENS_CAP_SESSION="questions=2", TRIPLET_LENS_CAP_DAY="questions=3")
    at = goto(start_app(ws, monkeypatch, **caps), "ask")
    for _ in range(2):
        at.button(key="ask_go").click().run()
        assert not at.error, [e.value for e in at.error]
    at.button(key="ask_go").click().run()
    assert any("budget for this session is used up" in e.value for e in at.error), [e.value for e in at.error]
    # a restart: a new app, a new session; one question is left today, then the day's cap
    at = goto(start_app(ws, monkeypatch, **caps), "ask")
    at.button(key="ask_go").click().run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="ask_go").click().run()
    assert any("budget for this server today is used up" in e.value for e in at.error), [e.value for e in at.error]


def test_a_malformed_cap_stops_the_app_with_a_message_naming_the_variable(small_ws, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(small_ws))
    monkeypatch.setenv("TRIPLET_LENS_CAP_SESSION", "questions=three")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("TRIPLET_LENS_CAP_SESSION" in e.value for e in at.error), [e.value for e in at.error]
