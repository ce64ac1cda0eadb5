"""Every page's primary action with the values the page opens with: pressed once, it shows a
result and no error box or exception (Evaluate's "Run evaluation" failed with its defaults and no
test had pressed it without first changing a setting). Also: the question box submits on its first
press, refuses an empty or too-long question beside the box with the limit, and a new question
clears the old result. Offline reasoner, a small real HotpotQA corpus in a temp workspace."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import answer_boxes as _answer_boxes
from tests._apptest import goto as _goto
from tests._apptest import ok as _ok

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize(
    "page,button,result_key,method",
    [("ask", "ask_go", "ask_result", "t2rag"), ("kg2rag", "kg2rag_go", "kg2rag_result", "kg2rag")],
)
def test_a_method_page_answers_its_default_question(app, page, button, result_key, method):
    at = _goto(app, page)
    at.button(key=button).click().run()
    _ok(at)
    run = at.session_state[result_key]
    assert [r.method for r in run.results] == [method] and run.gold  # the first corpus question
    assert len(_answer_boxes(at)) == 1


def test_compare_answers_its_default_question_with_both_methods(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    assert [r.method for r in at.session_state["compare"].results] == ["t2rag", "kg2rag"]
    assert len(_answer_boxes(at)) >= 2


@pytest.mark.parametrize("scope", ["First N", "All", "Random N"])
def test_evaluate_runs_with_its_default_settings(app, scope):
    at = _goto(app, "evaluate")
    assert at.radio(key="eval_scope").value == "First N"  # what the page opens with
    if scope != "First N":
        at.radio(key="eval_scope").set_value(scope).run()
    at.button(key="eval_go").click().run()
    _ok(at)
    summary = at.session_state["eval_report"]
    assert [m.method for m in summary.methods] == ["t2rag", "kg2rag"]
    assert all(m.n_questions == 2 and m.n_done == 2 for m in summary.methods)  # N defaults to min(5, 2)
    assert list(at.dataframe[0].value["method"]) == ["T2RAG", "KG2RAG"]


def test_settings_apply_with_the_defaults_keeps_the_offline_reasoner(app):
    at = _goto(app, "settings")
    at.button(key="set_apply").click().run()
    _ok(at)
    assert any("Reasoner: offline" in s.value for s in at.success), [s.value for s in at.success]
    at.button(key="settings_t2rag_apply").click().run()
    _ok(at)
    assert any(s.value == "T2RAG settings applied." for s in at.success)
    assert at.session_state["session"].settings_for("t2rag").k == 5


def test_presentation_starts_from_a_saved_comparison_and_walks_it(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    at.button(key="cmp_save").click().run()
    _ok(at)
    at.session_state["compare"] = None
    at.button(key="w_present_on").click().run()
    _ok(at)
    at.button(key="present_start").click().run()  # the saved run the picker opens on
    _ok(at)
    steps = 1
    while not at.button(key="present_step_next").disabled:
        at.button(key="present_step_next").click().run()
        _ok(at)
        steps += 1
    assert steps > 2 and len(_answer_boxes(at)) == 2


def test_corpus_creation_ends_with_extract_triplets_now(app, app_workspace):
    text = (
        b"Ada Lovelace was an English mathematician. She worked with Charles Babbage on the "
        b"Analytical Engine. Charles Babbage was born in London."
    )
    app.text_input(key="create_name").input("fresh")
    app.file_uploader(key="create_files").set_value(("ada.txt", text, "text/plain"))
    app.button(key="create_go").click().run()
    _ok(app)
    assert app.session_state["corpus"] == "fresh"
    go = app.button(key="create_extract")
    assert go.label == "⚡ Extract triplets now"
    go.click().run()
    _ok(app)
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Pending"]) == 0 and int(metrics["Triplets"]) > 0
    assert not [b for b in app.button if b.key == "create_extract"]  # the step is done: the button goes


def _type(at: AppTest, page: str, text: str) -> AppTest:
    at.radio(key=f"{page}_q_mode").set_value("Type a question").run()
    at.text_input(key=f"{page}_q_text").input(text)
    at.button(key=f"{page}_go").click().run()  # one press: the text and the click arrive together
    return at


def test_a_typed_question_runs_on_the_first_press_and_bad_ones_are_refused_beside_the_box(app):
    from engine.core.limits import MAX_QUESTION_CHARS

    at = _goto(app, "ask")
    at.radio(key="ask_q_mode").set_value("Type a question").run()
    assert any(f"Up to {MAX_QUESTION_CHARS:,} characters" in c.value for c in at.caption)  # before any press
    _type(at, "ask", "What kind of demon is Lilu?")
    _ok(at)
    assert at.session_state["ask_result"].question == "What kind of demon is Lilu?"
    assert len(_answer_boxes(at)) == 1

    _type(at, "ask", "   ")
    assert [e.value for e in at.error] == [
        f"The question is empty: type one (up to {MAX_QUESTION_CHARS:,} characters)."
    ]
    assert at.session_state["ask_result"] is None and not _answer_boxes(at)  # the old result is gone

    _type(at, "ask", "x" * 3000)
    assert [e.value for e in at.error] == [f"The question has 3,000 characters; the limit is {MAX_QUESTION_CHARS:,}."]
    assert not at.exception and not _answer_boxes(at)
