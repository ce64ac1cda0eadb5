"""A corpus create either completes or leaves nothing: no empty corpus after a file nobody could
read, no half-built one after a failure mid-build, from the CLI and from Python.

Data under tests/fixtures/qa (copied with attribution): MuSiQue (CC BY 4.0).
"""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.core.types import Document, Question
from engine.store import Corpus, CorpusError


@pytest.fixture()
def ws_root(tmp_path, monkeypatch, embedder):
    root = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    return root


def _left(root) -> list[str]:
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def _ircot_file(shared_data, tmp_path, n=3):
    recs = json.loads((shared_data / "musique_kag_100" / "musique_qa_100.json").read_text())[:n]
    lines = [
        {
            "question_id": r["id"],
            "question_text": r["question"],
            "answers_objects": [{"number": "", "date": {"day": "", "month": "", "year": ""}, "spans": [r["answer"]]}],
            "contexts": r["paragraphs"],
        }
        for r in recs
    ]
    path = tmp_path / "musique_dev_subsampled.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return path


def test_cli_create_from_an_unreadable_file_leaves_no_corpus(ws_root, tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text('{"docs": [1, 2')
    code = main(["corpus", "create", "bad", "--from", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "broken.json" in err and "was not created" in err
    assert _left(ws_root) == []
    assert main(["corpus", "list"]) == 0 and "no corpora" in capsys.readouterr().out


def test_cli_create_failing_mid_build_leaves_no_corpus(ws_root, tmp_path, capsys, monkeypatch):
    doc = tmp_path / "paris.txt"
    doc.write_text("Paris is the capital of France.\n")

    real = Corpus.add_documents

    def half_then_fail(self, docs, *a, **k):
        real(self, docs, *a, **k)  # chunks embedded and stored, then the build fails
        raise OSError("disk full")

    monkeypatch.setattr(Corpus, "add_documents", half_then_fail)
    code = main(["corpus", "create", "notes", "--from", str(doc)])
    assert code != 0 and "disk full" in capsys.readouterr().err
    assert _left(ws_root) == []
    monkeypatch.setattr(Corpus, "add_documents", real)
    assert main(["corpus", "create", "notes", "--from", str(doc)]) == 0  # the name is free again
    assert _left(ws_root) == ["notes"]


def test_cli_creates_a_corpus_from_an_ircot_file(ws_root, shared_data, tmp_path, capsys):
    path = _ircot_file(shared_data, tmp_path)
    code = main(["corpus", "create", "ircot", "--from", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and "+3 questions" in out
    assert main(["corpus", "show", "ircot", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["counts"]["questions"] == 3 and info["counts"]["documents"] == 60
    assert _left(ws_root) == ["ircot"]


def _docs() -> list[Document]:
    return [
        Document("d1", "Paris", "Paris is the capital of France."),
        Document("d2", "Lyon", "Lyon is a city in France."),
    ]


def test_python_create_from_is_all_or_nothing(workspace, monkeypatch):
    root = workspace.root
    with pytest.raises(CorpusError, match="no document"):
        workspace.create_from("empty", [])
    assert _left(root) == []

    for exc in (RuntimeError("embedder broke"), KeyboardInterrupt()):

        def fail(self, *a, _exc=exc, **k):
            raise _exc

        monkeypatch.setattr(Corpus, "add_questions", fail)
        with pytest.raises(type(exc)):
            workspace.create_from("half", _docs(), [Question("q1", "Capital of France?", ("Paris",))])
        assert _left(root) == [] and not workspace.exists("half")
    monkeypatch.undo()

    corpus, report, nq = workspace.create_from("full", _docs(), [Question("q1", "Capital of France?", ("Paris",))])
    assert (report.documents_added, nq) == (2, 1) and corpus.name == "full"
    assert corpus.counts().chunks == 2 and workspace.list() == ["full"] and _left(root) == ["full"]
    hits = corpus.search_chunks(corpus.embed(["capital of France"]), 1)
    assert hits[0]  # the indexes came along with the rename

    with pytest.raises(CorpusError, match="already exists"):
        workspace.create_from("full", _docs()[:1])
    assert workspace.open("full").counts().documents == 2  # the existing corpus is untouched


def test_leftovers_of_a_killed_create_are_cleared(workspace):
    stale = workspace.root / ".notes.creating-999999999-abcdef"
    stale.mkdir()
    (stale / "corpus.sqlite").write_bytes(b"half")
    (workspace.root / "notes").mkdir()  # the empty folder an older build left behind
    corpus, _, _ = workspace.create_from("notes", _docs())
    assert _left(workspace.root) == ["notes"] and corpus.counts().documents == 2
