"""AppTest for every page, offline reasoner, a small real HotpotQA corpus in a temp workspace:
each page renders, its main action runs, the stepper moves, nothing raises."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import APP, CORPUS
from tests._apptest import answer_boxes as _answer_boxes
from tests._apptest import goto as _goto
from tests._apptest import next_step as _next
from tests._apptest import ok as _ok

pytestmark = pytest.mark.timeout(600)


def test_corpora_page_shows_the_corpus_and_filters_tables(app):
    at = app
    assert at.session_state["corpus"] == CORPUS
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Documents"]) == 20 and int(metrics["Questions"]) == 2
    assert int(metrics["Triplets"]) > 0 and int(metrics["Pending"]) == 0
    # what vector search it gets: a small corpus searches exactly (docs/scaling.md)
    assert any("vector search: chunks exact · propositions exact" in c.value for c in at.caption)
    chunks_before = [c.value for c in at.caption if " chunks" in c.value and " of " in c.value][0]
    at.text_input(key="search_chunks").input("zzzz-no-such-text").run()
    _ok(at)
    assert any(c.value.startswith("0 of ") and "chunks" in c.value for c in at.caption), chunks_before
    # the graph tab states its cap
    assert any("cap 150 nodes" in c.value for c in at.caption)


def test_create_corpus_from_an_upload_then_extract(app, app_workspace, monkeypatch):
    from engine.store.reads import CorpusReads

    def whole_list(self):  # the page counts and reads pending chunks in pages, never the whole list
        raise AssertionError("the extraction estimate listed every pending chunk")

    monkeypatch.setattr(CorpusReads, "pending_chunks", whole_list)
    at = app
    text = (
        b"Ada Lovelace was an English mathematician. She worked with Charles Babbage on the "
        b"Analytical Engine. Charles Babbage was born in London."
    )
    at.text_input(key="create_name").input("uploaded")
    at.file_uploader(key="create_files").set_value(("ada.txt", text, "text/plain"))
    at.button(key="create_go").click().run()
    _ok(at)
    assert at.session_state["corpus"] == "uploaded"
    assert any("Created uploaded" in s.value for s in at.success), (
        [s.value for s in at.success],
        [w.value for w in at.warning],
        [i.value for i in at.info],
    )
    assert (app_workspace / "uploaded" / "corpus.sqlite").exists()
    # the estimate is shown before the run, then the extraction fills the triplets
    n_chunks = len(_chunks_of(app_workspace, "uploaded"))
    assert [m.value for m in at.metric if m.label == "Chunks to extract"] == [str(n_chunks)]
    assert at.button(key="extract_go").label == f"Run extraction on {n_chunks} chunks"
    at.button(key="extract_go").click().run()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Pending"]) == 0 and int(metrics["Triplets"]) > 0


def _chunks_of(root, name):
    from engine.store import Workspace
    from tests._fake_embedder import HashEmbedder

    return Workspace(root, embedder=HashEmbedder(), read_only=True).open(name).chunks()


def test_ask_page_runs_t2rag_steps_saves_and_reopens(app, app_workspace):
    at = _goto(app, "ask")
    at.session_state["session"]._api_key = "sk-test-SECRET-never-saved"
    at.button(key="ask_go").click().run()
    _ok(at)
    run = at.session_state["ask_result"]
    assert run.results[0].method == "t2rag" and run.gold
    boxes = _answer_boxes(at)
    assert boxes and "Gold:" in boxes[0]
    # coloured by the verdict against gold, never "correct" by default
    from components.widgets.answer_box import verdict

    kind = verdict(run.results[0], run.gold).kind
    assert f"tl-answer-{kind}" in boxes[0] and kind != "unknown"
    steps = 1
    while _next(at, "ask_step"):
        steps += 1
    assert steps == len(run.results[0].trace.rounds) + 2
    assert at.session_state["ask_step"] == steps - 1
    assert any("Stop reason" in i.value for i in at.info)
    assert any("answer" in e.label for e in at.expander)  # the answer call can be opened
    at.button(key="ask_step_prev").click().run()
    assert at.session_state["ask_step"] == steps - 2
    # save, then reopen from the saved runs without running anything
    at.button(key="ask_save").click().run()
    _ok(at)
    saved = list((app_workspace / CORPUS / "runs").glob("*_t2rag_*.json"))
    assert saved
    assert "SECRET" not in saved[0].read_text(encoding="utf-8")
    at.session_state["ask_result"] = None
    at.run()
    at.button(key="ask_open_open").click().run()
    _ok(at)
    assert at.session_state["ask_result"].results[0].answer == run.results[0].answer


def test_kg2rag_page_runs_and_steps_through_every_stage(app):
    at = _goto(app, "kg2rag")
    at.button(key="kg2rag_go").click().run()
    _ok(at)
    result = at.session_state["kg2rag_result"].results[0]
    assert result.method == "kg2rag" and result.trace.seeds
    seen = [at.caption[i].value for i in range(len(at.caption)) if at.caption[i].value.startswith("Step ")]
    while _next(at, "kg2rag_step"):
        seen += [c.value for c in at.caption if c.value.startswith("Step ")]
    assert any("Weighted graph" in s for s in seen) and any("Tree ranking" in s for s in seen)
    assert any("Selected context" in s for s in seen) and seen[-1].endswith("Answer")


def test_compare_page_shows_both_methods_overlap_and_charts(app):
    at = _goto(app, "compare")
    at.multiselect(key="cmp_methods").select("semantic").run()
    at.button(key="cmp_go").click().run()
    _ok(at)
    run = at.session_state["compare"]
    assert [r.method for r in run.results] == ["t2rag", "kg2rag", "semantic"]
    heads = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert any(h.startswith("#### T2RAG") for h in heads) and any(h.startswith("#### KG2RAG") for h in heads)
    assert len(_answer_boxes(at)) >= 3  # the row of answers, one per method, coloured by verdict
    kg_box = next(b for b in _answer_boxes(at) if "KG2RAG ·" in b)
    assert "Evidence chain" in kg_box and "[1]</b> Tree 1" in kg_box  # answer ← selected tree ← chunk
    overlap = [d for d in at.dataframe if "shared by" in d.value.columns]
    assert overlap and len(overlap[0].value) >= 1
    assert all("#" not in c for c in overlap[0].value["chunk"])  # chunks by title + number, not hash
    # the offline reasoner makes no calls: no empty calls / tokens / dollars charts, only seconds
    # (the other charts are the two columns' timelines, tests/app/test_app_timeline_whatif.py)
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert len([s for s in specs if "seconds into the run" not in s]) == 1 and len(specs) == 3
    from components.compare.sync import joint_steps
    from components.contract import view_for

    steps = joint_steps({r.method: view_for(r).step_labels(r) for r in run.results[:2]})
    assert _next(at, "cmp_sync")  # one control moves both columns
    assert steps[1].at == {"t2rag": 1, "kg2rag": 1}  # round 1 beside hop 1 (or the graph)


def test_evaluate_page_scores_methods_and_drills_down(app):
    at = _goto(app, "evaluate")
    at.multiselect(key="eval_methods").set_value(["t2rag", "kg2rag"]).run()
    at.radio(key="eval_scope").set_value("Random N")
    at.number_input(key="eval_n").set_value(1).run()
    at.button(key="eval_go").click().run()
    _ok(at)
    summary = at.session_state["eval_report"]
    assert [m.method for m in summary.methods] == ["t2rag", "kg2rag"]
    table = at.dataframe[0].value
    assert list(table["method"]) == ["T2RAG", "KG2RAG"] and "EM" in table.columns and "F1" in table.columns
    # offline: quality and seconds only; no calls or dollars chart with an empty axis
    assert len(at.get("plotly_chart")) == 2
    assert "$ per q" in at.dataframe[1].value.columns  # costs in their own table, so neither is cut off
    assert len(at.get("download_button")) == 3
    per_q = [d for d in at.dataframe if "gold" in d.value.columns][0].value
    assert len(per_q) == 1 and "qid" not in per_q.columns  # a reader gets the question, not its id
    # the drill-down opens each method's saved trace with its stepper
    assert _next(at, "eval_step_t2rag")


def test_settings_page_keeps_the_key_in_session_and_applies_method_settings(app, app_workspace, loopback_llm):
    at = _goto(app, "settings")
    at.text_input(key="set_api_key").input("sk-typed-SECRET")
    at.text_input(key="set_model").input("openai/gpt-4o-mini")
    at.text_input(key="set_api_base").input(loopback_llm.base_url)
    at.button(key="set_apply").click().run()
    _ok(at)
    sess = at.session_state["session"]
    assert sess.model == "openai/gpt-4o-mini" and sess._api_key == "sk-typed-SECRET"
    assert any("answered" in m.value for m in at.success)  # Apply checked the model at once
    assert len(loopback_llm.requests) == 1
    for p in app_workspace.rglob("*"):
        if p.is_file() and p.stat().st_size < 5_000_000:
            assert b"sk-typed-SECRET" not in p.read_bytes(), p
    # T2RAG's k: the paper default is 5; apply 3
    k = at.number_input(key="settings_t2rag_k")
    assert k.value == 5
    k.set_value(3)
    at.button(key="settings_t2rag_apply").click().run()
    _ok(at)
    assert sess.settings_for("t2rag").k == 3
    at.button(key="reset_t2rag").click().run()
    assert sess.settings_for("t2rag").k == 5
    # back to offline so later runs in this session stay offline
    at.button(key="set_offline").click().run()
    assert sess.model == ""


def test_presentation_mode_walks_a_comparison_without_controls(app):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    _ok(at)
    at.button(key="w_present_on").click().run()
    _ok(at)
    assert at.session_state["present"] is True
    assert not at.sidebar.selectbox  # no corpus picker, no navigation controls
    assert at.button(key="present_step_next")
    while _next(at, "present_step"):
        pass
    assert any(h.value == "Side by side" for h in at.header)
    assert len(_answer_boxes(at)) == 2  # the verdict row, coloured against gold
    at.button(key="present_exit").click().run()
    assert at.session_state["present"] is False
    assert any(t.value.endswith("Compare") for t in at.title)  # back where the user came from


def test_an_engine_error_is_a_readable_message_not_a_traceback(app):
    at = _goto(app, "settings")
    at.number_input(key="settings_t2rag_k").set_value(0)
    at.button(key="settings_t2rag_apply").click().run()
    assert not at.exception
    assert any("k must be at least 1" in e.value for e in at.error)
    assert at.session_state["session"].settings_for("t2rag").k == 5


def test_demo_mode_disables_writes_and_key_entry(app_workspace, monkeypatch):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(app_workspace))
    monkeypatch.setenv("TRIPLET_LENS_DEMO", "1")
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    _ok(at)
    assert all(u.proto.disabled for u in at.file_uploader)
    assert at.button(key="del_docs_go").disabled and at.button(key="drop_go").disabled
    assert any("Read-only demo" in w.value for w in at.sidebar.warning)
    at = _goto(at, "settings")
    assert at.text_input(key="set_api_key").disabled
    at = _goto(at, "ask")
    at.button(key="ask_go").click().run()  # asking stays possible in the demo
    _ok(at)
    assert at.button(key="ask_save").disabled


def test_saved_comparison_json_round_trips_through_the_run_format(app):
    from engine.runs import run_from_json, run_to_json

    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    run = at.session_state["compare"]
    again = run_from_json(run_to_json(run))
    assert [r.answer for r in again.results] == [r.answer for r in run.results]
    assert again.gold == run.gold and json.loads(run_to_json(run))["kind"] == "triplet-lens-comparison"


def _use_loopback_model(at: AppTest, base_url: str, key: str, refused: bool = False) -> AppTest:
    at = _goto(at, "settings")
    at.text_input(key="set_model").input("openai/gpt-4o-mini")
    at.text_input(key="set_api_base").input(base_url)
    at.text_input(key="set_api_key").input(key)
    at.button(key="set_apply").click().run()
    if refused:  # Apply checks the model at once and says why right there
        assert any("authentication failed" in e.value for e in at.error), [e.value for e in at.error]
    else:
        _ok(at)
    return _goto(at, "ask")


def test_a_model_behind_a_provider_is_used_with_the_key_which_never_reaches_disk(app, app_workspace, loopback_llm):
    from components.report.export import export_html
    from engine.runs import run_to_json

    key = "sk-app-SECRET-123456"
    at = _use_loopback_model(app, loopback_llm.base_url, key)
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["ask_result"]
    result = run.results[0]
    assert result.reasoner == "openai/gpt-4o-mini" and result.usage.calls >= 2 and result.usage.prompt_tokens > 0
    assert loopback_llm.answered and any(key in h.get("authorization", "") for h in loopback_llm.headers)
    assert any("openai/gpt-4o-mini" in e.label and "tokens" in e.label for e in at.expander)  # calls open
    at.button(key="ask_save").click().run()
    assert key not in run_to_json(run) and key not in export_html(run)
    for p in app_workspace.rglob("*"):
        if p.is_file():
            assert key.encode() not in p.read_bytes(), p


def test_a_provider_refusing_the_key_is_a_readable_error(app, loopback_llm):
    loopback_llm.fail_after = 0
    loopback_llm.fail_mode = "401"
    at = _use_loopback_model(app, loopback_llm.base_url, "sk-wrong-key-000000", refused=True)
    asked = len(loopback_llm.requests)
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and all("Traceback" not in e.value for e in at.error)
    assert any("t2rag could not finish" in e.value for e in at.error) or any(
        "tl-answer-error" in b and "could not finish" in b for b in _answer_boxes(at)
    ), [e.value for e in at.error]
    assert all("tl-answer-correct" not in b for b in _answer_boxes(at))
    assert len(loopback_llm.requests) - asked <= 2  # a refused key is not retried


def test_a_typed_question_runs_without_a_gold_answer(app):
    at = _goto(app, "ask")
    at.radio(key="ask_q_mode").set_value("Type a question").run()
    assert not at.button(key="ask_go").disabled  # never disabled: the question is checked on the press
    at.text_input(key="ask_q_text").input("What kind of demon is Lilu?")  # typed, then one press (a form)
    at.button(key="ask_go").click().run()
    _ok(at)
    run = at.session_state["ask_result"]
    assert run.question == "What kind of demon is Lilu?" and run.gold == [] and run.qid == ""
    boxes = _answer_boxes(at)
    assert boxes and all("Gold:" not in b and "tl-answer-unknown" in b for b in boxes)  # neutral


def test_manage_tab_imports_triplets_deletes_documents_and_drops_the_corpus(app, app_workspace, embedder):
    from engine.core.types import Document
    from engine.store import Workspace

    corpus = Workspace(app_workspace, embedder=embedder).create("manage")
    corpus.add_documents(
        [
            Document("d1", "Lisbon", "Lisbon is the capital of Portugal.", "a.txt"),
            Document("d2", "Porto", "Porto lies on the Douro river.", "b.txt"),
        ]
    )
    cid = corpus.chunks(doc_id="d1")[0].chunk_id
    corpus.close()
    at = app
    at.session_state["corpus"] = "manage"
    at.run()
    _ok(at)
    csv = f"chunk_id,subject,predicate,object\n{cid},Lisbon,capital of,Portugal\n".encode()
    at.file_uploader(key="import_trip_file").set_value(("t.csv", csv, "text/csv"))
    at.run()
    at.button(key="import_trip_go").click().run()
    _ok(at)
    assert any("Imported 1 triplet links" in s.value for s in at.success), [s.value for s in at.success]
    at = _goto(at, "ask")  # the Porto chunk was never extracted: the question pages say so
    assert any("1 of 2 chunks have no triplets yet" in w.value for w in at.warning)
    at = _goto(at, "corpora")
    at.multiselect(key="del_docs").set_value(["d2"]).run()
    at.button(key="del_docs_go").click().run()
    _ok(at)
    assert int({m.label: m.value for m in at.metric}["Documents"]) == 1
    # the delete was snapshotted: restore the snapshot as a new corpus holding both documents
    at.button(key="backup_go").click().run()
    _ok(at)
    assert any("Backed up to" in m.value for m in at.success)
    snaps = at.selectbox(key="restore_pick").options
    at.selectbox(key="restore_pick").select_index(len(snaps) - 1).run()  # the oldest: taken before the delete
    at.text_input(key="restore_as").input("manage-before").run()
    at.button(key="restore_new").click().run()
    _ok(at)
    assert {d.doc_id for d in Workspace(app_workspace, embedder=embedder).open("manage-before").documents()} == {
        "d1",
        "d2",
    }
    at.button(key="check_go").click().run()
    _ok(at)
    assert any("ok" in m.value for m in at.success)
    at.text_input(key="drop_confirm").input("manage").run()
    at.button(key="drop_go").click().run()
    _ok(at)
    assert not (app_workspace / "manage").exists()
    assert at.session_state["corpus"] == CORPUS  # back on a corpus that exists
    # and back again, from Recently deleted corpora
    [undrop] = [b for b in at.button if b.key and b.key.startswith("undrop_")]
    undrop.click().run()
    _ok(at)
    assert (app_workspace / "manage" / "corpus.sqlite").exists() and at.session_state["corpus"] == "manage"


def test_presentation_mode_opens_a_saved_comparison(app, app_workspace):
    at = _goto(app, "compare")
    at.button(key="cmp_go").click().run()
    at.button(key="cmp_save").click().run()
    _ok(at)
    question = at.session_state["compare"].question
    at.session_state["compare"] = None  # a fresh session: only the saved file is left
    at.button(key="w_present_on").click().run()
    _ok(at)
    label = at.selectbox(key="present_pick").options[0]  # question · methods · time, not a file name
    assert not label.endswith(".json") and "T2RAG vs KG2RAG" in label
    assert label.startswith(question[:30])
    at.button(key="present_start").click().run()
    _ok(at)
    assert at.session_state["present_run"].kind == "comparison"
    assert any("The question" in c.value for c in at.caption)
    assert _next(at, "present_step")
