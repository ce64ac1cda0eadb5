"""The VectorStore protocol's contract, run over every backend (FAISS exact, FAISS HNSW, FAISS IVF, Milvus
embedded through milvus-lite), and a corpus kept on Milvus end to end, crash between the SQLite
commit and the Milvus write included."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from engine.core.types import Document
from engine.integrity import inspect, repair
from engine.store import CorpusSettings, Workspace
from engine.vectors import FaissVectorStore
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

DIM = 16


def _unit(n, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(params=["faiss-flat", "faiss-hnsw", "faiss-ivf", "milvus-lite"])
def make_store(request, tmp_path):
    clients = []

    def make():
        if request.param == "milvus-lite":
            from engine.vectors.milvus_store import MilvusVectorStore

            store = MilvusVectorStore.connect(str(tmp_path / "v.milvus.db"), "contract", DIM)
            clients.append(store.client)
            return store
        return FaissVectorStore(DIM, request.param.split("-")[1])

    yield request.param, make
    for c in clients:
        c.close()


def test_contract_add_search_ids_vectors_remove_save(make_store, tmp_path):
    kind, make = make_store
    store = make()
    vecs = _unit(50)
    ids = np.arange(100, 150, dtype=np.int64)
    store.add(ids, vecs)
    assert len(store) == 50
    scores, found = store.search(vecs[[3, 7]], 5)
    assert found.shape == (2, 5) and list(found[:, 0]) == [103, 107]
    assert np.allclose(scores[:, 0], 1.0, atol=1e-4) and np.all(np.diff(scores, axis=1) <= 1e-6)
    got_ids, got_vecs = store.vectors()
    order = np.argsort(got_ids)
    assert list(got_ids[order]) == list(ids) and np.allclose(got_vecs[order], vecs, atol=1e-6)
    assert sorted(store.ids().tolist()) == list(ids)
    store.remove(np.array([103, 999]))  # HNSW: a tombstone
    assert len(store) == 49 and 103 not in store.search(vecs[[3]], 3)[1][0]
    _, empty = store.search(vecs[:1], 0)
    assert empty.shape == (1, 0)
    side = tmp_path / f"{kind}.stamp"
    store.save(side, "tok/chunks/42")
    if kind == "milvus-lite":
        from engine.vectors.milvus_store import MilvusVectorStore

        assert MilvusVectorStore.read_stamp(side) == "tok/chunks/42"
    else:
        loaded, stamp = FaissVectorStore.load(side, DIM, kind.split("-")[1])
        assert stamp == "tok/chunks/42" and len(loaded) == len(store)


def _docs(n, start=0):
    return [
        Document(f"d{i:02d}", f"Town{i}", f"Town{i} lies on river R{i}. Person{i} was born in Town{i}.", "t")
        for i in range(start, start + n)
    ]


def test_a_corpus_on_milvus_lite_answers_like_faiss(tmp_path):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    flat = ws.create("flat")
    mil = ws.create("mil", CorpusSettings(vectors="milvus-lite"))
    for c in (flat, mil):
        c.add_documents(_docs(12))
        c.import_triplets([(ch.chunk_id, f"Person{k}", "born in", f"Town{k}") for k, ch in enumerate(c.chunks())])
        c.add_documents(_docs(3, start=40))
        c.delete_document("d05")
    q = flat.embed(["Person7 was born in Town7", "river R41"])
    for search, k in (("search_chunks", 4), ("search_propositions", 3)):
        got, want = getattr(mil, search)(q, k), getattr(flat, search)(q, k)
        for g, w in zip(got, want):  # same hits; equal scores may come in either order
            best = {i for i, s in w if abs(s - w[0][1]) <= 1e-5}  # a query matching nothing ties them all
            assert g[0][0] in best and np.allclose([s for _, s in g], [s for _, s in w], atol=1e-5)
            top = {i for i, s in w if s > w[-1][1] + 1e-5}
            assert top <= {i for i, _ in g}
    assert mil.check() == [] and inspect(mil.path) == []
    assert not (mil.path / "chunks.index").exists() and (mil.path / "vectors.milvus.db").exists()
    mil.close()


def test_kill_between_sqlite_commit_and_milvus_write_is_repaired(tmp_path):
    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder()).create("mil", CorpusSettings(vectors="milvus-lite"))
    c.add_documents(_docs(5))
    c.close()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        from engine.store import Workspace
        from engine.core.types import Document
        from engine.vectors import milvus_store
        from tests._fake_embedder import HashEmbedder
        def die(self, ids, vecs):
            os._exit(9)  # killed after the SQLite commit, before Milvus has the new vectors
        milvus_store.MilvusVectorStore.add = die
        c = Workspace({str(root)!r}, embedder=HashEmbedder()).open("mil")
        c.search_chunks(c.embed(["x"]), 1)
        c.add_documents([Document("late", "Late", "Town9 late text.", "l")])
    """),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 9, proc.stderr
    findings = inspect(root / "mil")
    assert [f.part for f in findings] == ["chunks.milvus.json"] and "stale" in findings[0].message
    report = repair(Workspace(root, embedder=HashEmbedder()), "mil")
    assert report.remaining == []
    c = Workspace(root, embedder=HashEmbedder()).open("mil")
    assert c.check() == [] and len(c.search_chunks(c.embed(["late text"]), 10)[0]) == 6
    c.close()


