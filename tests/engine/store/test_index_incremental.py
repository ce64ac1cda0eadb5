"""After an add or a delete, an index that was in step with the previous state is brought forward
by ids (added rows appended, deleted rows removed), not rebuilt from every stored vector; an HNSW
index, which cannot drop nodes, marks deleted ones as tombstones (rebuilt past a share of them).
The store's result equals a rebuild."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.core.types import Document
from engine.store import CorpusSettings, Workspace
from tests._fake_embedder import HashEmbedder


def _triplets(c, docs):
    chunk = dict(c._db.execute("SELECT doc_id, chunk_id FROM chunks").fetchall())
    return [(chunk[d.doc_id], f"Person{d.doc_id}", "born in", d.title) for d in docs]


def _docs(n, start=0):
    return [
        Document(f"d{i:03d}", f"Town{i}", f"Town{i} lies on river R{i}. Person{i} was born in Town{i}.", "t")
        for i in range(start, start + n)
    ]


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_add_and_delete_bring_the_index_forward_by_ids(tmp_path, monkeypatch, kind):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("inc", CorpusSettings(index_kind=kind))
    c.add_documents(_docs(60))
    c.import_triplets(_triplets(c, _docs(60)))
    c.refresh_indexes()
    rebuilt = []
    original = type(c)._rebuild_index

    def counting(self, which, dim, *a, **k):
        rebuilt.append(which)
        return original(self, which, dim, *a, **k)

    monkeypatch.setattr(type(c), "_rebuild_index", counting)
    statements = []
    c._db.set_trace_callback(statements.append)
    c.add_documents(_docs(5, start=100))
    c.import_triplets(_triplets(c, _docs(5, start=100)))
    c.refresh_indexes()
    c._db.set_trace_callback(None)
    assert rebuilt == []  # appended, both indexes
    # only the rows past the index's last id were read, not every id
    assert not [q for q in statements if q.strip() in ("SELECT rid FROM chunks", "SELECT tid FROM triplets")]
    assert len(c._index("chunks")) == 65 and len(c._index("propositions")) == 65
    hit = c.search_chunks(c.embed(["Town103 lies on river R103. Person103 was born in Town103."]), 1)[0][0][0]
    assert c._db.execute("SELECT doc_id FROM chunks WHERE chunk_id=?", (hit,)).fetchone()[0] == "d103"
    c.delete_document("d010")
    assert rebuilt == []  # HNSW too: the deleted vectors are tombstones
    ids = set(c._index("chunks").ids().tolist())
    want = {r[0] for r in c._db.execute("SELECT rid FROM chunks")}
    assert ids == want and len(ids) == 64
    assert c.check() == []
    # the same answers as an index rebuilt from the stored vectors
    q = c.embed(["Person42 was born in Town42", "river R104"])
    fresh = original(c, "chunks", c.embedder.dim)
    want_hits, got_hits = fresh.search(q, 3), c._index("chunks").search(q, 3)
    # equal scores; ids too, up to the order of tied scores (the test embedder's word hashes tie)
    assert np.allclose(want_hits[0], got_hits[0], atol=1e-6)
    assert np.array_equal(want_hits[1][:, 0], got_hits[1][:, 0]) or np.allclose(got_hits[0][:, 0], got_hits[0][:, 1])
    c.close()


def test_an_add_writes_a_delta_not_the_whole_index_and_a_reopen_trusts_it(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).create("d")
    c.add_documents(_docs(80))
    base = (c.path / "chunks.index").read_bytes()
    c.add_documents(_docs(3, start=200))  # 3 chunks on 80: within the delta share
    assert (c.path / "chunks.index").read_bytes() == base
    delta = c.path / "chunks.index.delta"
    assert delta.is_file() and delta.stat().st_size < len(base) / 10
    c.close()
    reopened = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("d")
    original = type(reopened)._rebuild_index

    def no_chunk_rebuild(self, which, *a, **k):
        assert which != "chunks", "the chunk index was rebuilt"
        return original(self, which, *a, **k)

    monkeypatch.setattr(type(reopened), "_rebuild_index", no_chunk_rebuild)
    assert len(reopened._index("chunks")) == 83 and reopened.check() == []
    monkeypatch.undo()
    reopened.delete_document("d005")  # a remove: the whole index is written, the delta folded in
    assert not delta.exists() and (reopened.path / "chunks.index").read_bytes() != base
    reopened.close()


def test_a_damaged_delta_is_rebuilt_and_a_leftover_one_ignored(tmp_path):
    from engine.integrity import inspect

    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).create("d")
    c.add_documents(_docs(80))
    c.add_documents(_docs(2, start=200))
    c.close()
    delta = root / "d" / "chunks.index.delta"
    raw = bytearray(delta.read_bytes())
    raw[-3] ^= 0xFF  # a vector byte
    delta.write_bytes(bytes(raw))
    assert any("delta" in f.message for f in inspect(root / "d"))
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("d")
    assert len(c._index("chunks")) == 82 and c.check() == [] and not delta.exists()
    q = c.embed(["Town201 lies on river R201. Person201 was born in Town201."])
    assert (
        c._db.execute("SELECT doc_id FROM chunks WHERE chunk_id=?", (c.search_chunks(q, 1)[0][0][0],)).fetchone()[0]
        == "d201"
    )
    delta.write_bytes(bytes(raw))  # a delta of an older index file beside the new one: ignored
    c.close()
    assert inspect(root / "d") == []


@pytest.mark.parametrize("which", ["chunks", "propositions"])
def test_an_ivf_rebuild_in_pages_trains_on_a_sample_of_the_whole_table(tmp_path, monkeypatch, which):
    from engine.vectors import FaissVectorStore

    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).create(
        "s", CorpusSettings(index_kind="ivf")
    )
    c.add_documents(_docs(120))
    c.import_triplets(_triplets(c, _docs(120)))
    c.refresh_indexes()
    trained = []
    real_train = FaissVectorStore.train
    monkeypatch.setattr(FaissVectorStore, "train", lambda self, v: (trained.append(len(v)), real_train(self, v)))
    store = c._rebuild_index(which, c.embedder.dim, page=16)  # pages of 16, so training comes first
    assert trained == [120]  # the whole (small) table, not the first page
    table, key = ("chunks", "rid") if which == "chunks" else ("triplets", "tid")
    want = {r[0] for r in c._db.execute(f"SELECT {key} FROM {table}")}
    assert store.kind == "ivf" and set(store.ids().tolist()) == want
    ids, vecs = store.vectors()
    _, top = store.search(vecs[:5], 1)
    assert list(top[:, 0]) == list(ids[:5])  # each stored vector finds itself


def test_a_new_process_looks_for_pending_propositions_past_the_last_embedded_one(tmp_path):
    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).create("v")
    c.add_documents(_docs(30))
    c.import_triplets(_triplets(c, _docs(30)))
    top = c._db.execute("SELECT MAX(tid) FROM triplets").fetchone()[0]
    c.close()
    other = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("v")
    other.add_documents(_docs(3, start=50))
    other.import_triplets(_triplets(other, _docs(3, start=50)), refresh=False)  # pending: no vectors yet
    other.close()
    again = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("v")
    seen = []
    again._db.set_trace_callback(seen.append)
    again.refresh_indexes()
    again._db.set_trace_callback(None)
    scans = [q for q in seen if "vec IS NULL AND tid >" in q]
    starts = [int(re.search(r"tid > (-?\d+)", q).group(1)) for q in scans]
    assert starts and starts[0] == top and min(starts) >= top  # never from the first row
    assert again._db.execute("SELECT COUNT(*) FROM triplets WHERE vec IS NULL").fetchone()[0] == 0
    assert len(again._index("propositions")) == 33 and again.check() == []


def test_a_snapshot_carries_the_delta_and_a_restore_loads_it_without_a_rebuild(tmp_path, monkeypatch):
    from engine.integrity.backup import find_snapshot, restore, snapshot_before

    root = tmp_path / "ws"
    ws = Workspace(root, embedder=HashEmbedder(), keep_snapshots=3)
    c = ws.create("d")
    c.add_documents(_docs(80))
    c.add_documents([Document("late", "Lateville", "Lateville is a harbour town of glass makers.", "t")])
    delta = c.path / "chunks.index.delta"
    assert delta.is_file()  # the add was saved as a delta
    info = snapshot_before(ws, c, "manual")
    assert "chunks.index.delta" in info.files
    c.close()
    for name in ("chunks.index", "chunks.index.delta"):  # damage the live corpus's index files
        (root / "d" / name).write_bytes(b"\0" * 64)
    original = type(c)._rebuild_index

    def no_rebuild(self, which, dim, *a, **k):
        assert which != "chunks", "the chunk index was rebuilt: the snapshot's delta was not used"
        return original(self, which, dim, *a, **k)

    monkeypatch.setattr(type(c), "_rebuild_index", no_rebuild)
    back = restore(ws, find_snapshot(ws, "d", info.id), force=True)
    assert back.path == root / "d" and (back.path / "chunks.index.delta").is_file()
    assert len(back._index("chunks")) == 81
    q = back.embed(["Lateville is a harbour town of glass makers."])
    assert back.search_chunks(q, 1)[0][0][0] == back.chunks("late")[0].chunk_id


def test_an_ivf_index_grown_past_the_retrain_factor_gets_new_cells(tmp_path, monkeypatch, caplog):
    import logging

    from engine.vectors import faiss_store

    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).create(
        "g", CorpusSettings(index_kind="ivf")
    )
    c.add_documents(_docs(80))
    first = c._index("chunks")
    assert first.kind == "ivf" and first._index.nlist == 2 and first.trained_for() == 78
    c.add_documents(_docs(80, start=100))  # 160 vectors: within the default factor (4 x 78)
    assert c._index("chunks") is first and not first.needs_retraining()
    monkeypatch.setattr(faiss_store, "IVF_RETRAIN_FACTOR", 1.5)  # a small threshold: 240 > 1.5 x 78
    with caplog.at_level(logging.WARNING):
        c.add_documents(_docs(80, start=200))
    now = c._index("chunks")
    assert now is not first and now._index.nlist == 240 // 39 and len(now) == 240
    assert any("rebuilding it" in r.getMessage() for r in caplog.records)
    reopened = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).open("g")
    assert reopened._index("chunks")._index.nlist == 240 // 39 and reopened.check() == []
