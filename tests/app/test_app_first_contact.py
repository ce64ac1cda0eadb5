"""AppTest: first contact with the app (the landing card's one click, tabs that stay open).
Shares the app fixtures of tests/app/test_app_pages.py."""

from __future__ import annotations

from tests._apptest import answer_boxes as _answer_boxes
from tests._apptest import goto as _goto
from tests._apptest import ok as _ok


def test_the_landing_card_runs_a_sample_question_through_compare_in_one_click(app):
    at = _goto(app, "corpora")
    at.button(key="landing_go").click().run()
    _ok(at)
    run = at.session_state["compare"]
    assert run is not None and [r.method for r in run.results] == ["t2rag", "kg2rag"] and run.gold
    assert any(t.value.endswith("Compare") for t in at.title)
    assert len(_answer_boxes(at)) >= 2
    assert at.session_state["cmp_autorun"] is False  # once, not on every redraw


def test_the_corpora_tabs_keep_the_open_tab_across_reruns(app):
    at = _goto(app, "corpora")
    at.session_state["corpus_tab"] = "Extraction"
    at.run()
    _ok(at)
    at.run()  # e.g. the rerun after an action's success message
    assert at.session_state["corpus_tab"] == "Extraction"
