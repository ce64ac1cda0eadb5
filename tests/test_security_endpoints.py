"""The operator's key never reaches an endpoint a visitor names (issue 11, the trust boundary).

Setup of every test: a canary key in the server's environment (OPENAI_API_KEY), the operator's
model at an "operator" loopback server (TRIPLET_LENS_MODEL / TRIPLET_LENS_API_BASE), and a
"listener" on another loopback port standing for the visitor's endpoint. Each way a visitor can
name an endpoint is tried, in normal and in demo mode, and then a question is asked:

* the Settings form (typed values; in demo the widgets are disabled, so the values are forged the
  way a hand-made websocket message would: Streamlit itself drops values for disabled widgets),
* forged widget values reaching the page: in demo mode the page is made to draw its widgets
  enabled (a page bug), so only the engine's lock (`engine.session.ConfigLocked`) stands,
* a saved run and an uploaded trace naming the listener as model endpoint,
* query parameters (`?model=...&api_base=...`).

The listener must receive nothing at all. A control run with the listener in the operator's list
(TRIPLET_LENS_API_BASES) does receive the canary: the tests can fail.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests._app_helpers import REPO, build_small_corpus
from tests.loopback import LoopbackServer

pytestmark = pytest.mark.timeout(600)
APP = str(REPO / "app.py")
CORPUS = "hotpotqa-sample"
MODEL = "openai/gpt-4o-mini"
CANARY = f"sk-canary-{uuid.uuid4().hex}"
VECTORS = ("form", "forged", "saved_run", "uploaded_trace", "query_params")


@pytest.fixture(scope="module")
def sec_workspace(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("sec_ws")
    build_small_corpus(root, CORPUS, questions=1, embedder=embedder)
    return root


@pytest.fixture(autouse=True)
def _always_run_app_py(monkeypatch):
    """As in test_app_pages: keep Streamlit's legacy pages/ mode off so clicks are not dropped."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture()
def operator_srv():
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture()
def listener():
    with LoopbackServer() as srv:
        yield srv


def start_app(workspace: Path, monkeypatch, operator_srv: LoopbackServer, *, demo: bool, allowed: str = "",
              query: dict | None = None) -> AppTest:
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("TRIPLET_LENS_MODEL", MODEL)
    monkeypatch.setenv("TRIPLET_LENS_API_BASE", operator_srv.base_url)
    for var in ("TRIPLET_LENS_DEMO", "TRIPLET_LENS_API_BASES", "TRIPLET_LENS_CAP_SESSION", "TRIPLET_LENS_CAP_DAY"):
        monkeypatch.delenv(var, raising=False)
    if demo:
        monkeypatch.setenv("TRIPLET_LENS_DEMO", "1")
    if allowed:
        monkeypatch.setenv("TRIPLET_LENS_API_BASES", allowed)
    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def forge(widget):
    """What a hand-made websocket message can do: act on a widget the page drew disabled."""
    widget.proto.disabled = False
    return widget


def hostile_trace(workspace: Path, embedder, base: str) -> str:
    """A real T2RAG trace of this corpus, with fields naming the listener as its endpoint."""
    from engine.llm import make_reasoner
    from engine.methods import build_method, method_class
    from engine.methods.base import result_to_json
    from engine.store import Workspace

    corpus = Workspace(workspace, embedder=embedder).open(CORPUS)
    q = corpus.questions()[0]
    result = build_method("t2rag", make_reasoner("", embedder=embedder)).answer(
        q.question, corpus, method_class("t2rag").settings_cls())
    data = json.loads(result_to_json(result))
    data.update({"reasoner": MODEL, "model": MODEL, "api_base": base, "api_key": "", "base_url": base})
    corpus.close()
    return json.dumps(data)


