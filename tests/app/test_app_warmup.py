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
    from components.shell import state, warmup

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


def test_server_start_warms_the_default_corpus_before_any_visitor(tmp_path, monkeypatch, embedder):
    """scripts/serve.py's warm-up runs in the server process before any page view: the first visitor's
    session opens on the corpus it warmed and uses the same cached corpus (no second warm-up)."""
    root = tmp_path / "ws"
    build_small_corpus(root, "warmfirst", questions=1, embedder=embedder)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    from components.shell import state, warmup

    thread = warmup.start_at_server_start(build_wait=0)
    thread.join(timeout=120)
    key = (str(root.resolve()), "warmfirst")
    assert warmup.started.get(key) is thread  # warmed with no session at all
    corpus = state._open_corpus(*key)
    assert {"chunks", "propositions"} <= set(corpus._indexes)

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()  # the first visitor
    assert not at.exception
    assert at.session_state["corpus"] == "warmfirst"
    assert warmup.started[key] is thread  # the page view found it warm and started nothing
    assert state._open_corpus(*key) is corpus


def test_server_start_waits_for_the_sample_build(tmp_path, monkeypatch, embedder):
    """While `make run`'s background build makes the sample corpus, the warm-up waits for it and warms
    the sample (the corpus a new session opens on), not another corpus already there."""
    import json
    import os
    import time

    from components.shell import state, warmup
    from engine.session.samples import STATUS_FILE

    root = tmp_path / "ws"
    build_small_corpus(root, "another", questions=1, embedder=embedder)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    status = root / STATUS_FILE
    status.write_text(json.dumps({"pid": os.getpid(), "running": True, "name": state.SAMPLE_CORPUS}))
    thread = warmup.start_at_server_start(build_wait=120)
    time.sleep(1.0)
    assert thread.is_alive()  # still waiting for the build
    build_small_corpus(root, state.SAMPLE_CORPUS, questions=1, embedder=embedder)
    status.write_text(json.dumps({"pid": os.getpid(), "running": False, "name": state.SAMPLE_CORPUS}))
    thread.join(timeout=120)
    assert warmup.started.get((str(root.resolve()), state.SAMPLE_CORPUS)) is thread
    assert (str(root.resolve()), "another") not in warmup.started


def test_launcher_warms_in_the_server_process_before_any_request(tmp_path, embedder):
    """`make run`'s command: the server's own log says the corpus is warm with no request made."""
    import time

    from tests._app_helpers import StreamlitServer

    root = tmp_path / "ws"
    build_small_corpus(root, "served", questions=1, embedder=embedder)
    srv = StreamlitServer(root, tmp_path / "serve.log", launcher=True)
    try:
        deadline = time.monotonic() + 180
        while "warmed corpus 'served'" not in srv.log_path.read_text(errors="replace"):
            assert srv.proc.poll() is None, srv.log_path.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, srv.log_path.read_text(errors="replace")[-2000:]
            time.sleep(0.2)
        srv.wait_healthy()  # and it is the app's server
    finally:
        srv.stop()
