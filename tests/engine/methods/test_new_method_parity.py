"""A new method with full parity is one package + one view + one registry line (issue 41).

A method is written into a temporary folder as a package of its own: `method.py` (its settings with
a `paper()` preset, its trace with the eval's hooks, its class with its what-if knobs, reasons and
paper inputs), `view.py` (its steps and its page's words) and `__init__.py` (the one `MethodInfo`:
the registry line, joined through the entry-point group as an installed plug-in would). Nothing of
Triplet Lens is edited, and the method then appears everywhere T2RAG does: its own page at its URL
path, Compare, what-if, presets (the badge, the reasons, the docs table), the eval's failure labels
and recall-loss table, the HTML export and presentation mode.
"""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.methods import registry
from tests._app_helpers import REPO, build_small_corpus
from tests._apptest import switch_to

pytestmark = pytest.mark.timeout(900)
CORPUS = "hotpotqa-sample"

PACKAGE = {
    "__init__.py": """
        from engine.methods.registry import MethodInfo


        def method_info() -> MethodInfo:
            return MethodInfo(
                "echo", "Echo RAG", "echorag.method", "Echo", baseline=False, view="echorag.view", page="echo"
            )
    """,
    "method.py": '''
        import time
        from dataclasses import dataclass, field

        from engine.methods.base import MethodDefaults, Result, Usage, register_trace
        from engine.methods.common import format_context
        from engine.methods.departure import Departure
        from engine.methods.hooks import LossReport, PipelineFacts
        from engine.methods.inputs import PaperInputs


        @dataclass(frozen=True)
        class EchoSettings:
            k: int = 2
            """chunks read (its paper read 4)"""

            @classmethod
            def paper(cls) -> "EchoSettings":
                return cls(k=4)


        @dataclass
        class EchoTrace:
            question: str
            settings: EchoSettings
            chunk_ids_read: list[str] = field(default_factory=list)

            def chunk_ids(self) -> list[str]:
                return list(self.chunk_ids_read)

            def recall_loss(self, units_of, gold, found, missing) -> LossReport:
                report = LossReport()
                report.lose("not among the echoed chunks", len(missing))
                return report

            def failure_facts(self) -> PipelineFacts:
                return PipelineFacts(1, tuple(self.chunk_ids_read), 0, ())


        class Echo(MethodDefaults):
            name = "echo"
            settings_cls = EchoSettings
            trace_cls = EchoTrace
            whatif_knobs = {"k": (1, 6)}
            preset_reasons = {"k": "fewer chunks read the same gold here"}
            preset_fixes = (Departure("echo fix", "we echo once", "it echoed twice", "one is enough", "fix"),)
            paper_inputs = PaperInputs(embedder=("echo-embed",), triplets=("echo-llm",))

            def __init__(self, reasoner):
                self.reasoner = reasoner

            def answer(self, question, corpus, settings=None, on_step=None) -> Result:
                s = settings or EchoSettings()
                t0 = time.perf_counter()
                hits = corpus.search_chunks(corpus.embed([question]), s.k)[0]
                chunks = corpus.get_chunks([cid for cid, _ in hits])
                answer, call = self.reasoner.answer(question, format_context(chunks))
                trace = EchoTrace(question, s, [c.chunk_id for c in chunks])
                usage = Usage.from_calls([call], time.perf_counter() - t0)
                return Result("echo", question, answer, usage, trace.chunk_ids(), "answered",
                              reasoner=getattr(self.reasoner, "name", ""), trace=trace)

            @staticmethod
            def summarize(result) -> list[str]:
                return [f"echoed {len(result.evidence_chunk_ids)} chunks"]


        register_trace("echo", EchoTrace)
    ''',
    "view.py": """
        from components.contract import PageText
        from components.steps import Section, Step, name_of

        PAGE = PageText("Echo RAG", "📣", "📣 Echo RAG, step by step", "Reads the nearest chunks, echoes an answer.")


        def steps(result, names=None) -> list[Step]:
            read = [name_of(names, cid) for cid in result.trace.chunk_ids_read]
            return [
                Step("Echo the nearest chunks", [Section("Read", read or ["(none)"])]),
                Step("Answer", [Section("Answer", [result.answer or "(no answer)"])]),
            ]
    """,
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, embedder) -> Path:
    root = tmp_path_factory.mktemp("newmethod_ws")
    build_small_corpus(root, CORPUS, questions=2, embedder=embedder)
    return root


