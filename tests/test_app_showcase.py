"""AppTest: the demo path's showcase pieces. The verdict strip on Compare (per step and at the end),
in presentation mode and in the export; page state kept in the URL. Shares the app fixtures of
tests/test_app_pages.py (a small real HotpotQA corpus, offline reasoner)."""
from __future__ import annotations

import re

from tests.test_app_pages import _always_run_app_py, _goto, _next, _ok, app, app_workspace  # noqa: F401


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
    from components.export import export_html

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
