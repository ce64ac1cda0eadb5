"""SIGKILL drop, undo-drop, restore, backup and repair at each named fault point (engine/core/faults.py;
17 kills, plus a salvage); after every kill the workspace's sweep (engine/integrity/interrupted.py)
finishes or rolls back what was interrupted, and `corpus list` (or `snapshots`/`undo-drop`) finds
the corpus with the very content it had. Before the manifest came first, a drop killed after its
move left the corpus in `.snapshots/NAME/<stamp>-drop/` where neither `snapshots` nor `undo-drop`
saw it (issue 26)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from engine.core.types import Document
from engine.integrity.backup import find_snapshot, list_snapshots, snapshot_before, undo_drop
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

WORKER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.integrity.backup import backup, find_snapshot, restore, undo_drop
    from engine.integrity import repair
    from engine.store import Workspace
    from tests._fake_embedder import HashEmbedder
    ws = Workspace({root!r}, embedder=HashEmbedder())
    op = {op!r}
    if op == "drop":
        ws.drop("demo")
    elif op == "undo-drop":
        undo_drop(ws, "demo")
    elif op == "restore":  # replace the corpus by its snapshot (the current one is snapshotted first)
        restore(ws, find_snapshot(ws, "demo"), force=True)
    elif op == "restore-as":
        restore(ws, find_snapshot(ws, "demo"), "demo-copy")
    elif op == "backup":
        backup(ws.open("demo"), {root!r} + "/../outside-backup")
    elif op == "repair":
        repair(ws, "demo")
    print("finished", flush=True)
""")


def content(corpus) -> dict[str, str]:
    """Digests of what a corpus holds: documents, chunk texts, triplets with sources, every vector."""
    chunks = corpus.chunks()
    trips = corpus.triplets()
    h = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    return {
        "documents": h(repr(sorted(d.doc_id for d in corpus.documents())).encode()),
        "chunks": h(repr([(c.chunk_id, c.title, c.text) for c in chunks]).encode()),
        "triplets": h(repr([(t.subject, t.predicate, t.object, t.chunk_ids) for t in trips]).encode()),
        "chunk_vectors": h(corpus.chunk_vectors([c.chunk_id for c in chunks]).tobytes()),
        "prop_vectors": h(corpus.proposition_vectors([t.triplet_id for t in trips]).tobytes()),
    }


def _fill(ws: Workspace) -> dict[str, str]:
    c = ws.create("demo")
    docs = [
        Document(f"d{i}", f"Place{i}", f"Place{i} is a town where person{i} was born. " * 8, f"p{i}.txt")
        for i in range(12)
    ]
    c.add_documents(docs)
    c.import_triplets([(ch.chunk_id, f"Person{k}", "born in", f"Place{k}") for k, ch in enumerate(c.chunks())])
    c.refresh_indexes()
    before = content(c)
    c.close()
    return before


