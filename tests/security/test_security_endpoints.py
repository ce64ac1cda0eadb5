"""The operator's key never leaves for a visitor's endpoint.

A canary key sits in the server's environment (OPENAI_API_KEY) and a listener on another loopback
port plays the visitor's endpoint. Every way to name an endpoint is tried - the client, the
embedder, the reranker, an endpoint smuggled in extra params, the Settings form, forged widget
values in demo mode, query parameters - and the listener never receives the canary. Control runs
with the listener in the operator's list (or the CLI's local-user policy) do receive it, so these
tests can fail.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from engine.embed.litellm_embed import LiteLLMEmbedder
from engine.embed.rerank import LiteLLMReranker, RerankerError
from engine.embed.sentence import EmbedderError
from engine.llm import LLMError, endpoints, litellm_call
from engine.llm.litellm_client import LiteLLMClient
from tests._app_helpers import REPO, build_small_corpus
from tests._apptest import switch_to
from tests.loopback import LoopbackServer

CANARY = "sk-canary-OPERATOR-0123456789"
APP = str(REPO / "app.py")


@pytest.fixture()
def listener():
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture()
def canary_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setattr(endpoints, "_policy", endpoints.EndpointPolicy.strict())


def _leaked(srv) -> bool:
    return any(CANARY in h.get("authorization", "") for h in srv.headers) or any(CANARY in str(r) for r in srv.requests)


def test_engine_refuses_every_call_to_an_unlisted_base_before_sending(canary_env, listener):
    client = LiteLLMClient("openai/gpt-4o-mini", api_base=listener.base_url, max_attempts=3)
    with pytest.raises(LLMError, match="not one the operator configured") as err:
        client.complete([{"role": "user", "content": "hi"}])
    assert err.value.kind == "auth"
    smuggled = LiteLLMClient("openai/gpt-4o-mini", extra_params={"base_url": listener.base_url})
    with pytest.raises(LLMError, match="not one the operator configured"):
        smuggled.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(EmbedderError, match="not one the operator configured"):
        LiteLLMEmbedder("openai/text-embedding-3-small", api_base=listener.base_url, dim=8).encode(["x"])
    with pytest.raises(RerankerError, match="not one the operator configured"):
        LiteLLMReranker("cohere/rerank-english-v3.0", api_base=listener.base_url).score("q", ["a"])
    assert listener.requests == [] and not _leaked(listener)


def test_control_listed_base_or_local_user_receives_the_environment_key(canary_env, listener):
    litellm_call.set_policy(litellm_call.EndpointPolicy.strict([listener.base_url + "/"]))  # as the operator lists it
    LiteLLMClient("openai/gpt-4o-mini", api_base=listener.base_url).complete([{"role": "user", "content": "hi"}])
    assert _leaked(listener)  # the test can tell: a listed endpoint does get the key
    listener.headers.clear()
    litellm_call.set_policy(litellm_call.local_user_policy([listener.base_url]))  # named on the command line
    LiteLLMClient("openai/gpt-4o-mini", api_base=listener.base_url).complete([{"role": "user", "content": "ho"}])
    assert _leaked(listener)


def test_a_visitor_with_their_own_key_reaches_their_endpoint_with_their_key_only(canary_env, listener):
    mine = "sk-visitor-own-key-99999"
    LiteLLMClient("openai/gpt-4o-mini", api_base=listener.base_url, api_key=mine).complete(
        [{"role": "user", "content": "hi"}]
    )
    assert any(mine in h.get("authorization", "") for h in listener.headers) and not _leaked(listener)


def test_an_echoed_key_is_scrubbed_from_the_reply(canary_env, listener):
    mine = "sk-visitor-echoed-key-777"
    listener.reply = lambda messages, body: f"the header was Bearer {mine} and {CANARY}"
    text = (
        LiteLLMClient("openai/gpt-4o-mini", api_base=listener.base_url, api_key=mine)
        .complete([{"role": "user", "content": "hi"}])
        .text
    )
    assert mine not in text and CANARY not in text and "***" in text


def test_a_missing_key_is_refused_at_once_not_retried(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = LiteLLMClient("openai/gpt-4o-mini", max_attempts=4, backoff=5.0)
    with pytest.raises(LLMError, match="no API key. Set OPENAI_API_KEY") as err:
        client.complete([{"role": "user", "content": "hi"}])
    assert err.value.kind == "auth" and getattr(err.value, "attempts", 1) == 1


# --- through the app ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sec_workspace(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("sec_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    return root


def _app(monkeypatch, root, demo: bool, **env) -> AppTest:
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    if demo:
        monkeypatch.setenv("TRIPLET_LENS_DEMO", "1")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception
    return at


def _forged(widget):
    """What a forged websocket message does: the server gets a value for a widget the page drew
    disabled (AppTest refuses disabled widgets; the protocol itself does not)."""
    widget.proto.disabled = False
    return widget


def _goto(at: AppTest, page: str) -> AppTest:
    switch_to(at, page).run()
    return at


def _ask(at: AppTest) -> AppTest:
    _goto(at, "ask")
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("demo", [False, True])
def test_settings_form_and_forged_widgets_never_send_the_canary(sec_workspace, monkeypatch, listener, demo):
    at = _goto(_app(monkeypatch, sec_workspace, demo), "settings")
    sess = at.session_state["session"]
    # typed (normal mode) or forged through the websocket (demo mode: the widgets are disabled)
    _forged(at.text_input(key="set_model")).set_value("openai/gpt-4o-mini")
    _forged(at.text_input(key="set_api_base")).set_value(listener.base_url)
    _forged(at.button(key="set_apply")).click().run()
    assert not at.exception
    if demo:  # Streamlit drops values for disabled widgets; the session would refuse them anyway
        assert (sess.model, sess.api_base) == ("", "")  # the operator's configuration stands
    else:
        assert any("not one the operator configured" in e.value for e in at.error), [e.value for e in at.error]
    _ask(at)
    at.query_params["api_base"] = listener.base_url  # a crafted link
    at.query_params["model"] = "openai/gpt-4o-mini"
    _ask(at)
    assert not _leaked(listener) and listener.requests == []


def test_control_the_operators_listed_base_does_get_the_key(sec_workspace, monkeypatch, listener):
    at = _goto(_app(monkeypatch, sec_workspace, False, TRIPLET_LENS_API_BASES=listener.base_url), "settings")
    at.text_input(key="set_model").set_value("openai/gpt-4o-mini")
    at.text_input(key="set_api_base").set_value(listener.base_url)
    at.button(key="set_apply").click().run()
    assert any("answered" in m.value for m in at.success), [e.value for e in at.error]
    assert _leaked(listener)


def test_demo_configuration_cannot_change_through_any_widget(sec_workspace, monkeypatch):
    at = _goto(_app(monkeypatch, sec_workspace, True), "settings")
    sess = at.session_state["session"]
    before = (sess.model, sess.api_base, sess.key_set, sess.settings_for("t2rag"))
    _forged(at.text_input(key="set_api_key")).set_value("sk-forged-key-000000")
    _forged(at.button(key="set_apply")).click().run()
    _forged(at.number_input(key="settings_t2rag_k")).set_value(50)
    _forged(at.button(key="settings_t2rag_apply")).click().run()
    _forged(at.button(key="reset_t2rag")).click().run()
    _forged(at.button(key="set_offline")).click().run()
    assert not at.exception
    assert (sess.model, sess.api_base, sess.key_set, sess.settings_for("t2rag")) == before
    # and the engine refuses what a page might pass on, whatever the widgets did
    from engine.session import ConfigLocked

    for change in (
        lambda: sess.set_model("openai/gpt-4o-mini", "http://127.0.0.1:9/v1", "sk-x-123456"),
        lambda: sess.set_method_settings("t2rag", k=50),
        lambda: sess.reset_method_settings("t2rag"),
        sess.forget_key,
    ):
        with pytest.raises(ConfigLocked, match="read-only demo"):
            change()
    assert (sess.model, sess.api_base, sess.key_set, sess.settings_for("t2rag")) == before


def test_budget_caps_refuse_the_next_question_and_survive_a_restart(sec_workspace, monkeypatch, tmp_path):
    from engine.session.budget import Budget, BudgetExceeded

    b = Budget(tmp_path / "budget.sqlite", {"questions": 2}, {"tokens": 100})
    for _ in range(2):
        b.check("s1")
        b.record("s1", questions=1, tokens=10)
    with pytest.raises(BudgetExceeded, match="this session.*questions: 2"):
        b.check("s1")
    b.check("s2")  # another session has its own count
    b.record("s2", questions=1, tokens=90)
    again = Budget(tmp_path / "budget.sqlite", {"questions": 2}, {"tokens": 100})  # a restart
    with pytest.raises(BudgetExceeded, match="this session"):
        again.check("s1")
    with pytest.raises(BudgetExceeded, match="this server today.*tokens: 100"):
        again.check("s3")
    # through the app: one question per session, the second is refused with the reason
    at = _app(monkeypatch, sec_workspace, True, TRIPLET_LENS_CAP_SESSION="questions=1")
    _ask(at)
    assert at.session_state["ask_result"] is not None and not at.error
    _ask(at)
    assert any("budget for this session is used up" in e.value for e in at.error), [e.value for e in at.error]


def test_a_visitor_key_does_not_open_an_unlisted_base_for_providers_signing_with_server_credentials(
    canary_env, listener
):
    for model in ("bedrock/anthropic.claude-3-haiku", "vertex_ai/gemini-pro", "sagemaker/endpoint-x"):
        client = LiteLLMClient(model, api_base=listener.base_url, api_key="sk-visitor-own-key-99999")
        with pytest.raises(LLMError, match="not one the operator configured"):
            client.complete([{"role": "user", "content": "hi"}])
    assert listener.requests == []
