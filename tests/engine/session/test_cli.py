"""`python -m engine` as a shell user meets it: exit codes, messages, and the corpus it leaves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.cli import main
from tests.conftest import REPO, SHARED_DATA


@pytest.fixture()
def ws(tmp_path, monkeypatch, embedder):
    root = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    return root


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "beatles.md").write_text(
        "# The Beatles\n\nThe Beatles were an English rock band formed in "
        "Liverpool in 1960.\n\nJohn Lennon was a member of the Beatles.\n"
    )
    (tmp_path / "paris.txt").write_text("Paris is the capital of France. The Eiffel Tower is in Paris.\n")
    (tmp_path / "broken.json").write_text('{"docs": [1, 2')
    (tmp_path / "empty.txt").write_text("")
    return tmp_path


def test_create_list_show_add_delete_drop(ws, files, capsys):
    code, out, err = run(
        capsys,
        "corpus",
        "create",
        "notes",
        "--from",
        str(files / "beatles.md"),
        str(files / "broken.json"),
        str(files / "empty.txt"),
    )
    assert code == 0
    assert "broken.json" in err and "empty.txt" in err  # each rejected file named, the batch still loaded
    assert "+1 documents" in out

    code, out, _ = run(capsys, "corpus", "add", "notes", str(files / "paris.txt"))
    assert code == 0 and "+1 documents" in out

    code, out, _ = run(capsys, "corpus", "list")
    assert code == 0 and out.split()[0] == "notes"

    code, out, _ = run(capsys, "corpus", "show", "notes", "--json")
    info = json.loads(out)
    assert info["counts"]["documents"] == 2 and info["counts"]["pending"] == info["counts"]["chunks"]

    code, out, _ = run(capsys, "corpus", "show", "notes", "--documents")
    paris_id = next(line.split()[0] for line in out.splitlines() if line.rstrip().endswith("paris"))
    code, out, _ = run(capsys, "corpus", "delete-doc", "notes", paris_id)
    assert code == 0
    code, out, _ = run(capsys, "corpus", "check", "notes")
    assert code == 0 and "ok" in out
    code, out, _ = run(capsys, "corpus", "show", "notes", "--json")
    assert json.loads(out)["counts"]["documents"] == 1

    code, out, _ = run(capsys, "corpus", "drop", "notes")
    assert code == 0 and not (ws / "notes").exists()


def test_user_errors_exit_2_with_a_message(ws, files, capsys):
    code, _, err = run(capsys, "corpus", "create", "../escape", "--from", str(files / "paris.txt"))
    assert code == 2 and "invalid corpus name" in err and not (ws.parent / "escape").exists()
    code, _, err = run(capsys, "corpus", "show", "missing")
    assert code == 2 and "no corpus named 'missing'" in err
    code, _, err = run(capsys, "corpus", "create", "bad", "--from", str(files / "broken.json"))
    assert code == 2 and "broken.json" in err


def test_dataset_questions_and_triplet_import_export(ws, tmp_path, capsys):
    src = SHARED_DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"
    code, out, _ = run(capsys, "corpus", "create", "hp", "--from", str(src), "--limit-questions", "2")
    assert code == 0 and "+2 questions" in out
    csv = tmp_path / "t.csv"
    title = json.loads(src.read_text())[0]["context"][0][0]
    csv.write_text(
        f"subject,predicate,object,chunk\n{title},is about,testing,{title}\nNobody,knows,nothing,No Such Title\n"
    )
    code, out, err = run(capsys, "triplets", "import", "hp", str(csv))
    assert code == 0 and "imported 1 triplet" in out and "1 rows named no chunk" in out
    out_file = tmp_path / "export.jsonl"
    code, out, _ = run(capsys, "triplets", "export", "hp", str(out_file))
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert code == 0 and [(r["subject"], r["predicate"], r["object"]) for r in rows] == [(title, "is about", "testing")]


def test_module_entry_point_runs_in_a_fresh_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "corpus", "list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"TRIPLET_LENS_WORKSPACE": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0 and "no corpora" in proc.stdout


def test_extract_then_ask_each_method_offline_with_a_trace(ws, tmp_path, capsys):
    from engine.methods import load_result

    src = SHARED_DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"
    assert run(capsys, "corpus", "create", "hp", "--from", str(src), "--limit-questions", "2")[0] == 0
    code, out, _ = run(capsys, "extract", "hp")
    assert code == 0
    code, out, _ = run(capsys, "corpus", "show", "hp", "--json")
    counts = json.loads(out)["counts"]
    assert counts["pending"] == 0 and counts["triplets"] > 0
    question = json.loads(src.read_text())[1]["question"]
    for method in ("t2rag", "kg2rag", "standard"):
        trace = tmp_path / f"{method}.json"
        code, out, err = run(capsys, "ask", "hp", question, "--method", method, "--trace-out", str(trace), "--quiet")
        assert code == 0, err
        assert out.startswith("answer: ") and "reasoner: offline-rules" in out
        result = load_result(trace)
        assert result.method == method and result.question == question
        assert out.splitlines()[0] == f"answer: {result.answer}"
    code, _, err = run(capsys, "ask", "hp", question, "--method", "ircot")
    assert code == 1 and "needs a real LLM" in err


def test_check_repair_backup_restore_and_undo_drop(ws, files, capsys, tmp_path):
    code, _, _ = run(capsys, "corpus", "create", "notes", "--from", str(files / "beatles.md"), str(files / "paris.txt"))
    assert code == 0
    index = ws / "notes" / "chunks.index"
    index.write_bytes(b"garbage" * 50)
    code, out, _ = run(capsys, "corpus", "check", "notes")
    assert code == 1 and "damaged: chunks.index" in out and "--repair" in out
    code, out, _ = run(capsys, "corpus", "check", "notes", "--repair")
    assert code == 0 and "repaired: rebuilt chunks.index" in out and "notes: ok" in out

    code, out, _ = run(capsys, "corpus", "backup", "notes", "--to", str(tmp_path / "bk"))
    assert code == 0 and (tmp_path / "bk" / "manifest.json").is_file()
    code, out, _ = run(capsys, "corpus", "restore", "notes", "--snapshot", str(tmp_path / "bk"), "--as", "copy")
    assert code == 0 and "restored copy" in out and "2 docs" in out

    code, out, _ = run(capsys, "corpus", "drop", "notes")
    assert code == 0 and "corpus undo-drop notes" in out
    code, out, _ = run(capsys, "corpus", "snapshots", "notes")
    assert "drop" in out
    code, out, _ = run(capsys, "corpus", "undo-drop", "notes")
    assert code == 0 and "brought back corpus notes" in out
    code, out, _ = run(capsys, "corpus", "check", "notes")
    assert code == 0
    code, _, err = run(capsys, "corpus", "undo-drop", "notes")
    assert code == 2 and "no dropped corpus" in err
