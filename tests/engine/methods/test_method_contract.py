"""The same contract over every method in the registry (as tests/engine/llm/test_contracts.py does for LLMs,
reasoners and embedders): on a small real corpus, through `Session.answer`, each method answers
without an error, its trace names every evidence chunk through `chunk_ids()`, the result comes back
unchanged from its JSON, and its view (components/methods/) tells it as steps ending in the answer
and draws it in the app; through the CLI's `ask`, each prints its answer and its own summary
(`summarize`, called on the class) and exits 0, or 1 exactly when the run itself has an error. A
method added to the registry is covered with no change here."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.methods.registry import METHODS
from tests._app_helpers import build_small_corpus

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder):
    from engine.store import Workspace

    root = tmp_path_factory.mktemp("contract_ws")
    build_small_corpus(root, "c", questions=1, embedder=embedder)
    return Workspace(root, embedder=embedder).open("c")


@pytest.fixture(scope="module")
def results(corpus, tmp_path_factory) -> dict:
    """Every registered method's result on the corpus's question (a model-only method, IRCoT, on
    the scripted reasoner; every other one on the offline rules, as the session builds them)."""
    from engine.session import Session
    from tests.doubles import ScriptedReasoner

    session = Session(workspace=tmp_path_factory.mktemp("contract_session"))
    q = corpus.questions()[0]
    out = {}
    for name, info in METHODS.items():
        scripted = ScriptedReasoner(chats=["So the answer is Lisbon."], answers=["Lisbon"])
        reasoner = scripted if info.needs_model else None
        out[name] = session.answer(name, q.question, corpus, reasoner=reasoner)
    return out


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_answers_and_its_trace_names_its_evidence(results, name):
    r = results[name]
    # the offline rules answer only from evidence: a method that retrieves nothing (No retrieval)
    # gets the honest error, never an invented answer
    assert r.method == name and (not r.error or not r.evidence_chunk_ids and "no evidence" in r.error), r.error
    ids = r.trace.chunk_ids()
    assert isinstance(ids, list) and all(isinstance(c, str) for c in ids)
    assert set(r.evidence_chunk_ids) <= set(ids), "an evidence chunk the trace never mentions"


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_answers_through_the_cli_ask(corpus, name, monkeypatch, capsys, tmp_path: Path):
    from engine.cli import main
    from engine.methods.base import load_result
    from engine.methods.registry import method_class

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(corpus.path.parent))
    trace = tmp_path / "trace.json"
    question = corpus.questions()[0].question
    code = main(["ask", corpus.name, question, "--method", name, "--trace-out", str(trace), "--quiet"])
    out, err = capsys.readouterr()
    if code == 2:  # refused before running, saying why (semantic-rerank without a reranker)
        assert not METHODS[name].in_app and "needs" in err and not trace.exists(), err
        return
    result = load_result(trace)
    # IRCoT needs a model (the offline rules cannot run it) and No retrieval has no evidence for them
    assert code == (1 if result.error else 0), err
    assert "Traceback" not in err and not any(line.startswith("error:") for line in err.splitlines()), err
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == f"answer: {result.answer}".strip() and f"method: {name}" in out
    summary = [x.strip() for x in method_class(name).summarize(result)]
    start = lines.index(summary[0]) if summary and summary[0] in lines else -1
    assert summary and lines[start : start + len(summary)] == summary, out  # its own lines, in order


@pytest.mark.parametrize("name", list(METHODS))
def test_every_result_comes_back_unchanged_from_its_json(results, name):
    from engine.methods.base import result_from_json, result_to_json

    r = results[name]
    back = result_from_json(result_to_json(r))
    assert type(back.trace) is type(r.trace) and back.trace.chunk_ids() == r.trace.chunk_ids()
    assert result_to_json(back) == result_to_json(r)


@pytest.mark.parametrize("name", list(METHODS))
def test_every_view_tells_the_run_as_steps_ending_in_the_answer(results, name):
    from components.contract import view_for

    r = results[name]
    view = view_for(r)
    steps = view.steps(r)
    assert steps and steps[-1].title == "Answer" and all(s.title and s.sections for s in steps)
    assert len(view.step_labels(r)) >= 1
    assert any(r.answer in line for sec in steps[-1].sections for line in sec.lines)


def _draw(path: str) -> None:
    from pathlib import Path

    from components.contract import view_for
    from components.methods.base import show, show_step
    from engine.methods.base import result_from_json

    result = result_from_json(Path(path).read_text(encoding="utf-8"))
    view = view_for(result)
    show(result, None, "contract_step", ["Lisbon"])
    for pos in range(len(view.step_labels(result))):
        show_step(result, pos, None, ["Lisbon"], frozenset())


@pytest.mark.parametrize("name", list(METHODS))
def test_every_view_draws_a_saved_run_in_the_app(results, name, tmp_path: Path):
    from engine.methods.base import save_result

    save_result(results[name], tmp_path / "r.json")
    at = AppTest.from_function(_draw, args=(str(tmp_path / "r.json"),), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    answers = [m.value for m in at.markdown if "tl-answer" in m.value] + [
        str(getattr(h, "body", "")) for h in at.get("html")
    ]
    assert any("tl-answer" in a for a in answers), "no answer box drawn"
