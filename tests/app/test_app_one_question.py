"""One question everywhere (AppTest, offline reasoner): the question, Compare's methods and the step
travel across pages, into presentation mode and back, and survive a reload; presenting from a
method's page presents that page's run; Compare takes any set of methods from a link. Before: the
question was lost between pages (Compare -> Ask showed the default question), presentation mode
from KG2RAG said "Nothing to present yet", a reload left presentation mode, and a link kept one
baseline at most."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import goto as _goto
from tests._apptest import next_step as _next
from tests._apptest import ok as _ok
from tests._apptest import open_link as _open_link

pytestmark = pytest.mark.timeout(600)


def _compare_second_question(app) -> tuple[AppTest, str]:
    at = _goto(app, "compare")
    at.selectbox(key="cmp_q_qid").select_index(1).run()
    at.button(key="cmp_go").click().run()
    _ok(at)
    return at, at.session_state["compare"].qid


def _presenting(at: AppTest) -> bool:
    return any(b.key == "present_exit" for b in at.button)


def test_the_question_follows_the_user_across_pages(app):
    at, qid = _compare_second_question(app)
    compared = at.session_state["compare"]
    for page, prefix, result_key, method in (
        ("ask", "ask_q", "ask_result", "t2rag"),
        ("kg2rag", "kg2rag_q", "kg2rag_result", "kg2rag"),
    ):
        at = _goto(at, page)
        assert at.selectbox(key=f"{prefix}_qid").value == qid, page
        shown = at.session_state[result_key]  # the comparison's own result of this method, not a new run
        assert shown is not None and shown.results == [compared.by_method(method)], page
        assert at.query_params["q"] == qid
    at = _goto(at, "settings")
    assert at.query_params["q"] == qid  # a reload here keeps the question too
    at = _goto(at, "compare")
    assert at.selectbox(key="cmp_q_qid").value == qid
    assert at.session_state["compare"] is compared
    # a new question asked on Ask is the question on Compare, where the old comparison is not shown
    at = _goto(at, "ask")
    at.selectbox(key="ask_q_qid").select_index(0).run()
    other = at.selectbox(key="ask_q_qid").value
    at.button(key="ask_go").click().run()
    at = _goto(at, "compare")
    assert at.selectbox(key="cmp_q_qid").value == other != qid
    assert not any("tl-verdict-final" in h.proto.body for h in at.get("html"))  # not the old question's verdict
    assert at.query_params["q"] == other


def test_after_a_reload_on_settings_compare_shows_the_question_and_methods(app, app_workspace, monkeypatch):
    at, qid = _compare_second_question(app)
    at.multiselect(key="cmp_methods").select("bm25").run()
    at = _goto(at, "settings")
    link = dict(at.query_params)
    assert link["q"] == qid and link["methods"] == "t2rag,kg2rag,bm25", link
    again = _open_link(app_workspace, monkeypatch, "settings", link)
    again = _goto(again, "compare")
    assert again.selectbox(key="cmp_q_qid").value == qid
    assert again.multiselect(key="cmp_methods").value == ["t2rag", "kg2rag", "bm25"]


def test_presenting_from_kg2rag_presents_its_run_and_exit_comes_back(app):
    at = _goto(app, "kg2rag")
    at.button(key="kg2rag_go").click().run()
    run = at.session_state["kg2rag_result"]
    at.button(key="w_present_on").click().run()
    _ok(at)
    assert _presenting(at)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "Nothing to present" not in " ".join(i.value for i in at.info)
    assert "Methods: KG2RAG" in text, text[:500]
    assert at.session_state["present_run"] is run
    at.button(key="present_exit").click().run()
    _ok(at)
    assert not _presenting(at) and at.session_state["kg2rag_result"] is run


def test_presentation_survives_a_reload_on_the_same_run_and_step(app, app_workspace, monkeypatch):
    at, qid = _compare_second_question(app)
    at.button(key="w_present_on").click().run()
    _next(at, "present_step")
    _next(at, "present_step")
    link = dict(at.query_params)
    assert link["present"] == "1" and link["from"] == "compare" and link["q"] == qid and link["step"] == "2"
    again = _open_link(app_workspace, monkeypatch, "compare", link)  # app.py routes it to presentation
    assert _presenting(again)
    run = again.session_state["present_run"]
    assert run is not None and run.qid == qid and [r.method for r in run.results] == ["t2rag", "kg2rag"]
    assert again.session_state["present_step"] == 2
    assert dict(again.query_params) == link
    again.button(key="present_exit").click().run()  # and back: Compare shows the presented run
    _ok(again)
    assert not _presenting(again) and again.session_state["compare"] is run
    assert again.selectbox(key="cmp_q_qid").value == qid


def test_compare_runs_every_method_a_link_names(app_workspace, monkeypatch):
    from components.shell.link import compare_options

    wanted = "t2rag,kg2rag,hipporag2,bm25"
    assert set(wanted.split(",")) <= set(compare_options())
    at = _open_link(app_workspace, monkeypatch, "compare", {"methods": wanted})  # no question: nothing runs
    assert at.multiselect(key="cmp_methods").value == wanted.split(",")
    assert at.session_state["compare"] is None
    at.button(key="cmp_go").click().run()
    _ok(at)
    assert [r.method for r in at.session_state["compare"].results] == wanted.split(",")
    link = dict(at.query_params)
    assert link["methods"] == wanted
    again = _open_link(app_workspace, monkeypatch, "compare", link)
    assert [r.method for r in again.session_state["compare"].results] == wanted.split(",")
    boxes = [h.proto.body for h in again.get("html") if "tl-answer" in h.proto.body]
    assert len(boxes) >= 4  # one answer per method, side by side