@pytest.fixture()
def echo(tmp_path, monkeypatch):
    """The package written to a temporary folder and registered through the entry-point group."""
    pkg = tmp_path / "echorag"
    pkg.mkdir()
    for name, text in PACKAGE.items():
        (pkg / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint(name="echo", value="echorag:method_info", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group=None, **_: [ep] if group == ep.group else [])
    assert registry.load_plugins() == ["echo"]
    yield pkg
    registry.METHODS.pop("echo", None)
    registry._loaded_plugins.discard("echo")
    for mod in [m for m in sys.modules if m == "echorag" or m.startswith("echorag.")]:
        del sys.modules[mod]


def test_the_package_is_three_files(echo):
    assert sorted(p.name for p in echo.iterdir() if p.suffix == ".py") == ["__init__.py", "method.py", "view.py"]


def test_presets_reasons_fixes_docs_and_what_if_come_from_the_package(echo):
    from engine.methods.presets import departures, docs_table, documented, has_presets, preset_name, preset_settings
    from engine.runs.whatif import whatif_knobs

    assert has_presets("echo") and "echo" in documented()
    tuned = preset_settings("echo", "tuned")
    assert preset_name("echo", tuned) == "tuned" and preset_settings("echo", "paper").k == 4
    deps = departures("echo", tuned)
    assert [(d.name, d.kind) for d in deps] == [("echo fix", "fix"), ("k", "setting")]
    assert deps[1].reason == "fewer chunks read the same gold here"
    assert "fewer chunks read the same gold here" in docs_table("echo") and "echo fix" in docs_table("echo")
    assert whatif_knobs("echo") == {"k": (1, 6)}


def test_eval_gives_it_failure_labels_and_its_own_recall_loss_reasons(echo, workspace, embedder, tmp_path):
    from engine.eval.harness import run_eval
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    corpus = Workspace(workspace, embedder=embedder).open(CORPUS)
    summary = run_eval(corpus, ["echo"], make_reasoner("", embedder=corpus.embedder), out_dir=tmp_path / "ev")
    m = summary.methods[0]
    assert m.failures and sum(m.failures.values()) == 2  # every question labelled
    assert "echo failure labels" in summary.markdown()
    assert m.recall_loss is not None and set(m.recall_loss.lost_units) <= {"not among the echoed chunks"}


@pytest.fixture()
def app(echo, workspace, monkeypatch) -> AppTest:
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


def test_its_page_what_if_badge_compare_export_and_presentation(app):
    at = app
    switch_to(at, "echo").run()  # its own page, at its own URL path
    _ok(at)
    assert [t.value for t in at.title] == ["📣 Echo RAG, step by step"]
    at.button(key="echo_go").click().run()
    _ok(at)
    run = at.session_state["echo_result"]
    assert [r.method for r in run.results] == ["echo"]
    assert at.number_input(key="echo_whatif_k").max == 6  # its what-if knob, within its bounds
    from components.widgets.preset_badge import preset_of

    assert preset_of(run.results[0])[0] == "tuned"  # the badge's preset, from the package's presets
    from components.report.export import export_html

    assert "Echo RAG" in export_html(run) and "Echo the nearest chunks" in export_html(run)
    at.button(key="w_present_on").click().run()  # presentation mode presents this page's run
    _ok(at)
    assert at.session_state["present"] and at.session_state["present_run"] is run
    headers = []
    while True:  # its steps, as its view names them
        headers += [h.value for h in at.header]
        nxt = at.button(key="present_step_next")
        if nxt.disabled:
            break
        nxt.click().run()
        _ok(at)
    assert any(h.startswith("Echo RAG: Echo the nearest chunks") for h in headers), headers
    at.session_state["present"] = False
    at.run()
    switch_to(at, "compare").run()
    _ok(at)
    at.multiselect(key="cmp_methods").set_value(["t2rag", "echo"]).run()
    at.button(key="cmp_go").click().run()
    _ok(at)
    assert [r.method for r in at.session_state["compare"].results] == ["t2rag", "echo"]
