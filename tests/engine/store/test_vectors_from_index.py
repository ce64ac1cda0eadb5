"""A question's chunk and proposition vectors are read from the loaded FAISS index (memory) instead
of the database rows (a random page each in a large corpus), and equal the stored vectors exactly:
for every index kind, in the order asked, zeros for an unknown id, and from the rows whenever the
index is not loaded or not in step with the database."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.types import Document
from engine.store import CorpusSettings, Workspace
from engine.vectors import FaissVectorStore
from tests._fake_embedder import HashEmbedder


def _docs(n, start=0):
    return [
        Document(f"d{i:03d}", f"Town{i}", f"Town{i} lies on river R{i}. Person{i} was born in Town{i}.", "t")
        for i in range(start, start + n)
    ]


def _rows(c, sql, ids):
    found = dict(c._in_query(sql, ids))
    return np.stack([np.frombuffer(found[i], np.float32) for i in ids])


@pytest.fixture(params=["flat", "ivf", "hnsw"])
def corpus(tmp_path, request):
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).create(
        "v", CorpusSettings(index_kind=request.param)
    )
    c.add_documents(_docs(60))
    by_doc = dict(c._db.execute("SELECT doc_id, chunk_id FROM chunks").fetchall())
    c.import_triplets([(by_doc[d.doc_id], f"Person{d.doc_id}", "born in", d.title) for d in _docs(60)])
    c.refresh_indexes()
    return c


def _chunk_rows(c, ids):
    return _rows(c, "SELECT chunk_id, vec FROM chunks WHERE chunk_id IN ({})", ids)


def test_vectors_come_from_the_index_and_equal_the_rows(corpus, monkeypatch):
    ids = [ch.chunk_id for ch in corpus.chunks()][::-7]  # an order of its own
    tids = [t.triplet_id for t in corpus.triplets()][::-5]
    reads = []
    corpus._db.set_trace_callback(reads.append)
    got, props = corpus.chunk_vectors(ids + ["nope#0"]), corpus.proposition_vectors(tids)
    corpus._db.set_trace_callback(None)
    assert not [q for q in reads if "vec" in q]  # no vector column read: from memory
    assert np.array_equal(got[:-1], _chunk_rows(corpus, ids)) and not got[-1].any()
    assert np.array_equal(props, _rows(corpus, "SELECT tid, vec FROM triplets WHERE tid IN ({})", tids))
    # an unknown triplet id: zeros (its row is looked for, as before)
    mixed = corpus.proposition_vectors([10**6] + tids[:2])
    assert not mixed[0].any() and np.array_equal(mixed[1:], props[:2])


def test_a_stale_or_unloaded_index_is_not_read(corpus):
    corpus.add_documents(_docs(3, start=100), sync_index=False)  # the database moved on, the index did not
    ids = [ch.chunk_id for ch in corpus.chunks()][-6:]  # three in the index, three not yet
    cached = corpus._indexes["chunks"][0]
    reads = []
    corpus._db.set_trace_callback(reads.append)
    got = corpus.chunk_vectors(ids)
    corpus._db.set_trace_callback(None)
    assert [q for q in reads if "vec" in q] and cached is corpus._indexes["chunks"][0]  # rows, no index load
    assert np.array_equal(got, _chunk_rows(corpus, ids))
    corpus._indexes.clear()  # not loaded (a process that has not searched yet): rows, and nothing loads
    assert np.array_equal(corpus.chunk_vectors(ids), got) and not corpus._indexes


def test_the_store_gets_vectors_by_id_after_adds_and_removes():
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((400, 16)).astype(np.float32)
    for kind in ("flat", "ivf", "hnsw"):
        store = FaissVectorStore(16, kind)
        store.add(np.arange(400) * 3 + 5, vecs)
        assert np.array_equal(store.get(np.array([8, 5, 1202])), vecs[[1, 0, 399]])
        with pytest.raises(KeyError):
            store.get(np.array([6]))
        store.remove(np.array([8]))  # HNSW: a tombstone
        store.add(np.array([9999]), vecs[:1])
        assert np.array_equal(store.get(np.array([9999, 11])), vecs[[0, 2]])
        with pytest.raises(KeyError):
            store.get(np.array([8]))
