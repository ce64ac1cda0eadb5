"""Recoverable corpora: every kind of damage is named by `check`, repaired (or salvaged, stating
what was lost) by `check --repair`; drop, delete-doc and restore keep a way back; a database that
goes back in time never answers from an index built later."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import threading

import numpy as np
import pytest

from engine.core.types import Document
from engine.integrity import inspect, repair
from engine.integrity.backup import backup, find_snapshot, list_snapshots, restore, undo_drop
from engine.store import CorpusError, Workspace
from engine.vectors import FaissVectorStore
from tests._fake_embedder import HashEmbedder

WORDS = (
    "river mountain castle painter novel harbour violin senate comet garden orchard bishop "
    "railway glacier opera lighthouse"
).split()


def _docs(n: int, start: int = 0) -> list[Document]:
    out = []
    for i in range(start, start + n):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(60))
        text = f"Place{i} is a town where person{i} was born. {words}."
        out.append(Document(f"d{i:03d}", f"Place{i}", text, f"p{i}.txt"))
    return out


def _fill(corpus, n: int = 40) -> None:
    corpus.add_documents(_docs(n))
    rows = [(c.chunk_id, f"Person{k}", "born in", f"Place{k}") for k, c in enumerate(corpus.chunks())]
    corpus.import_triplets(rows)
    corpus.refresh_indexes()


def content(corpus) -> dict[str, str]:
    """Digests of what a corpus holds: chunk texts, triplets with sources, and every vector."""
    chunks = corpus.chunks()
    ids = [c.chunk_id for c in chunks]
    trips = corpus.triplets()
    h = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    return {
        "chunks": h(repr([(c.chunk_id, c.title, c.text) for c in chunks]).encode()),
        "triplets": h(repr([(t.subject, t.predicate, t.object, t.chunk_ids) for t in trips]).encode()),
        "chunk_vectors": h(corpus.chunk_vectors(ids).tobytes()),
        "prop_vectors": h(corpus.proposition_vectors([t.triplet_id for t in trips]).tobytes()),
    }


@pytest.fixture()
def ws(tmp_path):
    return Workspace(tmp_path / "ws", embedder=HashEmbedder())


@pytest.fixture()
def filled(ws):
    c = ws.create("demo")
    _fill(c)
    before = content(c)
    c._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return ws, before


def _reopen(ws):
    return Workspace(ws.root, embedder=HashEmbedder())


# --- the eight kinds of damage ------------------------------------------------------------------


def _garbage_page(path, page: int) -> None:
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[page * size : (page + 1) * size] = os.urandom(size)
    path.write_bytes(bytes(data))


def _swap(path) -> None:
    a, b = path / "chunks.index", path / "propositions.index"
    tmp = path / "x.tmp"
    os.replace(a, tmp)
    os.replace(b, a)
    os.replace(tmp, b)


def _wrong_dim(path) -> None:
    store = FaissVectorStore(8)
    store.add(np.arange(3), np.eye(3, 8, dtype=np.float32))
    con = sqlite3.connect(path / "corpus.sqlite")
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    con.close()
    store.save(path / "chunks.index", f"{meta['corpus_token'].strip(chr(34))}/chunks/{meta['chunk_gen']}")


INDEX_DAMAGE = {
    "deleted index": (lambda p: (p / "chunks.index").unlink(), "missing"),
    "garbage index": (lambda p: (p / "chunks.index").write_bytes(os.urandom(5000)), "not a Triplet Lens index"),
    "wrong-dimension index": (_wrong_dim, "dimension 8"),
    "directory index": (lambda p: ((p / "chunks.index").unlink(), (p / "chunks.index").mkdir()), "a directory"),
    "swapped index files": (_swap, "files swapped"),
    "flipped vector bytes": (lambda p: _flip_tail(p / "chunks.index"), "checksum"),
}


def _flip_tail(file) -> None:
    data = bytearray(file.read_bytes())
    for i in range(len(data) - 400, len(data) - 300):
        data[i] ^= 0x5A
    file.write_bytes(bytes(data))


@pytest.mark.parametrize("kind", list(INDEX_DAMAGE))
def test_index_damage_is_named_and_repaired_to_identical_content(filled, kind):
    ws, before = filled
    path = ws.path_of("demo")
    damage, words = INDEX_DAMAGE[kind]
    damage(path)
    findings = inspect(path)
    assert findings and all(f.derived for f in findings), findings
    assert any(words in f.message for f in findings), findings
    report = repair(_reopen(ws), "demo")
    assert report.remaining == [] and inspect(path) == []
    c = _reopen(ws).open("demo")
    assert content(c) == before and c.check() == []


def test_a_directory_where_the_index_was_does_not_stop_a_question(filled):
    ws, _ = filled
    path = ws.path_of("demo")
    (path / "chunks.index").unlink()
    (path / "chunks.index").mkdir()
    c = _reopen(ws).open("demo")
    q = c.embed(["Place3 is a town where person3 was born"])
    hits = c.search_chunks(q, 1)[0]
    ids = [ch.chunk_id for ch in c.chunks()]
    assert hits and hits[0][0] == ids[int(np.argmax(c.chunk_vectors(ids) @ q[0]))]
    assert [p.name for p in path.iterdir() if p.name.startswith("chunks.index.damaged-")]


@pytest.mark.parametrize("kind", ["garbage page", "truncated"])
def test_damaged_database_is_salvaged_into_a_new_corpus_stating_what_was_lost(filled, kind):
    ws, _ = filled
    path = ws.path_of("demo")
    db = path / "corpus.sqlite"
    original = _reopen(ws).open("demo")
    orig_chunks = {c.chunk_id: c.text for c in original.chunks()}
    orig_vecs = dict(zip(orig_chunks, original.chunk_vectors(list(orig_chunks))))
    original.close()
    pages = db.stat().st_size // 4096
    if kind == "garbage page":  # the root of the chunks b-tree: every chunk row loses its way in
        con = sqlite3.connect(db)
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        con.close()
        _garbage_page(db, root - 1)
    else:  # a torn tail: the last pages (triplets, here) are gone
        with open(db, "r+b") as fh:
            fh.truncate((pages - 2) * 4096)
    damaged_bytes = db.read_bytes()
    findings = inspect(path)
    assert any(f.part == "corpus.sqlite" and not f.derived for f in findings), findings
    report = repair(_reopen(ws), "demo")
    assert report.recovered_into == "demo-recovered" and report.remaining == []
    assert db.read_bytes() == damaged_bytes  # the original is never overwritten
    rec = _reopen(ws).open("demo-recovered")
    got = {c.chunk_id: c.text for c in rec.chunks()}
    if kind == "garbage page":  # the leaf pages are intact: a page scan finds every chunk
        assert len(got) == len(orig_chunks)
    assert got
    assert all(orig_chunks[k] == v for k, v in got.items())  # what came back is intact
    vecs = rec.chunk_vectors(list(got))
    assert all(np.array_equal(v, orig_vecs[k]) for k, v in zip(got, vecs))
    assert rec.check() == []
    lost = len(orig_chunks) - len(got)
    if lost:  # stated exactly, from the old index's ids
        assert any(line.startswith(f"{lost} of the {len(orig_chunks)} chunks") for line in report.lost), report.lost


def test_unreadable_database_points_to_snapshots(filled):
    ws, _ = filled
    db = ws.path_of("demo") / "corpus.sqlite"
    db.write_bytes(b"not a database at all" * 100)
    assert inspect(db.parent)[0].part == "corpus.sqlite"
    with pytest.raises(CorpusError, match="restore a snapshot"):
        repair(_reopen(ws), "demo")
    assert not _reopen(ws).exists("demo-recovered")


# --- a database that goes back in time ----------------------------------------------------------


def test_rolled_back_database_never_answers_from_the_later_index(ws):
    c = ws.create("demo")
    c.add_documents(_docs(5))
    c.close()
    db = ws.path_of("demo") / "corpus.sqlite"
    saved = db.read_bytes()
    c = _reopen(ws).open("demo")
    c.add_documents(_docs(1, start=100))  # doc B
    c._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    db.write_bytes(saved)  # the database goes back; chunks.index still holds B
    assert any("stale" in f.message for f in inspect(db.parent))
    c = _reopen(ws).open("demo")
    c.add_documents(_docs(1, start=200))  # doc C: the old counter would have replayed B's generation
    ids = {ch.chunk_id for ch in c.chunks()}
    order = sorted(ids)
    vecs = c.chunk_vectors(order)
    for q in ("Place100 is a town where person100 was born", "Place200 is a town where person200 was born"):
        qv = c.embed([q])
        hits = c.search_chunks(qv, 1)[0]
        assert hits[0][0] in ids and hits[0][1] == pytest.approx(float(np.max(vecs @ qv[0])), abs=1e-5)
    assert c.check() == [] and inspect(db.parent) == []


def test_lost_wal_is_detected_and_the_index_rebuilt(ws, tmp_path):
    c = ws.create("demo")
    c.add_documents(_docs(5))
    c._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c._db.execute("PRAGMA wal_autocheckpoint=0")
    c.add_documents(_docs(2, start=50))  # committed to the WAL only; chunks.index saved with it
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("corpus.sqlite", "chunks.index"):
        shutil.copyfile(c.path / name, copy / name)
    c.close()
    findings = inspect(copy)
    assert any("writes lost" in f.message for f in findings), findings


# --- snapshots ----------------------------------------------------------------------------------


def test_drop_then_undo_drop_brings_back_the_same_corpus(filled):
    ws, before = filled
    ws = _reopen(ws)
    ws.drop("demo")
    assert not ws.exists("demo") and [s.reason for s in list_snapshots(ws, "demo")] == ["drop"]
    c = undo_drop(ws, "demo")
    assert content(c) == before and c.check() == []
    with pytest.raises(CorpusError, match="no dropped corpus"):
        undo_drop(ws, "demo")


def test_delete_doc_is_snapshotted_and_restorable_and_old_snapshots_are_pruned(filled):
    ws, before = filled
    ws = _reopen(ws)
    ws.keep_snapshots = 2
    c = ws.open("demo")
    for doc in ("d000", "d001", "d002"):
        c.delete_document(doc)
    snaps = list_snapshots(ws, "demo")
    assert [s.reason for s in snaps] == ["delete-doc d002", "delete-doc d001"]  # d000's pruned
    c.close()
    first = snaps[-1]
    with pytest.raises(CorpusError, match="exists"):
        restore(ws, first)
    restored = restore(ws, first, "demo-before")
    assert restored.get_document("d001") is not None and restored.get_document("d000") is None
    replaced = restore(ws, find_snapshot(ws, "demo"), force=True)
    assert replaced.get_document("d002") is not None
    assert list_snapshots(ws, "demo")[0].reason == "before-restore"


def test_a_damaged_snapshot_is_refused(filled, tmp_path):
    ws, _ = filled
    info = backup(_reopen(ws).open("demo"), tmp_path / "bk")
    with open(info.path / "corpus.sqlite", "r+b") as fh:
        fh.seek(5000)
        fh.write(b"\xff" * 16)
    with pytest.raises(CorpusError, match="corpus.sqlite does not match its checksum"):
        restore(_reopen(ws), info, "again")
    assert not _reopen(ws).exists("again")


def test_backup_while_questions_and_a_writer_run_is_consistent(filled, tmp_path):
    ws, _ = filled
    c = _reopen(ws).open("demo")
    stop = threading.Event()
    errors: list[BaseException] = []

    def ask(i):
        try:
            while not stop.is_set():
                c.search_chunks(c.embed([f"Place{i} town"]), 5)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def write():
        try:
            for k in range(5):
                c.add_documents(_docs(1, start=300 + k))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    infos = [backup(c, tmp_path / f"bk{k}") for k in range(3)]
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    for k, info in enumerate(infos):
        r = restore(_reopen(ws), info, f"copy{k}")
        assert r.check() == [] and inspect(r.path) == []
        docs = {d.doc_id for d in r.documents()}
        assert {ch.doc_id for ch in r.chunks()} == docs  # one committed state, never half an add


def test_a_create_killed_midway_leaves_nothing(ws, monkeypatch):
    from engine import store

    real = store.Corpus._set_meta
    calls = {"n": 0}

    def dies(self, key, value):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # killed while the new database is being written
        return real(self, key, value)

    monkeypatch.setattr(store.Corpus, "_set_meta", dies)
    with pytest.raises(KeyboardInterrupt):
        ws.create("half")
    monkeypatch.undo()
    assert not ws.exists("half") and ws.list() == [] and not (ws.root / "half").exists()
    assert not [p for p in ws.root.iterdir() if ".creating" in p.name]
    ws.create("half").close()  # the name is free: no "already exists"
    assert ws.list() == ["half"]