def _run(root, op: str, fault: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRIPLET_LENS_FAULT": fault}
    return subprocess.run(
        [sys.executable, "-c", WORKER.format(repo=str(REPO), root=str(root), op=op)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# (operation, fault point@n). Each is reached: the worker must die by SIGKILL there.
KILLS = [
    ("drop", "manifest.before_rename@1"),
    ("drop", "drop.after_manifest@1"),
    ("drop", "drop.after_move@1"),
    ("undo-drop", "manifest.before_rename@1"),
    ("undo-drop", "restore.after_move@1"),
    ("restore", "backup.after_database@1"),
    ("restore", "backup.before_rename@1"),
    ("restore", "restore.mid_copy@1"),
    ("restore", "restore.mid_copy@3"),
    ("restore", "restore.after_aside@1"),
    ("restore", "restore.after_move@1"),
    ("restore-as", "restore.mid_copy@2"),
    ("restore-as", "restore.after_move@1"),
    ("backup", "backup.after_database@1"),
    ("backup", "manifest.before_rename@1"),
    ("backup", "backup.before_rename@1"),
    ("repair", "repair.after_unlink@1"),
]


@pytest.mark.parametrize("op, fault", KILLS, ids=[f"{o}-{f}" for o, f in KILLS])
def test_a_kill_at_each_point_leaves_the_corpus_findable_with_its_content(tmp_path, op, fault, monkeypatch):
    root = tmp_path / "ws"
    ws = Workspace(root, embedder=HashEmbedder())
    before = _fill(ws)
    if op == "undo-drop":
        ws.drop("demo")
    if op in ("restore", "restore-as"):
        snapshot_before(ws, ws.open("demo"), "manual")
    if op == "repair":  # a damaged index file: repair removes it and rebuilds it from the database
        (root / "demo" / "chunks.index").write_bytes(b"garbage")
    proc = _run(root, op, fault)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr[-2000:])

    again = Workspace(root, embedder=HashEmbedder())  # the sweep runs here
    if "demo" not in again.list():  # killed after the move of a drop: the snapshot must show it
        drops = [s for s in list_snapshots(again, "demo") if s.reason == "drop"]
        assert drops, f"corpus lost from view after {op} killed at {fault}: {sorted(os.listdir(root))}"
        undo_drop(again, "demo")
    assert "demo" in again.list()
    corpus = again.open("demo")
    assert content(corpus) == before
    assert corpus.check() == []
    corpus.close()
    if op == "restore-as" and "demo-copy" in again.list():  # finished before the kill: a whole copy
        assert content(again.open("demo-copy")) == before
    leftovers = [p.name for p in root.iterdir() if p.name.startswith(".") and p.name != ".snapshots"]
    assert leftovers == [], f"the sweep left {leftovers}"
    for snap_dir in (root / ".snapshots").glob("*/*"):
        assert (snap_dir / "manifest.json").is_file(), f"{snap_dir} has no manifest after the sweep"
        assert not list(snap_dir.glob(".manifest.json.*.tmp")), f"stray manifest in {snap_dir}"
    assert not list((root / "demo").glob("manifest.json")), "a corpus folder kept a drop's manifest"
    if op == "backup":  # a killed backup never leaves a half backup where one was asked for
        assert not (tmp_path / "outside-backup").exists()
    # the command line agrees: corpus check passes
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    assert main(["corpus", "check", "demo"]) == 0


def test_a_drop_killed_after_its_move_by_an_older_build_is_found_by_the_sweep(tmp_path, capsys, monkeypatch):
    """The state issue 26 found: the folder moved into the snapshots, no manifest, a stray temp file."""
    root = tmp_path / "ws"
    ws = Workspace(root, embedder=HashEmbedder())
    before = _fill(ws)
    stray = root / ".snapshots" / "demo" / "20260101T000000-000001-drop"
    stray.parent.mkdir(parents=True)
    os.replace(root / "demo", stray)
    (stray / ".manifest.json.abc123.tmp").write_text("{")  # atomic_write_text's name in that build
    (root / ".demo.restoring-999999999").mkdir()  # an old undo-drop's temp, empty: left alone
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    from engine.cli import main

    main(["corpus", "check", "demo"])  # opening the workspace sweeps; the corpus itself is not back yet
    out = capsys.readouterr().out
    assert "recovered: corpus 'demo': an interrupted drop is now a snapshot" in out
    again = Workspace(root, embedder=HashEmbedder())
    assert [s.reason for s in list_snapshots(again, "demo")] == ["drop"]
    assert not list(stray.glob(".manifest.json.*.tmp"))  # the older build's stray temp file is gone
    assert content(undo_drop(again, "demo")) == before


def test_an_undo_drop_orphaned_by_an_older_build_is_brought_back(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root, embedder=HashEmbedder())
    before = _fill(ws)
    ws.drop("demo")
    snap = find_snapshot(ws, "demo")
    os.replace(snap.path, root / ".demo.restoring-999999999")  # killed between the two renames
    (root / ".demo.restoring-999999999" / "manifest.json").unlink()
    again = Workspace(root, embedder=HashEmbedder())
    assert any("finished an interrupted undo-drop" in a for a in again.recovered), again.recovered
    assert content(again.open("demo")) == before


def test_a_salvage_killed_before_its_rename_leaves_the_damaged_original_and_no_half_corpus(tmp_path, monkeypatch):
    import sqlite3

    root = tmp_path / "ws"
    ws = Workspace(root, embedder=HashEmbedder())
    before = _fill(ws)
    db = root / "demo" / "corpus.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = con.execute("SELECT rootpage FROM sqlite_master WHERE name='chunks'").fetchone()[0] - 1
    con.close()
    data = bytearray(db.read_bytes())
    data[page * 4096 : (page + 1) * 4096] = os.urandom(4096)  # the chunks b-tree's root: a salvage case
    db.write_bytes(bytes(data))
    damaged = hashlib.sha256(db.read_bytes()).hexdigest()
    proc = _run(root, "repair", "repair.before_rename@1")
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])
    again = Workspace(root, embedder=HashEmbedder())
    assert any("interrupted salvage" in a for a in again.recovered), again.recovered
    assert again.list() == ["demo"]  # no half-recovered corpus
    assert hashlib.sha256(db.read_bytes()).hexdigest() == damaged  # the original as it was
    assert [p.name for p in root.iterdir() if p.name.startswith(".") and p.name != ".snapshots"] == []
    from engine.integrity import repair

    report = repair(again, "demo")  # the salvage runs again to the end
    assert report.recovered_into == "demo-recovered" and report.remaining == []
    assert content(again.open("demo-recovered"))["chunks"] == before["chunks"]
