"""A third-party method joins through the `triplet_lens.methods` entry-point group (docs/plugins.md)
and walks through Compare, presentation, the HTML export, eval and the CLI with no other file
changed: the example plug-in (examples/toy_plugin: an engine class, settings, a trace and a view
with `steps` only) is loaded from a fake entry point, as an installed package would be."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.methods import registry
from tests._app_helpers import REPO, build_small_corpus

pytestmark = pytest.mark.timeout(600)
CORPUS = "hotpotqa-sample"
TOY = EntryPoint(name="overlap", value="examples.toy_plugin:method_info", group=registry.ENTRY_POINT_GROUP)


def _fake_entry_points(monkeypatch, *eps: EntryPoint) -> None:
    def entry_points(group=None, **_):
        return [ep for ep in eps if ep.group == group]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)


@pytest.fixture()
def toy_plugin(monkeypatch):
    """The example plug-in installed (a fake entry point), removed again afterwards."""
    _fake_entry_points(monkeypatch, TOY)
    yield registry.load_plugins()
    registry.METHODS.pop("overlap", None)
    registry._loaded_plugins.discard("overlap")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("plugin_ws")
    build_small_corpus(root, CORPUS, questions=2, embedder=embedder)
    return root


def test_an_entry_point_registers_the_method_and_the_engine_runs_it(toy_plugin, workspace, embedder):
    from engine.session import Session
    from engine.store import Workspace

    assert toy_plugin == ["overlap"] and registry.method_info("overlap").title == "Word overlap"
    assert "overlap" in registry.app_methods(baselines=False) and "overlap" not in registry.COMPARED
    corpus = Workspace(workspace, embedder=embedder).open(CORPUS)
    q = corpus.questions()[0]
    result = Session(workspace=workspace).answer("overlap", q.question, corpus)
    assert result.method == "overlap" and result.evidence_chunk_ids == result.trace.chunk_ids()
    from engine.methods.base import result_from_json, result_to_json

    back = result_from_json(result_to_json(result))  # the plug-in's trace type loads back
    assert type(back.trace).__name__ == "OverlapTrace" and back.trace.chunk_ids() == result.trace.chunk_ids()


def test_a_broken_or_clashing_plugin_is_skipped_with_a_warning(monkeypatch):
    broken = EntryPoint(name="broken", value="examples.toy_plugin:no_such_name", group=registry.ENTRY_POINT_GROUP)
    clash = EntryPoint(
        name="clash", value="tests.engine.methods.test_plugins:_clashing_info", group=registry.ENTRY_POINT_GROUP
    )
    _fake_entry_points(monkeypatch, broken, clash)
    before = dict(registry.METHODS)
    with pytest.warns(UserWarning) as caught:
        assert registry.load_plugins() == []
    messages = " ".join(str(w.message) for w in caught)
    assert "'broken' did not load" in messages and "a method named 't2rag' exists" in messages
    assert registry.METHODS == before  # the built-in T2RAG is still the registry's
    registry._loaded_plugins.discard("clash")


def _clashing_info():
    return registry.MethodInfo("t2rag", "Not T2RAG", "examples.toy_plugin.method", "WordOverlap", baseline=True)


def test_the_cli_lists_and_runs_the_plugin_method(toy_plugin, workspace, monkeypatch, capsys):
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    assert main(["ask", CORPUS, "Which city was Kris born in?", "--method", "overlap", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "method: overlap" in out and "words shared" in out  # its own summarize()


@pytest.fixture()
def app(toy_plugin, workspace, monkeypatch) -> AppTest:
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):  # as tests/app/test_app_pages.py: app.py always runs first
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace))
    monkeypatch.delenv("TRIPLET_LENS_DEMO", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _next(at: AppTest, key: str) -> bool:
    btn = at.button(key=f"{key}_next")
    if btn.disabled:
        return False
    btn.click().run()
    _ok(at)
    return True


def test_compare_steps_the_plugin_as_a_third_column_then_presents_and_exports_it(app):
    at = app
    at.switch_page("pages/compare.py")
    at.run()
    assert (
        "overlap" in at.multiselect(key="cmp_methods").options
        or "Word overlap" in at.multiselect(key="cmp_methods").options
    )
    at.multiselect(key="cmp_methods").select("overlap").run()
    at.button(key="cmp_go").click().run()
    _ok(at)
    run = at.session_state["compare"]
    assert [r.method for r in run.results] == ["t2rag", "kg2rag", "overlap"]
    heads = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert sum(h.startswith(("#### T2RAG", "#### KG2RAG", "#### Word overlap")) for h in heads) == 3
    # one control moves three columns; the plug-in's column draws its view's steps() (the default show_step)
    seen = []
    while True:
        seen.append(" ".join(c.value for c in at.code))
        if not _next(at, "cmp_sync"):
            break
    assert len(seen) >= 3 and re.search(r"\d+ words shared", seen[1]), seen[1][:300]
    from components.report.export import export_html

    html = export_html(run)
    assert "Word overlap" in html and "Rank chunks by shared words" in html
    at.button(key="w_present_on").click().run()
    _ok(at)
    headers = []
    while True:
        headers += [h.value for h in at.header]
        if not _next(at, "present_step"):
            break
    assert any(h.startswith("Word overlap: Rank chunks by shared words") for h in headers), headers


def test_eval_scores_the_plugin_method(toy_plugin, workspace, embedder, tmp_path):
    from engine.eval.harness import run_eval
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    corpus = Workspace(workspace, embedder=embedder).open(CORPUS)
    summary = run_eval(corpus, ["overlap"], make_reasoner("", embedder=corpus.embedder), out_dir=tmp_path / "ev")
    m = summary.methods[0]
    assert [m.method for m in summary.methods] == ["overlap"] and m.n_done == 2 == m.n_questions and m.n_errors == 0
    assert (tmp_path / "ev" / "traces" / "overlap").is_dir()


def test_the_documented_example_is_the_tested_one():
    """docs/plugins.md shows the example plug-in's files as they are (so the docs run as written)."""
    doc = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    for name in ("__init__.py", "method.py", "view.py"):
        assert (REPO / "examples" / "toy_plugin" / name).read_text(encoding="utf-8").strip() in doc, name
