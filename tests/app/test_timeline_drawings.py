"""The two drawings of a run's timeline: the app's plotly chart (components.compare.timeline_view) and the
export's static SVG (components.compare.timeline_svg), over real traces from a scripted LLM: the nesting
reads as a tree, a failed call is red, a replayed call grey and free, an offline run says so
instead of showing empty money."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from components.compare.timeline_svg import axis_step, timeline_svg
from components.compare.timeline_view import ERROR_COLOR, FREE_COLOR, figure, legend, summary
from engine.reasoners.llm_reasoner import LLMReasoner
from engine.runs.timeline import timeline, tree_rows
from tests.engine.session.test_timeline_whatif import first_run, llm, rerun

SVG = "{http://www.w3.org/2000/svg}"


def _rows(svg: str) -> list[dict]:
    """Each span's group: its label, bar fill and stroke, bar text, hover title."""
    root = ET.fromstring(svg)
    out = []
    for g in root.iter(f"{SVG}g"):
        texts = [t.text or "" for t in g.iter(f"{SVG}text")]
        rect, title = g.find(f"{SVG}rect"), g.find(f"{SVG}title")
        assert rect is not None and title is not None, ET.tostring(g)
        out.append(
            {
                "cls": g.get("class"),
                "label": texts[0].replace("\u00a0", " "),
                "bar": texts[1],
                "fill": rect.get("fill"),
                "stroke": rect.get("stroke"),
                "width": float(rect.get("width", "nan")),
                "title": title.text,
            }
        )
    return out


def test_tree_rows_put_each_call_under_its_step_with_tree_lines():
    result, _, _ = first_run()
    rows = tree_rows(timeline(result))
    labels = [prefix + s.label for s, _, prefix in rows]
    assert labels[0] == "T2RAG" and labels[1] == "├ decompose" and labels[2].startswith("│ └ decompose (")
    assert labels[-1].startswith("  └ answer (")  # the last step's call: no line left to draw beside it
    assert [d for _, d, _ in rows][:3] == [0, 1, 2]
    by_id = {s.id: i for i, (s, _, _) in enumerate(rows)}
    assert all(by_id[s.parent] < by_id[s.id] for s, _, _ in rows if s.parent is not None)


def test_the_svg_has_one_row_per_span_with_the_apps_colours_and_texts():
    result, _, _ = first_run()
    spans = timeline(result)
    svg = timeline_svg(spans)
    rows = _rows(svg)
    assert len(rows) == len(spans)
    assert rows[0]["label"] == "T2RAG" and rows[1]["label"] == "├ decompose"
    calls = [r for r in rows if "kind-llm" in r["cls"]]
    assert len(calls) == 4 and all(r["fill"] == "#e9a23b" and r["bar"].endswith("s · $0.00100") for r in calls)
    assert "prompt +" in calls[0]["title"] and "completion tokens · $0.00100" in calls[0]["title"]  # the hover
    # the axis: round ticks in seconds, within the run
    ticks = [
        t.text
        for t in ET.fromstring(svg).iter(f"{SVG}text")
        if (t.text or "").endswith("s") and t.text[0].isdigit() and t.get("text-anchor") == "middle"
    ]
    assert ticks[0] in ("0s", "0.0s", "0.00s") and len(ticks) >= 2
    assert axis_step(1.38) == 0.5 and axis_step(3.7) == 1 and axis_step(0.004) == 0.001


def test_a_failed_call_is_red_and_a_replayed_one_grey_and_free():
    result, corpus, _ = first_run()
    result.trace.rounds[0].solve_call.error = "provider said 500"
    spans = timeline(result)
    rows = _rows(timeline_svg(spans))
    failed = [r for r in rows if "failed" in r["cls"]]
    assert len(failed) == 1 and failed[0]["fill"] == ERROR_COLOR and failed[0]["bar"].startswith("failed")
    assert "provider said 500" in failed[0]["title"]
    fig = figure(spans).to_plotly_json()
    assert fig["data"][0]["marker"]["color"].count(ERROR_COLOR) == 1
    assert "1 failed" in summary(spans) and "red = failed call" in legend(spans)

    new, _ = rerun(result, corpus, {}, LLMReasoner(llm()))
    spans = timeline(new)
    rows = _rows(timeline_svg(spans))
    replayed = [r for r in rows if "kind-llm" in r["cls"] and "free" in r["cls"]]
    assert replayed and all(r["fill"] == FREE_COLOR and r["bar"].startswith("replayed, $0") for r in replayed)
    assert all(r["width"] >= 2 for r in replayed)  # instant, still visible
    assert "grey hatched = cached or replayed, free" in legend(spans)


def test_an_offline_run_draws_no_money(tmp_path):
    from engine.methods import build_method
    from engine.reasoners import make_reasoner
    from tests._t2rag_helpers import bobby_mcgee_corpus

    result = build_method("t2rag", make_reasoner("")).answer(
        "Who is the child of the performer of Me and Bobby McGee?", bobby_mcgee_corpus()
    )
    spans = timeline(result)
    text = summary(spans)
    assert "offline rules: no LLM call, no tokens, $0" in text and "$0.00000" not in text
    rows = _rows(timeline_svg(spans))
    assert not any("tok" in r["bar"] or "$0.0" in r["bar"] for r in rows)
    assert "LLM calls (orange)" not in legend(spans) and "offline-rules steps" in legend(spans)
    # the rules are folded into the step that ran them: one bar per step, none nested of the same length
    assert not [s for s in spans if "offline-rules" in s.label], [s.label for s in spans]
    rules = {s.label for s in spans if s.kind == "rules"}
    assert {"decompose", "solve"} <= rules and any(x.startswith("answer") for x in rules), rules
    assert all("offline rules, no LLM call" in s.detail for s in spans if s.kind == "rules")
    assert all(s.kind != "llm" for s in spans) and spans[0].tokens == 0 and spans[0].cost == 0


def test_timelines_drawn_side_by_side_share_one_time_scale():
    from components.report.export import timelines_html
    from engine.runs import Run

    short, _, _ = first_run("standard", k=2)
    long_, _, _ = first_run()
    run = Run(question="q", results=[short, long_])
    html = timelines_html(run)
    svgs = html.split('<svg class="timeline-svg"')[1:]
    assert len(svgs) == 2
    # the run bars (first rect of each drawing) are as long as the runs: the short one shorter
    widths = [
        float(
            ET.fromstring('<svg class="timeline-svg"' + s.split("</figure>")[0].split("<p ")[0])
            .find(f"{SVG}g/{SVG}rect")
            .get("width")
        )
        for s in svgs
    ]
    seconds = [timeline(short)[0].duration, timeline(long_)[0].duration]
    assert widths[0] / widths[1] == pytest.approx(seconds[0] / seconds[1], rel=0.02)
    fig = figure(timeline(short), x_max=seconds[1]).to_plotly_json()
    assert fig["layout"]["xaxis"]["range"][1] == pytest.approx(seconds[1] * 1.5)
