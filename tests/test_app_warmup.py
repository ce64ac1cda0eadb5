"""The app loads the model and the selected corpus's indexes while the landing page is read.

Without the warm-up the first visitor's first question paid for all of it ("Loading models and
indexes", 8.7 s of a 16 s first question in issue 28). Here the first page view of the app starts
the warm-up; by the time the thread is done, the corpus the question will use (the same cached
object the pages use) has both vector indexes in memory and finds the right chunk.
"""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests._app_helpers import REPO, build_small_corpus


def test_first_page_view_warms_the_selected_corpus(tmp_path, monkeypatch, embedder):
    root = tmp_path / "ws"
    build_small_corpus(root, "warmsample", questions=1, embedder=embedder)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert at.session_state["corpus"] == "warmsample"
    from components import state, warmup

    key = (str(root.resolve()), "warmsample")
    assert key in warmup.started  # started by the page view, in the background
    first = warmup.started[key]
    first.join(timeout=120)

    corpus = state._open_corpus(*key)
    assert {"chunks", "propositions"} <= set(corpus._indexes)  # loaded before any question
    q = corpus.questions()[0]
    hits = corpus.search_chunks(corpus.embed([q.question]), 10)[0]
    assert hits  # and they serve the question straight away

    AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()  # a second visitor
    assert warmup.started[key] is first and not first.is_alive()  # not started again: once per process
