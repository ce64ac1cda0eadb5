"""Paths: an upload's name, a triplet file's name and a saved run never make the app read or write
outside the workspace. Corpus names are validated in test_store; this file covers uploads through
to the stored corpus, and the saved-run files of the app (engine/runs/__init__.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from engine.ingest import load_bytes, load_uploads
from engine.methods.base import Result, Usage, result_from_json, result_to_json
from engine.runs import Run, list_runs, load_run, run_from_json, run_to_json, save_run
from engine.store import Workspace
from engine.triplets.files import read_triplet_bytes
from tests._fake_embedder import HashEmbedder

HOSTILE_NAMES = {
    "../../etc/passwd": "passwd",
    "/etc/passwd": "passwd",
    "../../../../../../tmp/evil.txt": "evil.txt",
    "..\\..\\Windows\\win.txt": "win.txt",
    "notes/../../secret.md": "secret.md",
    "a/b/\x00nul\x1b.txt": "nul.txt",
    "..": "upload",
    "../": "upload",
}


def all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def test_upload_names_keep_only_the_base_name_all_the_way_into_the_corpus(tmp_path, monkeypatch):
    # run from deep inside tmp_path so a relative "../../etc/passwd" would land inside tmp_path,
    # where the test can see it, instead of somewhere on the machine
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    corpus = ws.create("uploads")
    before = all_files(tmp_path)
    uploads = [
        (name, f"Upload number {i} says something distinct {i}.".encode()) for i, name in enumerate(HOSTILE_NAMES)
    ]
    batch = load_uploads(uploads)
    assert batch.errors == []
    assert [d.source for d in batch.documents] == list(HOSTILE_NAMES.values())
    for d in batch.documents:
        assert "/" not in d.source and "\\" not in d.source and "\x00" not in d.source and ".." not in d.source
    corpus.add_documents(batch.documents)
    stored = {corpus.get_document(d.doc_id).source for d in corpus.documents()}
    assert stored == set(HOSTILE_NAMES.values())
    # nothing appeared outside the corpus folder, and nothing named after an upload anywhere
    new = all_files(tmp_path) - before
    assert all(corpus.path in p.parents for p in new), sorted(map(str, new - {corpus.path}))
    assert not any(p.name in ("passwd", "evil.txt", "win.txt", "secret.md") for p in all_files(tmp_path))
    # a rejected upload's message carries the base name only
    ((name, msg),) = load_bytes("../../../etc/shadow.zip", b"PK\x03\x04").errors
    assert name == "shadow.zip" and msg.startswith("shadow.zip has an unsupported file type") and ".." not in msg


def test_triplet_upload_names_are_reduced_to_the_base_name():
    tf = read_triplet_bytes("../../../etc/triples.csv", b"subject,predicate,object,chunk\nA,b,C,T\n")
    assert tf.source == "triples.csv" and len(tf.rows) == 1
    tf = read_triplet_bytes("..\\..\\evil.jsonl", b"")
    assert tf.source == "evil.jsonl" and tf.error == "evil.jsonl is empty (0 bytes)"


# --- saved runs (engine/runs/__init__.py, used by the Ask, KG2RAG, Compare and Present pages) ------


def _result(method: str = "t2rag", question: str = "Who founded the city?") -> Result:
    return Result(method=method, question=question, answer="Romulus", usage=Usage())


@pytest.fixture()
def corpus_dir(tmp_path):
    path = tmp_path / "ws" / "c"
    path.mkdir(parents=True)
    return SimpleNamespace(path=path, name="c")


def test_an_uploaded_trace_naming_a_path_as_its_method_is_refused(corpus_dir, tmp_path):
    # The Ask / Compare pages let a user upload a trace, then "Save run" names the file after the
    # methods in it. A method of "../../../x" used to write outside runs/ (and the workspace).
    for method in ("../../../../escaped", "/tmp/escaped", "t2rag/../../x", "..", "a\\..\\b", "t2rag\x00"):
        with pytest.raises(ValueError, match="is not a method name"):
            result_from_json(result_to_json(_result(method)))
        comparison = json.dumps(
            {
                "kind": "triplet-lens-comparison",
                "schema_version": 1,
                "question": "q",
                "results": [json.loads(result_to_json(_result("t2rag"))), json.loads(result_to_json(_result(method)))],
            }
        )
        with pytest.raises(ValueError, match="is not a method name"):
            run_from_json(comparison)
    assert not any(p.name.startswith("escaped") for p in tmp_path.rglob("*"))


def test_saved_runs_stay_in_the_runs_folder_and_reopen(corpus_dir, tmp_path):
    hostile_question = "../../../etc/passwd\x00 or C:\\Windows\\x?"
    run = Run(
        question=hostile_question, results=[_result("t2rag", hostile_question), _result("kg2rag", hostile_question)]
    )
    path = save_run(corpus_dir, run)
    runs = corpus_dir.path / "runs"
    assert path.parent == runs and path.resolve().parent == runs.resolve()
    assert "/" not in path.name[:-5] and ".." not in path.name
    single = save_run(corpus_dir, Run(question="Who?", results=[_result()]))
    assert single.parent == runs
    # the listing holds exactly the saved files, and each reopens to the same run
    assert set(list_runs(corpus_dir)) == {path, single}
    reopened = load_run(path)
    assert reopened.question == hostile_question and [r.method for r in reopened.results] == ["t2rag", "kg2rag"]
    assert run_to_json(load_run(single)) == run_to_json(Run(question="Who?", results=[_result()]))
    # nothing was written outside the runs folder
    assert {p for p in tmp_path.rglob("*") if p.is_file()} == {path, single}


def test_the_saved_run_listing_ignores_what_is_not_a_run_file(corpus_dir):
    runs = corpus_dir.path / "runs"
    runs.mkdir()
    (runs / "eval-20260101-000000").mkdir()  # an evaluation folder: listed by the Evaluate page instead
    (runs / "notes.txt").write_text("not a run")
    good = save_run(corpus_dir, Run(question="Who?", results=[_result()]))
    assert list_runs(corpus_dir) == [good]
    assert list_runs(SimpleNamespace(path=corpus_dir.path.parent / "missing")) == []
    os.remove(good)
    assert list_runs(corpus_dir) == []
