"""Presets in the app (AppTest, offline reasoner): Settings loads `paper` or `tuned` per method, Ask
then runs it and the result carries its badge; the seed view names the first stage and shows the
scores that ordered the seeds; Compare columns state budget, first stage and one token line."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import goto as _goto
from tests._apptest import ok as _ok

pytestmark = pytest.mark.timeout(600)


def _popovers(at: AppTest) -> list[str]:
    return [p.proto.popover.label for p in at.get("popover")]


def test_settings_loads_the_paper_preset_and_kg2rag_runs_it(app):
    at = _goto(app, "settings")
    assert any(label.startswith("🛠 tuned preset · ") for label in _popovers(at))
    at.button(key="preset_kg2rag_paper").click().run()
    _ok(at)
    at = _goto(at, "kg2rag")
    at.button(key="kg2rag_go").click().run()
    _ok(at)
    tr = at.session_state["kg2rag_result"].results[0].trace
    assert tr.preset == "paper" and {d.kind for d in tr.departures} <= {"fix", "engine"}
    assert tr.settings.seeds == "dense" and tr.settings.expansion_cap == -1
    from engine.methods.inputs import differing
    from engine.methods.registry import method_class

    result = at.session_state["kg2rag_result"].results[0]
    diff = differing(result.inputs, method_class("kg2rag").paper_inputs)  # offline reasoner, MiniLM: not the paper's
    assert diff and f"📄 paper preset · {len(diff)} inputs not the paper's" in _popovers(at), _popovers(at)
    heads = [m.value for m in at.markdown]
    assert any("seeds: dense, top" in h for h in heads)
    while "ranked by cosine" not in " ".join(heads) and not at.button(key="kg2rag_step_next").disabled:
        at.button(key="kg2rag_step_next").click().run()
        heads = [m.value for m in at.markdown]
    assert any("ranked by cosine: no cross-encoder configured" in h for h in heads)
    # back to tuned: hybrid seeds, shown with the fused scores that ordered them
    at = _goto(at, "settings")
    at.button(key="preset_kg2rag_tuned").click().run()
    at = _goto(at, "kg2rag")
    at.button(key="kg2rag_go").click().run()
    _ok(at)
    assert any("seeds: BM25 + dense, reciprocal-rank fusion" in m.value for m in at.markdown)
    seeds = next(d.value for d in at.dataframe if "fused score (RRF)" in d.value.columns)
    fused = list(seeds["fused score (RRF)"])
    assert fused == sorted(fused, reverse=True)
    assert any(label.startswith("🛠 tuned preset · ") for label in _popovers(at))
    # a what-if onto the paper preset: the re-run records it
    at.selectbox(key="kg2rag_whatif_preset").select("paper").run()
    at.button(key="kg2rag_whatif_go").click().run()
    _ok(at)
    new = at.session_state["kg2rag_whatif"]["new"]
    assert new.trace.preset == "paper" and new.trace.settings.seeds == "dense"


def test_compare_columns_state_budget_first_stage_and_the_hybrid_reference(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    captions = [c.value for c in at.caption]
    assert any("budget: k = 5 chunks per round" in c and "proposition" in c for c in captions)
    assert any("budget: k = 10 chunks in total" in c and "reciprocal-rank fusion" in c for c in captions)
    assert any("Hybrid RAG** baseline is the fair reference" in c for c in captions)
    # one token line, the same words for every method
    assert sum("tokens needed ·" in c and "billed ·" in c for c in captions) >= 2
    assert len([p for p in _popovers(at) if "preset" in p]) >= 2
