"""Issue 12 items 4 and 5 in the app (AppTest, offline reasoner, a small real corpus): the timeline
renders under a result on Ask, KG2RAG and each Compare column, and the What-if expander re-runs a
question with changed settings and shows the two runs side by side with what changed."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import APP
from tests._apptest import goto as _goto
from tests._apptest import ok as _ok

pytestmark = pytest.mark.timeout(600)


def timeline_charts(at: AppTest) -> list[dict]:
    """The plotly timelines on the page, as their figure JSON."""
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [f for f in figs if "seconds into the run" in json.dumps(f.get("layout", {}).get("xaxis", {}))]


def _ticks(fig: dict) -> list[str]:
    """The row labels: a tree (`├ round 1`), padded to one width with no-break spaces."""
    return [t.replace("\u00a0", " ").rstrip() for t in fig["layout"]["yaxis"]["ticktext"]]


def test_ask_page_shows_the_timeline_and_a_whatif_rerun_with_its_diff(app):
    at = _goto(app, "ask")
    at.button(key="ask_go").click().run()
    _ok(at)
    first = at.session_state["ask_result"]
    result = first.results[0]
    assert any(e.label.startswith("⏱ Timeline") for e in at.expander)
    (fig,) = timeline_charts(at)
    ticks = _ticks(fig)
    assert ticks[0] == "T2RAG" and "├ decompose" in ticks and "├ round 1" in ticks
    # the offline rules are the step itself: no child bar of the same length under each step
    assert not any("offline-rules" in t for t in ticks) and "│ ├ solve" in ticks
    # what if: fewer chunks per round
    assert at.number_input(key="ask_whatif_k").value == result.trace.settings.k == 5
    assert at.number_input(key="ask_whatif_rounds").value == result.trace.settings.rounds
    at.number_input(key="ask_whatif_k").set_value(1)
    at.button(key="ask_whatif_go").click().run()
    _ok(at)
    shown = at.session_state["ask_whatif"]
    assert shown["base"] is result and shown["diff"].settings == {"k": (5, 1)}
    assert shown["new"].trace.settings.k == 1
    diff_html = [h.proto.body for h in at.get("html") if "tl-whatif-diff" in h.proto.body]
    assert diff_html and "→ <b>1</b>" in diff_html[0]
    evidence = [h.proto.body for h in at.get("html") if "<b>Evidence</b>:" in h.proto.body]
    removed = len(shown["diff"].chunks_removed)
    assert removed and f"{removed} removed" in evidence[0] and evidence[0].count("tl-chunk-removed") == removed
    assert [m.value for m in at.markdown if m.value in ("**First run**", "**Re-run**")] == [
        "**First run**",
        "**Re-run**",
    ]
    assert len(timeline_charts(at)) == 3  # the result's own, then the first run's and the re-run's side by side

    # adopt the re-run: it becomes the page's result, the stepper walks its trace from step 1
    at.button(key="ask_step_next").click().run()
    assert at.session_state["ask_step"] == 1
    at.button(key="ask_whatif_adopt").click().run()
    _ok(at)
    run = at.session_state["ask_result"]
    assert len(run.results) == 1 and run.results[0] is shown["new"] and at.session_state["ask_step"] == 0
    assert run.question == first.question and run.gold == first.gold and run.created > first.created
    assert not [h for h in at.get("html") if "tl-whatif-diff" in h.proto.body]  # the diff was of the old result
    assert at.number_input(key="ask_whatif_k").value == 1  # the knobs are the adopted run's
    steps = len(shown["new"].trace.rounds) + 2
    for i in range(1, steps):
        at.button(key="ask_step_next").click().run()
        _ok(at)
        assert at.session_state["ask_step"] == i
    assert any(c.value.startswith(f"Step {steps} of {steps}") for c in at.caption)


def test_kg2rag_page_offers_hops_and_compare_draws_one_timeline_per_column(app):
    at = _goto(app, "kg2rag")
    at.button(key="kg2rag_go").click().run()
    _ok(at)
    assert at.number_input(key="kg2rag_whatif_hops").value == 1
    at.number_input(key="kg2rag_whatif_hops").set_value(2)
    at.button(key="kg2rag_whatif_go").click().run()
    _ok(at)
    assert at.session_state["kg2rag_whatif"]["diff"].settings == {"hops": (1, 2)}
    assert _ticks(timeline_charts(at)[0])[:2] == ["KG2RAG", "├ seed"]

    at = _goto(at, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    heads = [_ticks(f)[0] for f in timeline_charts(at)]
    assert heads == ["T2RAG", "KG2RAG"]


def test_a_demo_visitor_can_rerun_within_the_knobs(app_workspace, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(app_workspace))
    monkeypatch.setenv("TRIPLET_LENS_DEMO", "1")
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at = _goto(at, "ask")
    at.button(key="ask_go").click().run()
    _ok(at)
    k = at.number_input(key="ask_whatif_k")
    assert k.max == 20  # the demo bounds (T2RAG.whatif_knobs) are the widget's
    k.set_value(3)
    at.button(key="ask_whatif_go").click().run()
    _ok(at)
    assert at.session_state["ask_whatif"]["diff"].settings == {"k": (5, 3)}


def test_compare_reruns_both_methods_or_the_chosen_one_and_shows_each_beside_its_first_run(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    run = at.session_state["compare"]
    t2, kg = run.by_method("t2rag"), run.by_method("kg2rag")
    # one column of knobs per method, set to each run's own settings
    assert at.number_input(key="cmp_whatif_t2rag_k").value == t2.trace.settings.k
    assert at.number_input(key="cmp_whatif_t2rag_rounds").value == t2.trace.settings.rounds
    assert at.number_input(key="cmp_whatif_kg2rag_hops").value == kg.trace.settings.hops
    assert at.radio(key="cmp_whatif_which").value == "both"
    at.number_input(key="cmp_whatif_t2rag_k").set_value(1)
    at.number_input(key="cmp_whatif_kg2rag_hops").set_value(2)
    at.button(key="cmp_whatif_go").click().run()
    _ok(at)
    shown = at.session_state["cmp_whatif"]
    assert shown["base"] is run and list(shown["items"]) == ["t2rag", "kg2rag"]
    assert shown["items"]["t2rag"][1].settings == {"k": (t2.trace.settings.k, 1)}
    assert shown["items"]["kg2rag"][1].settings == {"hops": (kg.trace.settings.hops, 2)}
    assert shown["items"]["kg2rag"][0].trace.settings.hops == 2
    heads = [m.value for m in at.markdown if m.value.endswith(": first run vs re-run")]
    assert heads == ["#### T2RAG: first run vs re-run", "#### KG2RAG: first run vs re-run"]
    tables = [h.proto.body for h in at.get("html") if "tl-whatif-diff" in h.proto.body]
    assert len(tables) == 2 and "→ <b>1</b>" in tables[0] and "→ <b>2</b>" in tables[1]
    assert all("offline rules, nothing to replay" in t and "$0 for both" in t for t in tables)
    # the two side-by-side timelines, then the first run beside the re-run for each method
    assert [_ticks(f)[0] for f in timeline_charts(at)] == ["T2RAG", "KG2RAG", "T2RAG", "T2RAG", "KG2RAG", "KG2RAG"]
    assert at.session_state["compare"] is run  # the comparison itself is unchanged
    at.button(key="cmp_sync_next").click().run()
    at.button(key="cmp_whatif_adopt").click().run()  # the re-runs join the comparison
    _ok(at)
    adopted = at.session_state["compare"]
    assert adopted is not run and adopted.question == run.question and adopted.gold == run.gold
    assert adopted.by_method("t2rag") is shown["items"]["t2rag"][0]
    assert adopted.by_method("kg2rag") is shown["items"]["kg2rag"][0]
    assert at.session_state["cmp_sync"] == 0 and at.session_state["cmp_whatif"]["base"] is run
    assert not [m for m in at.markdown if m.value.endswith(": first run vs re-run")]
    assert at.number_input(key="cmp_whatif_kg2rag_hops").value == 2  # the knobs are the adopted runs'
    run = adopted
    t2, kg = run.by_method("t2rag"), run.by_method("kg2rag")

    # only KG2RAG this time, from the adopted comparison: the T2RAG re-run is gone, KG2RAG's is new
    at.radio(key="cmp_whatif_which").set_value("kg2rag")
    at.number_input(key="cmp_whatif_kg2rag_k").set_value(3)
    at.button(key="cmp_whatif_go").click().run()
    _ok(at)
    items = at.session_state["cmp_whatif"]["items"]
    assert list(items) == ["kg2rag"] and items["kg2rag"][1].settings == {"k": (kg.trace.settings.k, 3)}
    assert kg.trace.settings.hops == 2 and items["kg2rag"][0].trace.settings.hops == 2