def settings_vector(at: AppTest, base: str, *, forged: bool) -> AppTest:
    at = goto(at, "settings")
    fields = [at.text_input(key="set_model"), at.text_input(key="set_api_base")]
    apply = at.button(key="set_apply")
    if forged:
        fields, apply = [forge(f) for f in fields], forge(apply)
    fields[0].input(MODEL)
    fields[1].input(base)
    apply.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def try_vector(vector: str, at: AppTest, base: str, workspace: Path, embedder, demo: bool) -> AppTest:
    if vector == "form":
        # a demo visitor cannot type into the disabled form; what they could send is the forged case
        return settings_vector(at, base, forged=demo)
    if vector == "forged":
        # in demo the test has made the page draw enabled widgets (a page bug): only the engine's lock holds
        return settings_vector(at, base, forged=True)
    if vector == "saved_run":
        runs = workspace / CORPUS / "runs"
        runs.mkdir(exist_ok=True)
        (runs / f"t2rag-hostile-{uuid.uuid4().hex[:6]}.json").write_text(hostile_trace(workspace, embedder, base))
        at = goto(at, "ask")
        at.selectbox(key="ask_open_pick").set_value(next(o for o in at.selectbox(key="ask_open_pick").options
                                                         if "hostile" in o))
        at.button(key="ask_open_open").click().run()
        assert at.session_state["ask_result"] is not None  # the run opened
        return at
    if vector == "uploaded_trace":
        at = goto(at, "ask")
        up = at.file_uploader(key="ask_open_upload")
        up = forge(up) if demo else up
        up.set_value(("hostile.json", hostile_trace(workspace, embedder, base).encode(), "application/json")).run()
        if demo:  # uploads are off in the demo: Streamlit drops the forged file, no Open button appears
            assert not [b for b in at.button if b.key == "ask_open_open_up"]
            return at
        at.button(key="ask_open_open_up").click().run()
        assert at.session_state["ask_result"] is not None
        return at
    if vector == "query_params":
        return at  # the parameters were given when the app started
    raise AssertionError(vector)


def ask(at: AppTest) -> AppTest:
    at = goto(at, "ask")
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("demo", [False, True], ids=["normal", "demo"])
@pytest.mark.parametrize("vector", VECTORS)
def test_no_way_of_naming_an_endpoint_sends_the_operator_key_there(vector, demo, sec_workspace, embedder,
                                                                    monkeypatch, operator_srv, listener):
    query = {"model": MODEL, "api_base": listener.base_url, "base_url": listener.base_url} \
        if vector == "query_params" else None
    at = start_app(sec_workspace, monkeypatch, operator_srv, demo=demo, query=query)
    if vector == "forged" and demo:
        monkeypatch.setattr("components.state.is_demo", lambda: False)
    at = try_vector(vector, at, listener.base_url, sec_workspace, embedder, demo)
    errors = " ".join(e.value for e in at.error)
    if vector in ("form", "forged") and not demo:
        assert "refused" in errors and "TRIPLET_LENS_API_BASES" in errors  # the engine refuses at Apply
    if vector == "forged" and demo:
        assert "read-only demo" in errors  # the engine's lock, with the widgets' lock gone
    at = ask(at)
    assert listener.requests == [] and listener.headers == []
    assert not any(CANARY in json.dumps(h) for h in listener.headers)
    sess = at.session_state["session"]
    if demo or vector not in ("form", "forged"):
        # the operator's configuration is what ran, and the operator's server got the question
        assert (sess.config.model, sess.config.api_base) == (MODEL, operator_srv.base_url)
        assert operator_srv.answered and all(CANARY in h.get("authorization", "") for h in operator_srv.headers)


def test_control_the_listener_in_the_operators_list_does_receive_the_key(sec_workspace, monkeypatch,
                                                                          operator_srv, listener):
    at = start_app(sec_workspace, monkeypatch, operator_srv, demo=False, allowed=listener.base_url)
    at = settings_vector(at, listener.base_url, forged=False)
    assert any(s.value.startswith("Reasoner: ok") for s in at.success), [e.value for e in at.error]
    ask(at)
    assert listener.answered and any(CANARY in h.get("authorization", "") for h in listener.headers)


