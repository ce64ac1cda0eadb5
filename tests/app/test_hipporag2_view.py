"""HippoRAG 2 on screen (issue 39): its card states the passages it read (not "no chunks"), its badge
names the paper preset and the run's departure (recognition memory skipped under the offline
rules), its settings read as words, its steps and PageRank graph name passages by title, never by
a stored id, even without the corpus at hand (an export, a reloaded run). Real MuSiQue paragraphs
with HippoRAG's GPT-3.5 OpenIE triples (tests/fixtures/hipporag2_musique.json, attribution inside)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.methods.base import result_from_json, result_to_json, save_result
from engine.methods.hipporag2 import HippoRAG2, HippoRAG2Settings
from tests.doubles import HashEmbedder, MemoryCorpus, OfflineLikeReasoner, chunk

DATA = json.loads((Path(__file__).parents[1] / "fixtures" / "hipporag2_musique.json").read_text(encoding="utf-8"))
Q0 = DATA["questions"][0]
#: a stored chunk id: a document hash and a position, what a reader must never be shown
RAW_ID = re.compile(r"\b[0-9a-f]{16}#\d+\b")


def _run(settings: HippoRAG2Settings):
    chunks = []
    rows: dict[tuple[str, str, str], list[str]] = {}
    for i, p in enumerate(Q0["paragraphs"]):
        cid = f"{i:02x}05336e9746001a#{i % 3}"  # the shape of a stored id
        chunks.append(chunk(cid, p["title"], p["text"], doc_id=cid.split("#")[0], position=i % 3))
        for s, pr, o in p["triples"]:
            rows.setdefault((s, pr, o), []).append(cid)
    corpus = MemoryCorpus(HashEmbedder(), chunks, [(s, p, o, tuple(c)) for (s, p, o), c in rows.items()])
    res = HippoRAG2(OfflineLikeReasoner(answers=["G. Stanley Hall"])).answer(Q0["question"], corpus, settings)
    assert res.trace.ppr_top and any(RAW_ID.search(x.node) for x in res.trace.seeds if x.kind == "passage")
    return res


@pytest.fixture(scope="module")
def result():
    return _run(HippoRAG2Settings.paper())


def test_tuned_steps_say_the_facts_bm25_half_and_which_passages_dense_retrieval_placed_first():
    from components.methods.hipporag2 import first_stage, steps

    res = _run(HippoRAG2Settings())  # `tuned`: hybrid_facts, dense_first = 2
    by_title = {s.title: s for s in steps(res)}
    facts = by_title["Facts retrieved"].sections[0]
    assert "mean of cosine and BM25" in facts.heading
    assert all(" (BM25 " in line for line in facts.lines)
    ranked = by_title["Ranked passages"].sections[0]
    placed = [i for i, line in enumerate(ranked.lines) if line.endswith("dense retrieval's best, placed first")]
    assert placed == [0, 1] and "the first 2 are dense retrieval's best (dense_first)" in ranked.heading
    assert first_stage(res).startswith("first stage: facts by cosine + BM25")


def _texts(steps) -> list[str]:
    out = []
    for s in steps:
        out += [line for sec in s.sections for line in sec.lines if sec.heading != "Context as sent"]
        if s.graph:
            out += [n["label"] for n in s.graph["nodes"]] + [n.get("detail", "") for n in s.graph["nodes"]]
    return out


def test_the_steps_name_every_passage_by_its_title_without_the_corpus(result):
    from components.methods.hipporag2 import steps

    for res in (result, result_from_json(result_to_json(result))):  # as run, and reloaded from its JSON
        lines = _texts(steps(res))
        assert not [x for x in lines if RAW_ID.search(x)], [x for x in lines if RAW_ID.search(x)][:3]
        titles = {p["title"] for p in Q0["paragraphs"]}
        ranked = next(s for s in steps(res) if s.title == "Ranked passages").sections[0].lines
        assert all(any(t in line for t in titles) and " · chunk " in line for line in ranked)


def test_the_pagerank_graph_reads_like_kg2rags(result):
    from components.methods.hipporag2 import ppr_graph

    tr = result.trace
    texts = {c: (f"{tr.chunks[c].title} · chunk 1", "its text") for c in tr.chunks}
    nodes, edges, legend = ppr_graph(tr, None, texts)
    assert len({n.id for n in nodes}) == len(nodes) == len(tr.ppr_top)
    assert {e.source for e in edges} | {e.target for e in edges} <= {n.id for n in nodes}
    facts = [e for e in edges if e.color == "#555555"]
    assert facts and all(e.label for e in facts)  # a fact edge says its predicate, as KG2RAG's edges do
    passages = [n for n in nodes if n.id.startswith("passage:")]
    assert passages and all(" · chunk " in n.label and "its text" in n.detail for n in passages)
    read = [n for n in passages if "read by the answer step" in n.title]
    assert read and {lg.text for lg in legend} >= {"passage the answer step read", "fact edge (its predicate)"}


def test_the_card_states_the_passages_read_and_the_badge_the_runs_departure(result):
    from components.shell.settings_form import human_label
    from components.widgets.preset_badge import chunk_budget, preset_lines, preset_of

    assert chunk_budget(result) == "budget: qa_top_k = 5 passages read (5 used)"
    name, deps = preset_of(result)
    assert name == "paper" and [d.name for d in deps if d.kind == "run"] == ["recognition memory skipped"]
    lines = preset_lines(result)
    assert lines[0] == "Preset: paper (every setting is the paper's)"
    assert any(x.startswith("this run departs from the paper: recognition memory skipped") for x in lines)
    for field in ("qa_top_k", "linking_top_k", "synonymy_edge_sim_threshold", "passage_node_weight"):
        label = human_label(field)
        assert label != field.replace("_", " ").capitalize() and "Qa " not in label


def _card(path: str) -> None:
    from pathlib import Path

    from components.contract import view_for
    from components.methods.base import show_step
    from components.widgets.preset_badge import show_column_facts
    from engine.methods.base import load_result

    res = load_result(Path(path))
    show_column_facts(res, None, "hippo_card")
    view = view_for(res)
    for pos in range(len(view.step_labels(res))):
        show_step(res, pos, None, ["G. Stanley Hall"], frozenset())


def test_the_card_and_every_step_draw_in_the_app(result, tmp_path):
    save_result(result, tmp_path / "r.json")
    at = AppTest.from_function(_card, args=(str(tmp_path / "r.json"),), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    popovers = [p.proto.popover.label for p in at.get("popover")]
    assert "📄 paper preset · 1 departure from the paper" in popovers
    captions = " ".join(c.value for c in at.caption)
    assert "budget: qa_top_k = 5 passages read" in captions and "no chunks" not in captions
    assert "recognition memory skipped" in captions
    shown = " ".join(str(getattr(el, "value", "")) for el in list(at.markdown) + list(at.code))
    assert "recognition memory skipped (offline reasoner)" in shown and not RAW_ID.search(shown)


def _ask_on_an_older_corpus(root: str, question: str) -> None:
    from components.shell.progress import StepLog
    from engine.methods.hipporag2 import HippoRAG2
    from engine.store import Workspace
    from tests.doubles import OfflineLikeReasoner

    corpus = Workspace(root).open("older")
    HippoRAG2(OfflineLikeReasoner()).answer(question, corpus, on_step=StepLog("HippoRAG 2: running"))


def test_the_first_question_on_an_older_corpus_says_the_graph_is_being_built(tmp_path, embedder):
    from engine.core.types import Document
    from engine.store import Workspace

    corpus = Workspace(tmp_path / "ws", embedder=embedder).create("older")
    corpus.add_documents(
        [Document(f"d{i}", p["title"], p["text"], "t", "text") for i, p in enumerate(Q0["paragraphs"])]
    )
    by_doc = {c.doc_id: c.chunk_id for c in corpus.chunks()}
    rows = [(by_doc[f"d{i}"], s, p, o) for i, para in enumerate(Q0["paragraphs"]) for s, p, o in para["triples"]]
    corpus.import_triplets(rows, refresh=False)  # no graph yet: a corpus from before it was kept
    corpus.close()
    at = AppTest.from_function(
        _ask_on_an_older_corpus, args=(str(tmp_path / "ws"), Q0["question"]), default_timeout=300
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    lines = [m.value for m in at.markdown]
    assert any(re.match(r"1\. building HippoRAG 2's graph of older \(first use\): embedding phrases", x) for x in lines)
    assert any("synonym edges" in x for x in lines) and any("facts retrieved: 5" in x for x in lines)
