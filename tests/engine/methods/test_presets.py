"""The `paper` and `tuned` presets (engine/methods/presets.py): what each runs, what the trace records,
and the papers' own prompts (T2RAG's TRAG.py, KG2RAG's kg_rag_distractor.py) through a scripted LLM."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.llm.scripted import ScriptedLLM
from engine.methods.base import result_from_json, result_to_json
from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
from engine.methods.presets import departures, fixes, preset_name, preset_settings
from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.reasoners.llm_reasoner import LLMReasoner
from tests._kg2rag_helpers import MemoryCorpus, ScriptedReasoner
from tests._t2rag_helpers import bobby_mcgee_corpus
from tests.engine.methods.test_kg2rag import CHUNKS, TRIPLETS, Q

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"


@pytest.fixture(scope="module")
def kg_corpus(embedder):
    return MemoryCorpus(embedder, CHUNKS, TRIPLETS)


def test_the_paper_preset_departs_only_by_specs_named_fixes_and_tuned_names_each_setting():
    for method in ("t2rag", "kg2rag"):
        paper = preset_settings(method, "paper")
        assert preset_name(method, paper) == "paper"
        assert [d.kind for d in departures(method, paper)] == [d.kind for d in fixes(method)]
        tuned = preset_settings(method, "tuned")
        assert preset_name(method, tuned) == "tuned"
        changed = [d for d in departures(method, tuned) if d.kind == "setting"]
        assert changed and all(d.reason and d.value != d.paper for d in changed)
    seeds = next(d for d in departures("kg2rag", KG2RAGSettings()) if d.name == "seeds")
    assert (seeds.value, seeds.paper) == ("hybrid", "dense")
    # the paper has no caps: a real "unlimited", shown as such
    caps = {d.name: d.paper for d in departures("kg2rag", KG2RAGSettings())}
    assert caps["expansion_cap"] == caps["max_entity_edges"] == caps["max_entity_reads"] == "-1 (no limit)"
    # a preset with one change on top is neither; the reranker is configuration, not a departure
    assert preset_name("kg2rag", KG2RAGSettings.paper(k=8)) == "custom"
    assert preset_name("kg2rag", KG2RAGSettings.paper(reranker="ce:/x")) == "paper"
    # a baseline has one form: both presets are its defaults, with no departure
    assert preset_name("semantic", preset_settings("semantic", "paper")) == "paper"
    assert departures("semantic", preset_settings("semantic", "tuned")) == []
    with pytest.raises(ValueError, match="unknown preset"):
        preset_settings("t2rag", "best")


def test_kg2rag_paper_has_no_caps_dense_seeds_and_the_authors_answer_prompt(kg_corpus):
    llm = ScriptedLLM(["Kris Kristofferson wrote it.\nHe was born in Brownsville.\nA: Brownsville."])
    result = KG2RAG(LLMReasoner(llm)).answer(Q, kg_corpus, KG2RAGSettings.paper())
    tr = result.trace
    assert tr.preset == "paper" and {d.kind for d in tr.departures} == {"fix", "engine"}
    assert result.answer == "Brownsville"  # the step-by-step reply's "A:" line
    prompt = llm.prompts[0]
    assert "Think step by step but give a short factoid answer" in prompt[0]["content"]
    assert "Q: Were Scott Derrickson and Ed Wood of the same nationality?" in prompt[0]["content"]
    assert tr.seeds and all(s.fused_score is None for s in tr.seeds)
    assert [s.score for s in tr.seeds] == sorted((s.score for s in tr.seeds), reverse=True)
    # -1 = no cap, not "expand nothing": with few seeds, the walk adds chunks and no cap cuts any
    few = KG2RAG(ScriptedReasoner()).answer(Q, kg_corpus, KG2RAGSettings.paper(k=2)).trace
    assert sum(len(h.chunks_added) for h in few.hops) > 0
    assert not any(h.cut_by_total_cap or any(c.cut_triplet_ids for c in h.entity_caps) for h in few.hops)
    assert tr.ranker.startswith("ranked by cosine: no cross-encoder configured")
    assert result_from_json(result_to_json(result)) == result


def test_kg2rag_tuned_seeds_show_the_fused_scores_that_ordered_them(kg_corpus):
    tr = KG2RAG(ScriptedReasoner()).answer(Q, kg_corpus, KG2RAGSettings()).trace
    fused = [s.fused_score for s in tr.seeds]
    assert None not in fused and fused == sorted(fused, reverse=True)
    assert tr.preset == "tuned" and "seeds" in {d.name for d in tr.departures}


def test_t2rag_paper_prompts_adopt_the_solvers_new_clue_and_answer_from_clues_only():
    decomposition = (
        "Reasoning: I need the performer of the song, then that person's child.\n\n"
        "Triples:\nMe and Bobby McGee | performer | ?performer\n?performer | child | ?child\n"
    )
    round1 = (
        "Fully Resolved Clue 1:\nSubject: Me and Bobby McGee\nPredicate: performer\nObject: Kris Kristofferson\n\n"
        "Newly Traceable Clue 1:\nSubject: Kris Kristofferson\nPredicate: nationality\nObject: ?\n"
    )
    round2 = "Fully Resolved Clue 1:\nSubject: Kris Kristofferson\nPredicate: child\nObject: Tracy Kristofferson\n"
    # no early stop under `paper`: round 3 looks for the open nationality clue, finds nothing not
    # shown before and stops without a call
    llm = ScriptedLLM([decomposition, round1, round2, "Answer: Tracy Kristofferson"])
    result = T2RAG(LLMReasoner(llm)).answer(BRIDGE, bobby_mcgee_corpus(), T2RAGSettings.paper())
    tr = result.trace
    assert tr.preset == "paper" and {d.kind for d in tr.departures} <= {"fix", "engine"}
    assert [t.text() for t in tr.decomposition.triplets] == [
        "(Me and Bobby McGee, performer, ?performer)",
        "(?performer, child, ?child)",
    ]
    # the reference prompt's structure: a reasoning step and a comparison example; clue blocks back
    assert "Reasoning:" in llm.prompts[0][1]["content"] and "?directorA" in llm.prompts[0][1]["content"]
    assert "Propositions: [Convert triples" in llm.prompts[0][1]["content"]
    assert "Newly Traceable Clue" in llm.prompts[1][1]["content"]
    assert "Traceable Clue 1:\nSubject: Me and Bobby McGee" in llm.prompts[1][1]["content"]
    # the solver's new clue is not one of the question's triplets: the paper lets it drive round 2
    r1 = tr.rounds[0]
    assert r1.adopted and "Kris Kristofferson nationality" in [q.text for q in tr.rounds[1].queries]
    # a forced stop answers from the clues (resolved + remaining searchable), no passages
    assert tr.stop_reason == "no_new_evidence" and len(tr.rounds) == 3 and tr.rounds[2].solve_call is None
    assert tr.synthesis.mode == "forced" and tr.synthesis.context == ""
    assert "Kris Kristofferson | child | Tracy Kristofferson" in tr.synthesis.facts
    assert "Kris Kristofferson | nationality | ?" in tr.synthesis.facts
    assert "Key Reasoning Clues" in llm.prompts[-1][1]["content"]
    assert result.answer == "Tracy Kristofferson"
    assert result_from_json(result_to_json(result)) == result


def test_t2rag_tuned_keeps_its_json_prompts_and_drops_the_solvers_unmatched_triplets():
    replies = [
        json.dumps({"triplets": [["Me and Bobby McGee", "performer", "?performer"]]}),
        json.dumps({"bindings": {}, "triplets": [["Kris Kristofferson", "nationality", "?"]]}),
        "Kris Kristofferson",
    ]
    llm = ScriptedLLM(replies)
    tr = T2RAG(LLMReasoner(llm)).answer(BRIDGE, bobby_mcgee_corpus()).trace
    assert tr.preset == "tuned" and tr.rounds[0].unmatched and not tr.rounds[0].adopted
    assert '{"triplets"' in llm.prompts[0][0]["content"] and "Still unresolved" in tr.synthesis.context


@pytest.mark.parametrize("preset", ["paper", "tuned"])
def test_the_offline_reasoner_answers_under_both_presets(preset, embedder):
    from engine.reasoners import make_reasoner

    corpus = bobby_mcgee_corpus()
    reasoner = make_reasoner("", embedder=embedder)
    result = T2RAG(reasoner).answer(BRIDGE, corpus, preset_settings("t2rag", preset))
    assert not result.error and result.trace.preset == preset
    kg = KG2RAG(reasoner).answer(BRIDGE, corpus, preset_settings("kg2rag", preset))
    assert not kg.error and kg.answer and kg.trace.preset == preset


def test_a_whatif_onto_the_paper_preset_replays_nothing_it_cannot(kg_corpus):
    from pathlib import Path

    from engine.runs.whatif import preset_changes
    from engine.session import Session

    first = KG2RAG(ScriptedReasoner()).answer(Q, kg_corpus, KG2RAGSettings())
    new, diff = Session(workspace=Path("unused")).rerun(
        first, kg_corpus, preset_changes("kg2rag", "paper"), reasoner=ScriptedReasoner()
    )
    assert new.trace.preset == "paper" and diff.settings["seeds"] == ("hybrid", "dense")
    assert np.isfinite(new.usage.total_time)


def test_docs_methods_tables_are_the_registrys():
    from pathlib import Path

    from engine.methods.presets import docs_block, documented

    text = (Path(__file__).resolve().parents[3] / "docs" / "methods.md").read_text(encoding="utf-8")
    assert "hipporag2" in documented()
    for method in documented():
        assert docs_block(method) in text, (
            f"docs/methods.md's {method} preset table drifted from engine/methods/presets.py: "
            "run `python -m engine.methods.presets --write-docs docs/methods.md`"
        )