def test_auto_index_is_exact_below_the_threshold_and_hnsw_above(tmp_path, monkeypatch):
    from engine.store import indexes as store_mod  # where the threshold is read

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    c = ws.create("auto")
    c.add_documents(_docs(8))
    assert c.settings.index_kind == "auto" and c._index("chunks").kind == "flat"
    monkeypatch.setattr(store_mod, "AUTO_HNSW_AT", 10)
    c.add_documents(_docs(4, start=20))  # 12 chunks now: past the (patched) threshold
    assert c._index("chunks").kind == "hnsw"
    c.close()
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder()).open("auto")  # the file is HNSW and trusted
    assert c._index("chunks").kind == "hnsw" and c.check() == [] and inspect(c.path) == []
    assert len(c.search_chunks(c.embed(["Town21 lies on river"]), 12)[0]) == 12


def test_milvus_credentials_come_from_the_environment_never_the_stored_uri(tmp_path, monkeypatch):
    import pymilvus

    from engine.vectors import milvus_store

    with pytest.raises(ValueError, match="TRIPLET_LENS_MILVUS_TOKEN"):
        milvus_store.parse_uri("milvus://root:Milvus@db.example:19530", tmp_path)
    assert milvus_store.parse_uri("milvus://db.example:19530", tmp_path) == "http://db.example:19530"
    seen = []
    monkeypatch.setattr(pymilvus, "MilvusClient", lambda uri, **kw: seen.append((uri, kw)))
    monkeypatch.setenv("TRIPLET_LENS_MILVUS_TOKEN", "root:s3cret")
    from engine.llm import endpoints

    monkeypatch.setattr(endpoints, "_policy", endpoints.EndpointPolicy.strict())
    with pytest.raises(endpoints.UntrustedEndpoint, match="vectors"):  # a server nobody named: never connected to
        milvus_store._client("http://db.example:19530")
    assert seen == []
    # named by the user (`--vectors milvus://...` or TRIPLET_LENS_API_BASES)
    monkeypatch.setattr(endpoints, "_policy", endpoints.local_user_policy(["milvus://db.example:19530"]))
    milvus_store._client("http://db.example:19530")
    monkeypatch.delenv("TRIPLET_LENS_MILVUS_TOKEN")
    milvus_store._client("http://db.example:19530")
    assert seen == [("http://db.example:19530", {"token": "root:s3cret"}), ("http://db.example:19530", {})]
