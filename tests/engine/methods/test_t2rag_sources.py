"""Sourced bindings (issue 16): the solve prompt labels every proposition (P1, P2, ...) and passage
(C1, C2, ...), the solver names the label each value came from, and the trace keeps the link the
engine verified: proposition or chunk, with the sentence that states the value. A value with no
source named is matched against the walked propositions and marked `guessed`; a named source that
does not hold the value, or names nothing shown, is marked `unverified`."""

from __future__ import annotations

import json

from engine.llm.scripted import ScriptedLLM
from engine.methods.t2rag import T2RAG
from engine.reasoners.base import SolveResult, parse_source_label
from engine.reasoners.llm_reasoner import LLMReasoner
from engine.reasoners.parsing import parse_solve_sources
from tests._t2rag_helpers import Q, ScriptedReasoner, bobby_mcgee_corpus

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"
DECOMPOSITION = [Q("Me and Bobby McGee", "performer", "?performer"), Q("?performer", "child", "?child")]


def _round1(sources: dict[str, str], value: str = "Kris Kristofferson"):
    reasoner = ScriptedReasoner(
        decomposition=DECOMPOSITION,
        solves=[SolveResult(bindings={"?performer": value}, sources=sources)],
        answers=["x"],
    )
    trace = T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus()).trace
    evidence = reasoner.solve_inputs[0][2]
    return trace.rounds[0], trace.rounds[0].bindings[0], evidence


def test_labels_parse_in_the_forms_a_model_writes_them():
    assert parse_source_label("P3") == ("P", 2)
    assert parse_source_label("[c1]") == ("C", 0)
    assert parse_source_label(" P 12 ") == ("P", 11)
    for bad in ("P0", "X1", "passage 1", "", "P1 and C2"):
        assert parse_source_label(bad) is None


def test_a_value_read_from_a_chunk_points_at_that_chunk_and_quotes_its_sentence():
    rnd, b, ev = _round1({"?performer": "C1"})
    first = rnd.chunks[0]
    assert ev.chunks[0][0] == first.chunk_id
    assert (b.source, b.source_kind, b.chunk_ids) == ("C1", "chunk", [first.chunk_id])
    assert "Kris Kristofferson" in b.quote and b.quote in " ".join(first.text.split())
    assert b.proposition == ""  # a chunk, not a proposition, is the source


def test_a_value_read_from_a_proposition_points_at_that_proposition():
    rnd, _, ev = _round1({})
    i = next(i for i, w in enumerate(rnd.walked) if "Kris Kristofferson" in w.text)
    rnd, b, ev = _round1({"?performer": f"P{i + 1}"})
    w = rnd.walked[i]
    assert ev.propositions[i] == w.text
    assert (b.source_kind, b.proposition, b.proposition_triplet_id) == ("proposition", w.text, w.triplet_id)
    assert b.chunk_ids == w.chunk_ids and b.quote


def test_without_a_source_the_link_is_marked_guessed():
    _, b, _ = _round1({})
    assert b.source == "" and b.source_kind == "guessed"
    assert "Kris Kristofferson" in b.proposition and b.chunk_ids


def test_a_source_that_names_nothing_shown_or_does_not_state_the_value_is_unverified():
    _, b, _ = _round1({"?performer": "P99"})
    assert b.source_kind == "unverified" and "names no evidence" in b.note and not b.chunk_ids
    rnd, _, _ = _round1({})
    j = next(i for i, c in enumerate(rnd.chunks) if "Kris Kristofferson" not in c.text)
    _, b, _ = _round1({"?performer": f"C{j + 1}"})
    assert b.source_kind == "unverified" and "does not state" in b.note and b.quote == ""


def test_the_llm_reasoner_asks_for_sources_and_reads_them_back():
    replies = [
        json.dumps({"triplets": [list(t.parts) for t in DECOMPOSITION]}),
        json.dumps(
            {
                "bindings": {"?performer": "Kris Kristofferson"},
                "sources": {"?performer": "C1"},
                "triplets": [["Kris Kristofferson", "child", "?child"]],
            }
        ),
        json.dumps({"bindings": {"?child": "Tracy Kristofferson"}, "sources": {"?child": "C1"}}),
        "Tracy Kristofferson",
    ]
    llm = ScriptedLLM(replies)
    result = T2RAG(LLMReasoner(llm)).answer(BRIDGE, bobby_mcgee_corpus())
    solve_prompt = llm.prompts[1][-1]["content"]
    assert "[P1] " in solve_prompt and "[C1] " in solve_prompt and '"sources"' in llm.prompts[1][0]["content"]
    r1, r2 = result.trace.rounds
    assert r1.solve_call.parsed["sources"] == {"?performer": "C1"}
    assert r1.bindings[0].source_kind == "chunk" and r1.bindings[0].chunk_ids == [r1.chunks[0].chunk_id]
    child = next(b for b in r2.bindings if b.placeholder == "?child")
    assert child.source_kind in ("chunk", "unverified")
    if child.source_kind == "chunk":
        assert "Tracy Kristofferson" in child.quote


def test_sources_for_unbound_placeholders_or_of_the_wrong_shape_are_dropped():
    reply = json.dumps({"bindings": {"?a": "x"}, "sources": {"?a": "P1", "?b": "C2", "?c": ["P1"]}})
    assert parse_solve_sources(reply, {"?a": "x"}) == {"?a": "P1"}
    assert parse_solve_sources("not json", {"?a": "x"}) == {}
    assert parse_solve_sources(json.dumps({"sources": "P1"}), {"?a": "x"}) == {}


def test_the_offline_reasoner_names_the_label_of_its_evidence(embedder):
    from engine.reasoners.base import Evidence, QueryTriplet
    from engine.reasoners.offline import OfflineReasoner

    ev = Evidence(propositions=("Janis Joplin had a hit", "Me and Bobby McGee performed by Roger Miller"), chunks=())
    res, _ = OfflineReasoner(embedder).solve(
        BRIDGE, [], [QueryTriplet("Me and Bobby McGee", "performer", "?performer")], ev
    )
    assert res.bindings == {"?performer": "Roger Miller"} and res.sources == {"?performer": "P2"}