def test_a_visitor_with_their_own_key_may_use_their_own_endpoint(sec_workspace, monkeypatch, operator_srv,
                                                                 listener):
    at = start_app(sec_workspace, monkeypatch, operator_srv, demo=False)
    at = goto(at, "settings")
    at.text_input(key="set_model").input(MODEL)
    at.text_input(key="set_api_base").input(listener.base_url)
    at.text_input(key="set_api_key").input("sk-visitor-own-0000000")
    at.button(key="set_apply").click().run()
    assert any(s.value.startswith("Reasoner: ok") for s in at.success), [e.value for e in at.error]
    ask(at)
    auth = [h.get("authorization", "") for h in listener.headers]
    assert auth and all("sk-visitor-own-0000000" in a and CANARY not in a for a in auth)


# --- the engine's door, without the app --------------------------------------------------------

def test_every_litellm_entry_point_refuses_an_unlisted_base_before_sending(monkeypatch, listener):
    from engine.embed.litellm_embed import LiteLLMEmbedder
    from engine.llm.base import LLMError
    from engine.llm.litellm_client import LiteLLMClient
    from engine.rerank import LiteLLMReranker, RerankerError
    from engine.embed import EmbedderError

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv("TRIPLET_LENS_API_BASES", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_API_BASE", raising=False)
    with pytest.raises(LLMError, match="refused") as err:
        LiteLLMClient(MODEL, api_base=listener.base_url).complete([{"role": "user", "content": "hi"}])
    assert err.value.kind == "auth" and not err.value.retryable
    with pytest.raises(EmbedderError, match="refused"):
        LiteLLMEmbedder("openai/text-embedding-3-small", api_base=listener.base_url)
    with pytest.raises(RerankerError, match="refused"):
        LiteLLMReranker("cohere/rerank-english-v3.0", api_base=listener.base_url).score("q", ["a"])
    # listed with a trailing slash and an upper-case scheme, it is the same endpoint
    monkeypatch.setenv("TRIPLET_LENS_API_BASES", "HTTP" + listener.base_url[4:] + "/")
    c = LiteLLMClient(MODEL, api_base=listener.base_url).complete([{"role": "user", "content": "hi"}])
    assert c.text and listener.requests
    # ... and the extra_params of a client cannot smuggle a base past the check
    listener.requests.clear()
    monkeypatch.delenv("TRIPLET_LENS_API_BASES")
    with pytest.raises(LLMError, match="refused"):
        LiteLLMClient(MODEL, extra_params={"base_url": listener.base_url}).complete([{"role": "user", "content": "x"}])
    assert listener.requests == []


def test_the_cli_is_a_local_user_and_says_so():
    from engine.cli import build_parser
    from engine.llm.litellm_call import current_policy, local_user_policy, using_policy

    assert "TRIPLET_LENS_API_BASES" in build_parser().format_help()
    with using_policy(local_user_policy()):
        assert current_policy().trust_any_base
    assert not current_policy().trust_any_base  # restored after the command


def test_a_key_echoed_in_a_reply_never_reaches_the_answer(monkeypatch, listener):
    from engine.llm.litellm_client import LiteLLMClient

    monkeypatch.setenv("TRIPLET_LENS_API_BASES", listener.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    listener.reply = lambda messages, body: f"your header was Bearer {CANARY} and {CANARY[-12:]}"
    c = LiteLLMClient(MODEL, api_base=listener.base_url).complete([{"role": "user", "content": "echo"}])
    assert CANARY not in c.text and "***" in c.text


def test_a_missing_key_is_one_fatal_error_not_four_retries(monkeypatch):
    import time

    from engine.llm.base import LLMError
    from engine.llm.litellm_client import LiteLLMClient

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    t0 = time.perf_counter()
    with pytest.raises(LLMError, match="no API key.*OPENAI_API_KEY") as err:
        LiteLLMClient(MODEL, backoff=1.0).complete([{"role": "user", "content": "hi"}])
    assert err.value.kind == "auth" and time.perf_counter() - t0 < 1.0
