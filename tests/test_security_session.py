"""The engine session (issue 11): the demo lock holds even when widgets do not, budget caps refuse
the N+1th question and survive a restart, and Apply reports the model's state in one request."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.budget import Budget, BudgetedLLM, BudgetExceeded, Caps
from engine.config import AppSettings
from engine.llm.base import LLMError
from engine.session import ConfigLocked, Session
from tests._app_helpers import REPO, build_small_corpus, free_port
from tests.loopback import LoopbackServer
from tests.test_security_endpoints import _always_run_app_py, forge, goto  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(600)
APP = str(REPO / "app.py")
MODEL = "openai/gpt-4o-mini"


def demo_settings(tmp_path: Path, **kw) -> AppSettings:
    return AppSettings(workspace=tmp_path, model=MODEL, api_base="http://127.0.0.1:9/v1", demo=True, **kw)


# --- demo lock, in the engine ------------------------------------------------------------------

def test_demo_session_refuses_every_configuration_change(tmp_path):
    s = Session(demo_settings(tmp_path))
    before = s.config
    for change in (dict(model="openai/gpt-4o"), dict(api_base="http://127.0.0.1:9555/v1"), dict(api_key="sk-x-12345")):
        with pytest.raises(ConfigLocked, match="read-only demo"):
            s.configure(**change)
    with pytest.raises(ConfigLocked):
        s.set_method_settings("t2rag", {"k": 50})
    with pytest.raises(ConfigLocked):
        s.set_method_settings("t2rag", {"rounds": 40})
    with pytest.raises(ConfigLocked):
        s.forget_key()
    with pytest.raises(ConfigLocked):
        s.apply_model("openai/gpt-4o", "http://127.0.0.1:9555/v1")
    assert s.config == before and not s.has_key
    # re-submitting what is in force is not a change
    s.configure(model=MODEL, api_base="http://127.0.0.1:9/v1")
    s.set_method_settings("t2rag", {"k": s.method_settings("t2rag").k})
    assert s.config.model == MODEL


def test_normal_session_changes_and_keeps_the_key_out_of_its_repr(tmp_path):
    s = Session(AppSettings(workspace=tmp_path))
    s.configure(model=MODEL, api_base="http://127.0.0.1:9/v1", api_key="sk-session-SECRET-1")
    s.set_method_settings("t2rag", {"k": 3})
    assert s.method_settings("t2rag").k == 3 and s.has_key
    assert "SECRET" not in repr(s) and "SECRET" not in repr(s.config)
    s.reset_method_settings("t2rag")
    assert s.method_settings("t2rag").k == 5


@pytest.fixture(scope="module")
def small_ws(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("session_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    return root


def start_app(ws: Path, monkeypatch, **env: str) -> AppTest:
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws))
    for var in ("TRIPLET_LENS_DEMO", "TRIPLET_LENS_MODEL", "TRIPLET_LENS_API_BASE", "TRIPLET_LENS_API_BASES",
                "TRIPLET_LENS_CAP_SESSION", "TRIPLET_LENS_CAP_DAY"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_demo_method_settings_cannot_change_through_any_widget(small_ws, monkeypatch):
    at = start_app(small_ws, monkeypatch, TRIPLET_LENS_DEMO="1")
    at = goto(at, "settings")
    # 1. the widgets are drawn disabled; a forged value for them is dropped by Streamlit
    assert at.number_input(key="settings_t2rag_k").disabled and at.button(key="settings_t2rag_apply").disabled
    forge(at.number_input(key="settings_t2rag_k")).set_value(40)
    forge(at.button(key="settings_t2rag_apply")).click().run()
    assert at.session_state["session"].method_settings("t2rag").k == 5
    # 2. a page that forgets to disable them: the forged values reach the engine, which refuses
    monkeypatch.setattr("components.state.is_demo", lambda: False)
    at.run()
    for form, name, value in (("settings_t2rag", "k", 40), ("settings_t2rag", "rounds", 30),
                              ("settings_kg2rag", "k", 50)):
        at.number_input(key=f"{form}_{name}").set_value(value)
        at.button(key=f"{form}_apply").click().run()
        assert any("read-only demo" in e.value for e in at.error), [e.value for e in at.error]
    at.button(key="reset_t2rag").click().run()
    sess = at.session_state["session"]
    assert sess.method_settings("t2rag").k == 5 and sess.method_settings("kg2rag") == type(sess.method_settings("kg2rag"))()
    assert sess.config.method_settings == {}


# --- budget ------------------------------------------------------------------------------------

def test_caps_parse_and_refuse_bad_text():
    assert Caps.parse("questions=3, tokens=1000,dollars=0.25") == Caps(questions=3, tokens=1000, dollars=0.25)
    assert not Caps.parse("").any
    for bad in ("questions", "minutes=3", "questions=three", "dollars=-1"):
        with pytest.raises(ValueError, match="TRIPLET_LENS_CAP_SESSION"):
            Caps.parse(bad, "TRIPLET_LENS_CAP_SESSION")
    with pytest.raises(ValueError, match="TRIPLET_LENS_CAP_DAY"):
        AppSettings.from_env({"TRIPLET_LENS_CAP_DAY": "questions=x"})


def test_the_n_plus_first_question_is_refused_and_counts_survive_a_restart(tmp_path):
    path = tmp_path / "budget.sqlite"
    b = Budget(path, session_caps=Caps(questions=3), day_caps=Caps(questions=5))
    for _ in range(3):
        b.check("s1")
        b.record("s1", questions=1)
    with pytest.raises(BudgetExceeded, match="question limit reached: 3 of 3 questions used this session"):
        b.check("s1")
    # a restart: a new process opens the same file
    b2 = Budget(path, session_caps=Caps(questions=3), day_caps=Caps(questions=5))
    with pytest.raises(BudgetExceeded, match="3 of 3"):
        b2.check("s1")
    b2.check("s2")
    b2.record("s2", questions=2)
    with pytest.raises(BudgetExceeded, match="5 of 5 questions used today"):
        b2.check("s3")  # a new session, but the day is spent


def test_token_and_dollar_caps_stop_the_llm_at_its_next_call(tmp_path):
    from engine.llm.scripted import ScriptedLLM

    b = Budget(tmp_path / "budget.sqlite", session_caps=Caps(tokens=30))
    llm = BudgetedLLM(ScriptedLLM(["one two three"] * 10), b, "s1")
    calls = 0
    with pytest.raises(LLMError, match="token limit reached") as err:
        for _ in range(10):
            llm.complete([{"role": "user", "content": "a prompt of several words " * 3}])
            calls += 1
    assert err.value.kind == "budget" and 1 <= calls < 10
    assert b.usage("session", "s1").tokens >= 30


def test_app_refuses_the_third_question_and_the_day_cap_survives_a_restart(small_ws, monkeypatch, tmp_path):
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(small_ws, ws)
    at = start_app(ws, monkeypatch, TRIPLET_LENS_CAP_SESSION="questions=2", TRIPLET_LENS_CAP_DAY="questions=3")
    at = goto(at, "ask")
    for _ in range(2):
        at.button(key="ask_go").click().run()
        assert not at.error, [e.value for e in at.error]
    at.button(key="ask_go").click().run()
    assert any("question limit reached: 2 of 2" in e.value for e in at.error), [e.value for e in at.error]
    # a restart: a new app process, a new session; one question left today, then the day cap
    at = goto(start_app(ws, monkeypatch, TRIPLET_LENS_CAP_SESSION="questions=2", TRIPLET_LENS_CAP_DAY="questions=3"),
              "ask")
    at.button(key="ask_go").click().run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="ask_go").click().run()
    assert any("3 of 3 questions used today" in e.value for e in at.error), [e.value for e in at.error]
    assert (ws / "budget.sqlite").exists()


# --- Apply checks the model at once ------------------------------------------------------------

@pytest.mark.parametrize("fault, kind, label", [("", "ok", "ok"), ("401", "auth", "authentication failed"),
                                                 ("404", "not_found", "model not found")])
def test_apply_model_reports_the_providers_answer_after_one_request(tmp_path, fault, kind, label):
    from engine.llm.litellm_call import import_litellm

    import_litellm()  # its import takes seconds; the timing below is about retries
    with LoopbackServer() as srv:
        if fault:
            srv.fail_after, srv.fail_mode = 0, fault
        s = Session(AppSettings(workspace=tmp_path))
        t0 = time.perf_counter()
        status = s.apply_model(MODEL, srv.base_url, "sk-test-apply-123456")
        assert status.kind == kind and status.message.startswith(label), status
        assert len(srv.requests) == 1 and time.perf_counter() - t0 < 5  # never retried
        assert "sk-test-apply-123456" not in status.message


def test_apply_model_reports_an_unreachable_server_and_a_missing_key(tmp_path, monkeypatch):
    s = Session(AppSettings(workspace=tmp_path))
    status = s.apply_model(MODEL, f"http://127.0.0.1:{free_port()}/v1", "sk-test-apply-123456")
    assert status.kind == "unreachable" and status.message.startswith("unreachable"), status
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s = Session(AppSettings(workspace=tmp_path))  # no session key, no base: the provider's default endpoint
    status = s.apply_model(MODEL, "", "")
    assert not status.ok and status.kind == "auth" and "no API key" in status.message and "OPENAI_API_KEY" in status.message
    assert s.apply_model("", "").kind == "offline"


def test_a_malformed_cap_stops_the_app_with_a_message_naming_the_variable(small_ws, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(small_ws))
    monkeypatch.setenv("TRIPLET_LENS_CAP_SESSION", "questions=three")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception
    assert any("TRIPLET_LENS_CAP_SESSION" in e.value and "three" in e.value for e in at.error)
