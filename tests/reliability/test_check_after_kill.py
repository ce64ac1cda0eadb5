"""`corpus check` after a kill, and a silent change inside SQLite (issue 38, break 6).

Before, a kill inside `delete-doc` or `extract` between the database commit and the index rename
left `corpus check` exiting 1 ("stale", "missing index") until a question or `--repair` ran, and
the `.chunks.index.*.tmp` of the killed write stayed forever; a chunk text changed in SQLite by
another tool passed `corpus check` and changed answers. Now `corpus check` (no --repair) brings
the index files in step, the sweep removes a dead writer's temporary files, and each row's digest
(engine/store/digests.py) names the changed row.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from engine.cli import main
from engine.core.faults import ENV as FAULT_ENV
from engine.core.faults import PAUSE_ENV
from engine.core.types import Document
from engine.integrity import inspect, repair
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace
    from engine.triplets.extraction import run_extraction
    from tests._fake_embedder import HashEmbedder
    c = Workspace({root!r}, embedder=HashEmbedder()).open("demo")
    if {op!r} == "delete-doc":
        c.delete_document("d1")
    else:  # `python -m engine extract`: the run, then the index files brought in step
        run_extraction(c, OfflineReasoner(), concurrency=1)
        c.refresh_indexes()
    print("finished", flush=True)
""")

#: (writer, where it is killed): after the commit, before the index update; mid index file
#: (header written); the new index file complete, not yet renamed into place
KILLS = [
    ("delete-doc", "write.after_commit@1"),
    ("delete-doc", "index.mid_write@1"),
    ("delete-doc", "index.before_rename@1"),
    ("extract", "extract.after_store@3"),
    ("extract", "index.before_rename@1"),
]


@pytest.fixture()
def ws(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    ws = Workspace(root, embedder=HashEmbedder())
    c = ws.create("demo")
    c.add_documents(
        [
            Document(f"d{i}", f"Town{i}", f"Town{i} is a town in Norway. Person{i} was born in Town{i}.", "t.txt")
            for i in range(8)
        ]
    )
    c.refresh_indexes()
    c.close()
    return ws


@pytest.mark.parametrize("op, fault", KILLS, ids=[f"{o}-{f}" for o, f in KILLS])
def test_check_is_clean_after_a_kill_between_commit_and_index(ws, capsys, op, fault):
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV} | {FAULT_ENV: fault}
    script = WRITER.format(repo=str(REPO), root=str(ws.root), op=op)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])  # the point was reached

    assert main(["corpus", "check", "demo"]) == 0  # no --repair
    out = capsys.readouterr().out
    assert "demo: ok" in out, out
    folder = ws.path_of("demo")
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], sorted(os.listdir(folder))
    assert inspect(folder) == []
    corpus = Workspace(ws.root, embedder=HashEmbedder()).open("demo")
    assert corpus.check() == []
    if op == "delete-doc":
        assert "d1" not in {d.doc_id for d in corpus.documents()}  # committed before the kill: kept


def test_a_chunk_text_changed_inside_sqlite_is_named_by_check(ws, capsys):
    with sqlite3.connect(ws.path_of("demo") / "corpus.sqlite") as con:  # another tool, behind our back
        con.execute("UPDATE chunks SET text = replace(text, 'Norway', 'Sweden') WHERE doc_id = 'd3'")
    assert main(["corpus", "check", "demo"]) == 1
    out = capsys.readouterr().out
    assert "1 chunk row(s) no longer match their digest" in out and "chunk 'd3" in out, out
    assert "demo: ok" not in out


@pytest.mark.parametrize("table", ["triplets", "sentence_vecs"])
def test_a_changed_vector_is_named_by_check_and_left_out_by_repair(ws, capsys, table):
    corpus = ws.open("demo")
    corpus.import_triplets([(ch.chunk_id, ch.title, "is in", "Norway") for ch in corpus.chunks()])
    corpus.sentence_vectors(["Town1 is a town in Norway."])
    corpus.close()
    with sqlite3.connect(ws.path_of("demo") / "corpus.sqlite") as con:
        name = "tid" if table == "triplets" else "key"
        rowid, label, vec = con.execute(f"SELECT rowid, {name}, vec FROM {table} WHERE vec IS NOT NULL").fetchone()
        flipped = bytes([vec[0] ^ 0x01]) + vec[1:]  # one bit of one vector
        con.execute(f"UPDATE {table} SET vec = ? WHERE rowid = ?", (flipped, rowid))
    assert main(["corpus", "check", "demo"]) == 1
    assert "no longer match their digest" in capsys.readouterr().out
    report = repair(ws, "demo")  # salvaged into a new corpus without that row, and it says so
    if table == "triplets":  # the triplet is lost (and named); sentence vectors are never salvaged (re-embedded)
        assert report.lost[0] == f"1 triplets rows whose content no longer matched their digest ({label!r})"
    assert report.remaining == [] and inspect(ws.path_of("demo-recovered")) == []
