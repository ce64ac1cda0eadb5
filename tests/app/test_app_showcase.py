"""AppTest: the demo path's showcase pieces. The verdict strip on Compare (per step and at the end),
in presentation mode and in the export; page state kept in the URL. Shares the app fixtures of
tests/app/test_app_pages.py (a small real HotpotQA corpus, offline reasoner)."""

from __future__ import annotations

import re

from tests._apptest import goto as _goto
from tests._apptest import next_step as _next
from tests._apptest import ok as _ok
from tests._apptest import open_link as _open_link


def _strips(at) -> list[str]:
    return [h.proto.body for h in at.get("html") if "tl-verdict" in h.proto.body]


def _lines(body: str) -> dict[str, str]:
    """method -> its sentence in a strip."""
    return dict(re.findall(r'data-method="([^"]+)"[^>]*>.*?</span>\s*([^<]*)</div>', body, flags=re.S))


def test_compare_says_who_did_better_and_why_at_the_end_and_per_step(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    run = at.session_state["compare"]
    strips = _strips(at)
    final = next(s for s in strips if "tl-verdict-final" in s)
    lines = _lines(final)
    assert set(lines) == {"t2rag", "kg2rag"}
    assert lines["t2rag"].startswith("T2RAG: ") and lines["kg2rag"].startswith("KG2RAG: ")
    assert "0 LLM calls (offline rules)" in lines["t2rag"]  # what it spent
    assert "gold paragraph" in final  # the corpus question's gold paragraphs are checked
    assert ("answered correctly" in final) or ("did not" in final) or ("Neither" in final)
    for r in run.results:  # each sentence quotes that method's answer
        assert not r.answer or r.answer[:20] in lines[r.method]
    # the first joint step: nothing answered yet, the strip says what was seen so far
    step0 = [s for s in strips if "tl-verdict-step" in s]
    assert step0 and "So far" in step0[0] and "answered" not in step0[0]
    while _next(at, "cmp_sync"):
        pass
    assert sum("tl-verdict-final" in s for s in _strips(at)) == 2  # at the last step the strip is the verdict


def test_presentation_and_export_carry_the_same_verdict(app):
    from components.report.export import export_html

    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    run = at.session_state["compare"]
    final = next(s for s in _strips(at) if "tl-verdict-final" in s)
    at.button(key="w_present_on").click().run()
    _ok(at)
    _next(at, "present_step")  # T2RAG's decomposition: its own line, so far
    assert any('data-outcome="pending"' in s for s in _strips(at))
    while _next(at, "present_step"):
        pass
    shown = next(s for s in _strips(at) if "tl-verdict-final" in s)
    assert _lines(shown) == _lines(final)
    page = export_html(run, corpus=None)
    assert 'class="verdict"' in page and "T2RAG: " in page and "KG2RAG: " in page
    at.button(key="present_exit").click().run()


def test_a_copied_compare_link_opens_the_same_question_methods_and_step(app, app_workspace, monkeypatch):
    at = _goto(app, "compare")
    qids = at.selectbox(key="cmp_q_qid").options
    at.selectbox(key="cmp_q_qid").select_index(1).run()
    at.multiselect(key="cmp_methods").select("semantic").run()
    at.button(key="cmp_go").click().run()
    _next(at, "cmp_sync")
    _next(at, "cmp_sync")
    link = dict(at.query_params)
    run = at.session_state["compare"]
    assert link["corpus"] == "hotpotqa-sample" and link["q"] == run.qid and link["step"] == "2"
    assert link["methods"] == "t2rag,kg2rag,semantic"
    assert qids[1] == run.question  # the picker shows the question, not its id

    other = _open_link(app_workspace, monkeypatch, "compare", link)  # reload / the link in a new tab
    again = other.session_state["compare"]
    assert (
        again is not None
        and again.qid == run.qid
        and [r.method for r in again.results] == ["t2rag", "kg2rag", "semantic"]
    )
    assert other.session_state["cmp_sync"] == 2
    assert other.selectbox(key="cmp_q_qid").value == run.qid  # the picker names the result's question
    assert dict(other.query_params) == link  # and the address bar still names the same view


def test_a_typed_question_in_a_link_is_asked_on_arrival(app_workspace, monkeypatch):
    at = _open_link(app_workspace, monkeypatch, "compare", {"question": "Who is Lilu?", "settings": "kg2rag:paper"})
    run = at.session_state["compare"]
    assert run is not None and run.question == "Who is Lilu?" and not run.qid
    assert at.text_input(key="cmp_q_text").value == "Who is Lilu?"
    assert at.query_params["question"] == "Who is Lilu?"
    assert at.query_params["settings"] == "kg2rag:paper"  # the settings it ran with, kept
    assert run.by_method("kg2rag").trace.preset == "paper"
    # on Ask the link's question is in the box and asked, its result below it
    ask = _open_link(app_workspace, monkeypatch, "ask", {"question": "Who is Lilu?"})
    assert ask.text_input(key="ask_q_text").value == "Who is Lilu?"
    linked = ask.session_state["ask_result"]
    assert linked is not None and linked.question == "Who is Lilu?"


def test_after_leaving_compare_the_picker_shows_the_question_of_the_result(app):
    at = _goto(app, "compare")
    at.selectbox(key="cmp_q_qid").select_index(1).run()
    at.button(key="cmp_go").click().run()
    qid = at.session_state["compare"].qid
    at = _goto(at, "ask")
    at = _goto(at, "compare")
    assert at.session_state["compare"].qid == qid
    assert at.selectbox(key="cmp_q_qid").value == qid
    assert at.query_params["q"] == qid


def test_the_landing_card_says_what_the_product_is_and_offers_a_question(app):
    at = _goto(app, "corpora")
    card = " ".join(h.proto.body for h in at.get("html") if "tl-landing" in h.proto.body)
    assert "Triplet Lens" in card and "<b>T2RAG</b>" in card and "<b>KG2RAG</b>" in card
    # this small corpus holds none of the showcase questions: one suggested question instead
    assert at.button(key="landing_go").label == "Compare the two methods on this question"
