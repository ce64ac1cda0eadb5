"""Issue 11: a saved run or an uploaded trace naming an endpoint never sends the operator's key
there (the remaining "ways a visitor can name an endpoint" beside tests/security/test_security_endpoints.py,
which covers the Settings form, forged widgets and query parameters).

The operator's model runs at an "operator" loopback server with a canary key in the environment; a
"listener" on another port stands for the visitor's endpoint. A real T2RAG trace of the corpus is
given `model`, `api_base`, `base_url` and `reasoner` fields naming the listener, saved under the
corpus's runs/ (then opened from the picker) or uploaded on the Ask page; then a question is asked.
The listener must receive nothing, in normal and in demo mode, and the operator's configuration is
what ran. (A control with the listener listed: tests/security/test_security_endpoints.py.)
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests._app_helpers import REPO, build_small_corpus
from tests._apptest import switch_to
from tests.loopback import LoopbackServer

pytestmark = pytest.mark.timeout(600)
APP = str(REPO / "app.py")
CORPUS = "hotpotqa-sample"
MODEL = "openai/gpt-4o-mini"
CANARY = f"sk-canary-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def sec_workspace(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("sec_traces_ws")
    build_small_corpus(root, CORPUS, questions=1, embedder=embedder)
    return root


@pytest.fixture()
def operator_srv():
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture()
def listener():
    with LoopbackServer() as srv:
        yield srv


def start_app(workspace: Path, monkeypatch, operator_srv: LoopbackServer, *, demo: bool) -> AppTest:
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("TRIPLET_LENS_MODEL", MODEL)
    monkeypatch.setenv("TRIPLET_LENS_API_BASE", operator_srv.base_url)
    for var in ("TRIPLET_LENS_DEMO", "TRIPLET_LENS_API_BASES", "TRIPLET_LENS_CAP_SESSION", "TRIPLET_LENS_CAP_DAY"):
        monkeypatch.delenv(var, raising=False)
    if demo:
        monkeypatch.setenv("TRIPLET_LENS_DEMO", "1")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    switch_to(at, page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def forge(widget):
    """What a hand-made websocket message can do: act on a widget the page drew disabled."""
    widget.proto.disabled = False
    return widget


def hostile_trace(workspace: Path, embedder, base: str) -> str:
    """A real T2RAG trace of this corpus, with fields naming the listener as its endpoint."""
    from engine.methods import build_method, method_class
    from engine.methods.base import result_to_json
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    corpus = Workspace(workspace, embedder=embedder).open(CORPUS)
    q = corpus.questions()[0]
    result = build_method("t2rag", make_reasoner("", embedder=embedder)).answer(
        q.question, corpus, method_class("t2rag").settings_cls()
    )
    data = json.loads(result_to_json(result))
    data.update({"reasoner": MODEL, "model": MODEL, "api_base": base, "api_key": "", "base_url": base})
    corpus.close()
    return json.dumps(data)


def open_hostile_trace(vector: str, at: AppTest, base: str, workspace: Path, embedder, demo: bool) -> AppTest:
    if vector == "saved_run":
        runs = workspace / CORPUS / "runs"
        runs.mkdir(exist_ok=True)
        name = f"t2rag-hostile-{uuid.uuid4().hex[:6]}.json"
        (runs / name).write_text(hostile_trace(workspace, embedder, base))
        at = goto(at, "ask")
        pick = at.selectbox(key="ask_open_pick")  # labelled by question · method · time; valued by file
        pick.set_value(name)
        at.button(key="ask_open_open").click().run()
        assert at.session_state["ask_result"] is not None  # the run opened
        return at
    at = goto(at, "ask")
    up = at.file_uploader(key="ask_open_upload")
    up = forge(up) if demo else up  # uploads are off in the demo: a forged one
    up.set_value(("hostile.json", hostile_trace(workspace, embedder, base).encode(), "application/json")).run()
    if demo:  # Streamlit drops the forged file: no Open button appears
        assert not [b for b in at.button if b.key == "ask_open_open_up"]
        return at
    at.button(key="ask_open_open_up").click().run()
    assert at.session_state["ask_result"] is not None
    return at


def ask(at: AppTest) -> AppTest:
    at = goto(at, "ask")
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("demo", [False, True], ids=["normal", "demo"])
@pytest.mark.parametrize("vector", ["saved_run", "uploaded_trace"])
def test_a_trace_naming_an_endpoint_sends_the_operator_key_nowhere(
    vector, demo, sec_workspace, embedder, monkeypatch, operator_srv, listener
):
    at = start_app(sec_workspace, monkeypatch, operator_srv, demo=demo)
    at = open_hostile_trace(vector, at, listener.base_url, sec_workspace, embedder, demo)
    at = ask(at)
    assert listener.requests == [] and listener.headers == []
    sess = at.session_state["session"]
    assert (sess.model, sess.api_base) == (MODEL, operator_srv.base_url)
    # the question went to the operator's endpoint, with the operator's key
    assert operator_srv.answered and all(CANARY in h.get("authorization", "") for h in operator_srv.headers)
