"""AppTest fixtures and helpers, shared by every module that drives the app in-process (registered
as a pytest plugin in tests/conftest.py, so a module uses a fixture by naming it; nothing is
imported for its side effect).

    def test_x(app):                   # the app's first page over a small real corpus
        at = goto(app, "ask")          # switch page, run, no exception or error box
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._app_helpers import REPO, build_small_corpus

APP = str(REPO / "app.py")
CORPUS = "hotpotqa-sample"  # the name the app preselects


@pytest.fixture(autouse=True)
def always_run_app_py(monkeypatch):
    """AppTest re-detects the legacy `pages/` folder on every run() and then runs the page file
    alone (a real server does that only until app.py's first st.navigation call). Pages recover
    by rerunning (state.ensure_app), but a rerun drops the button click being tested; so the
    legacy mode stays off, as it is in a running server. Autouse: harmless where no app runs."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(scope="module")
def app_workspace(tmp_path_factory, embedder) -> Path:
    """A workspace with the preselected corpus (20 HotpotQA paragraphs, 2 questions), one per module."""
    root = tmp_path_factory.mktemp("app_ws")
    build_small_corpus(root, CORPUS, questions=2, embedder=embedder)
    return root


@pytest.fixture()
def app(app_workspace, monkeypatch):
    """The app's first page, run once, offline reasoner, outside demo mode."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(app_workspace))
    monkeypatch.delenv("TRIPLET_LENS_DEMO", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    ok(at)
    return at


def ok(at) -> None:
    """No exception and no error box on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def switch_to(at, page: str):
    """Switch `at` (already run once) to the page at URL path `page`, without running it. A method's
    own page is the one file pages/method.py registered under the method's path, and AppTest picks
    a file, not a path: the page's script hash (its URL path's, as Streamlit computes it) says which."""
    from pathlib import Path

    if (Path(__file__).resolve().parents[1] / "pages" / f"{page}.py").exists():
        return at.switch_page(f"pages/{page}.py")
    from streamlit.util import calc_hash

    at.switch_page("pages/method.py")
    at._page_hash = calc_hash(page)
    return at


def goto(at, page: str):
    switch_to(at, page)
    at.run()
    ok(at)
    return at


def open_link(app_workspace, monkeypatch, page: str, params: dict[str, str]):
    """A fresh session opening `/<page>?<params>` over `app_workspace`: a reload, or the link in a new
    tab (no demo mode, no model from the environment). AppTest needs one run before it can switch
    pages, so the session is marked unread and the link's parameters are set again for the page's run."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(app_workspace))
    monkeypatch.delenv("TRIPLET_LENS_DEMO", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.session_state["url_restored"] = False
    at.query_params = dict(params)
    switch_to(at, page)
    at.run()
    ok(at)
    return at


def next_step(at, state_key: str) -> bool:
    """Press a stepper's Next; False when it is disabled (the last step)."""
    btn = at.button(key=f"{state_key}_next")
    if btn.disabled:
        return False
    btn.click().run()
    ok(at)
    return True


def answer_boxes(at) -> list[str]:
    """The answer boxes on the page (components.widgets.answer_box), as their HTML."""
    return [h.proto.body for h in at.get("html") if "tl-answer" in h.proto.body]
