"""Every result says what it was fed, beside its paper's inputs (issue 40, item 4): the embedder, where
the triplets came from, the reranker and the reasoner. A `paper` preset run with MiniLM, offline-rule
triplets and no cross-encoder is not the paper's experiment, and no badge, export line or eval
summary may say "every setting is the paper's" without saying which inputs are not.
"""

from __future__ import annotations

import pytest

from engine.methods.base import result_from_json, result_to_json
from engine.methods.inputs import NO_RERANKER, PaperInputs, RunInputs, describe, differing, model_id, triplet_source
from engine.methods.presets import preset_settings
from tests._app_helpers import build_small_corpus

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder):
    from engine.store import Workspace

    root = tmp_path_factory.mktemp("inputs_ws")
    build_small_corpus(root, "inputs", questions=1, embedder=embedder)
    return Workspace(root, embedder=embedder).open("inputs")


def test_a_run_records_its_inputs_and_keeps_them_in_its_trace(corpus, tmp_path):
    from engine.session import Session

    session = Session(workspace=tmp_path)
    kg = session.answer("kg2rag", QUESTION, corpus, settings=preset_settings("kg2rag", "paper"))
    assert kg.inputs == RunInputs("bundled:all-MiniLM-L6-v2", "offline rules", NO_RERANKER, "offline-rules")
    t2 = session.answer("t2rag", QUESTION, corpus)
    assert t2.inputs is not None and t2.inputs.reranker == ""  # T2RAG ranks with no reranker step
    assert result_from_json(result_to_json(kg)).inputs == kg.inputs  # saved with the run, loads back


def test_the_inputs_that_differ_are_named_beside_the_papers(corpus):
    from engine.methods.kg2rag import KG2RAG
    from engine.methods.t2rag import T2RAG

    run = RunInputs("bundled:all-MiniLM-L6-v2", "offline rules", NO_RERANKER, "offline-rules")
    assert [d[0] for d in differing(run, KG2RAG.paper_inputs)] == ["embedder", "triplets", "reranker", "reasoner"]
    line = describe(run, KG2RAG.paper_inputs)
    assert "embedder bundled:all-MiniLM-L6-v2 (paper: mxbai-embed-large)" in line
    assert "reranker cosine: no cross-encoder configured (paper: bge-reranker-large)" in line
    # the paper's own models, named as a provider or a local folder names them, are the paper's
    same = RunInputs("litellm:nvidia/NV-Embed-v2", "openai/gpt-4o-mini", "", "openai/gpt-4o-mini")
    assert differing(same, T2RAG.paper_inputs) == []
    assert "(as the paper)" in describe(same, T2RAG.paper_inputs) and "(paper:" not in describe(
        same, T2RAG.paper_inputs
    )
    assert model_id("ce:/models/bge-reranker-large") == "bge-reranker-large" == model_id("BAAI/bge-reranker-large")
    assert differing(run, None) == [] and describe(None, KG2RAG.paper_inputs) == ""


def test_the_triplet_source_names_the_extractor():
    assert triplet_source({"offline-rules": 30}) == "offline rules"
    assert triplet_source({"import": 12}) == "imported file"
    assert triplet_source({"openai/gpt-4o-mini": 3, "offline-rules": 9}) == (
        "offline rules (9 chunks), openai/gpt-4o-mini (3 chunks)"
    )
    assert triplet_source({}) == "none extracted"


def test_no_line_says_every_setting_is_the_papers_while_an_input_differs():
    from components.widgets.preset_badge import _Shown, preset_lines

    paper = preset_settings("kg2rag", "paper")
    fed = RunInputs("bundled:all-MiniLM-L6-v2", "offline rules", NO_RERANKER, "offline-rules")
    lines = preset_lines(_Shown("kg2rag", paper, fed))
    assert (
        lines[0]
        == "Preset: paper (every setting is the paper's; inputs are not: embedder, triplets, reranker, reasoner)"
    )
    assert lines[1].startswith("Inputs: embedder bundled:all-MiniLM-L6-v2 (paper: mxbai-embed-large)")
    theirs = RunInputs(
        "ollama/mxbai-embed-large", "ollama/llama3:8b", "ce:/models/bge-reranker-large", "ollama/llama3:8b"
    )
    assert preset_lines(_Shown("kg2rag", paper, theirs))[0] == "Preset: paper (every setting is the paper's)"


def test_a_papers_inputs_are_declared_for_every_method_with_presets():
    from engine.methods.presets import documented
    from engine.methods.registry import method_class

    for name in documented():
        paper = method_class(name).paper_inputs
        assert isinstance(paper, PaperInputs) and paper.embedder and paper.triplets and paper.source, name


def test_the_eval_summary_says_what_each_method_was_fed(corpus, tmp_path):
    from engine.eval.harness import run_eval
    from engine.eval.report import load_summary
    from engine.reasoners import make_reasoner

    summary = run_eval(corpus, ["t2rag", "semantic"], make_reasoner("", embedder=corpus.embedder), out_dir=tmp_path)
    md = summary.markdown()
    assert "What each method was fed" in md
    assert "- t2rag: Inputs: embedder bundled:all-MiniLM-L6-v2 (paper: nvidia/NV-Embed-v2)" in md
    assert "- semantic: Inputs: embedder bundled:all-MiniLM-L6-v2 · triplets offline rules" in md
    assert load_summary(tmp_path).inputs == summary.inputs  # kept in summary.json
