"""Offline questions answered in worker processes (engine/session/offload.py, issue 30): the same
result and steps as the calling thread gives, only for what a worker can answer exactly so, a
corpus made anew under the same name read afresh, and a dead worker costing no answer."""

from __future__ import annotations

import os
import shutil
import signal

import pytest

from engine.methods.registry import build_method
from engine.reasoners import make_reasoner
from engine.session import Session, offload
from engine.store import Workspace
from tests._app_helpers import build_small_corpus

pytestmark = pytest.mark.timeout(600)
CORPUS = "hotpotqa-sample"


@pytest.fixture(scope="module")
def root(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("offload_ws")
    build_small_corpus(root, CORPUS, questions=2, embedder=embedder)
    return root


@pytest.fixture()
def pool():
    offload.configure(1)
    yield
    offload.shutdown()


def _in_thread(name, corpus, question):
    reasoner = make_reasoner("", embedder=corpus.embedder, sentence_vectors=corpus.sentence_vectors)
    steps: list[str] = []
    settings = Session(workspace=corpus.path.parent).settings_for(name)
    result = build_method(name, reasoner).answer(question, corpus, settings, on_step=lambda x, p=None: steps.append(x))
    return result, steps


def _in_worker(name, corpus, question):
    reasoner = make_reasoner("", embedder=corpus.embedder, sentence_vectors=corpus.sentence_vectors)
    steps: list[str] = []
    settings = Session(workspace=corpus.path.parent).settings_for(name)
    result = offload.offloaded(name, reasoner, question, corpus, settings, lambda x, p=None: steps.append(x))
    return result, steps


def test_a_worker_answers_as_the_calling_thread_does(root, embedder, pool):
    corpus = Workspace(root, embedder=embedder).open(CORPUS)
    for q in corpus.questions():
        for name in ("t2rag", "kg2rag", "semantic"):
            want, want_steps = _in_thread(name, corpus, q.question)
            got, got_steps = _in_worker(name, corpus, q.question)
            assert got is not None, name  # a worker answered
            assert (got.answer, got.evidence_chunk_ids) == (want.answer, want.evidence_chunk_ids), name
            assert got_steps == want_steps and type(got.trace) is type(want.trace)
    # through the session, as the app asks
    q = corpus.questions()[0].question
    assert Session(workspace=root).answer("t2rag", q, corpus).answer == _in_thread("t2rag", corpus, q)[0].answer


def test_only_the_offline_reasoner_on_a_local_bundled_corpus_goes_to_a_worker(root, embedder, pool, monkeypatch):
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    corpus = Workspace(root, embedder=embedder).open(CORPUS)
    offline = make_reasoner("", embedder=corpus.embedder, sentence_vectors=corpus.sentence_vectors)
    assert offload.eligible(offline, corpus)
    assert not offload.eligible(LLMReasoner(ScriptedLLM([])), corpus)  # a model: waits, not CPU
    assert not offload.eligible(make_reasoner("", embedder=None), corpus)  # not the corpus's embedder
    monkeypatch.setattr(offload, "MAX_INDEX_BYTES", 1)  # index files too big to load once more per worker
    assert not offload.eligible(offline, corpus)


def test_a_corpus_made_anew_under_the_same_name_is_read_afresh(tmp_path, embedder, pool):
    build_small_corpus(tmp_path, CORPUS, questions=1, embedder=embedder)
    corpus = Workspace(tmp_path, embedder=embedder).open(CORPUS)
    first = corpus.questions()[0].question
    assert _in_worker("semantic", corpus, first)[0] is not None  # the worker holds it open now
    corpus.close()
    shutil.rmtree(tmp_path / CORPUS)
    build_small_corpus(tmp_path, CORPUS, questions=2, embedder=embedder)  # other documents
    corpus = Workspace(tmp_path, embedder=embedder).open(CORPUS)
    q = corpus.questions()[1].question
    got, want = _in_worker("semantic", corpus, q)[0], _in_thread("semantic", corpus, q)[0]
    assert got.evidence_chunk_ids == want.evidence_chunk_ids


def test_a_dead_worker_costs_no_answer_and_stops_the_pool(root, embedder, pool, caplog):
    corpus = Workspace(root, embedder=embedder).open(CORPUS)
    q = corpus.questions()[0].question
    assert _in_worker("semantic", corpus, q)[0] is not None
    for pid in list(offload._pool._processes):  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
    assert _in_worker("semantic", corpus, q)[0] is None  # the caller answers instead
    assert offload._pool is None and "died" in caplog.text
    assert Session(workspace=root).answer("semantic", q, corpus).answer  # in the calling thread


def test_the_worker_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_OFFLINE_WORKERS", "0")
    assert offload.default_workers() == 0
    monkeypatch.setenv("TRIPLET_LENS_OFFLINE_WORKERS", "two")
    with pytest.raises(ValueError, match="TRIPLET_LENS_OFFLINE_WORKERS must be a whole number"):
        offload.default_workers()
    monkeypatch.delenv("TRIPLET_LENS_OFFLINE_WORKERS")
    assert offload.default_workers() == 0  # off unless the operator asks


def _workers(pid: int) -> dict[int, int]:
    """The server's worker processes (its multiprocessing children) and the CPU ticks each has used."""
    out = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in open(f"/proc/{pid}/task/{task}/children").read().split():
            if b"multiprocessing" in open(f"/proc/{child}/cmdline", "rb").read():
                stat = open(f"/proc/{child}/stat").read().rsplit(")", 1)[1].split()
                out[int(child)] = int(stat[11]) + int(stat[12])
    return out


def test_the_make_run_server_answers_offline_questions_in_its_workers(root, tmp_path):
    """`make run`'s server (scripts/serve.py) starts its workers, and a visitor's question, asked on
    a link over the app's websocket as a browser asks it, is answered with them running."""
    import time

    from tests._app_helpers import StreamlitServer
    from tests._visitor import visit

    srv = StreamlitServer(root, tmp_path / "serve.log", extra_env={"TRIPLET_LENS_OFFLINE_WORKERS": "2"}, launcher=True)
    try:
        srv.wait_healthy(180)
        deadline = time.monotonic() + 180
        before: dict[int, int] = {}
        while len(before) < 2 or before != _workers(srv.proc.pid):  # started, and idle (model loaded)
            assert time.monotonic() < deadline, f"the server's workers did not settle: {before}"
            before = _workers(srv.proc.pid)
            time.sleep(1.0)
        corpus = Workspace(root).open(CORPUS)
        questions = [q.question for q in corpus.questions()]
        corpus.close()
        for page in ("ask", "kg2rag"):
            for q in questions:
                assert visit(srv.port, page, {"corpus": CORPUS, "question": q}, timeout=240) > 0
        after = _workers(srv.proc.pid)
        assert after.keys() == before.keys() and sum(after.values()) > sum(before.values())  # they worked
        assert "worker" not in srv.log_path.read_text(errors="replace")  # none failed or died
    finally:
        srv.stop()


def test_the_server_refuses_a_worker_count_that_does_not_parse(tmp_path):
    import subprocess
    import sys

    from tests._app_helpers import REPO

    env = dict(os.environ, TRIPLET_LENS_OFFLINE_WORKERS="two", TRIPLET_LENS_WORKSPACE=str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "serve.py")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "TRIPLET_LENS_OFFLINE_WORKERS must be a whole number" in done.stderr
