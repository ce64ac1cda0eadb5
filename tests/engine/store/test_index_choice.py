"""The index `auto` picks at scale (issue 30): exact below AUTO_HNSW_AT vectors, HNSW above, chosen
on real text for recall@10 >= 0.95 against exact search (bench/real_recall.py); deleted vectors are
HNSW tombstones that stay deleted across a reopen; an IVF index saved by an older build opens and
searches with the new probe share; `corpus show` says which index each corpus uses and its recall,
measured on the index's own vectors."""

from __future__ import annotations

import faiss
import numpy as np

from engine.cli import main
from engine.core.types import Document
from engine.store import CorpusSettings, Workspace
from engine.vectors import FaissVectorStore, hnsw
from engine.vectors import faiss_store as fs
from engine.vectors.selfcheck import sampled_recall
from tests._fake_embedder import HashEmbedder


def _clustered(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    """Unit vectors in topics (text embeddings cluster; uniform random vectors have no neighbours)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(n // 50, 1), dim))
    x = centres[rng.integers(0, len(centres), n)] + 0.35 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _recall(store: FaissVectorStore, base: np.ndarray, queries: np.ndarray) -> float:
    exact = FaissVectorStore(base.shape[1], "flat")
    exact.add(np.arange(len(base)), base)
    want, got = exact.search(queries, 10)[1], store.search(queries, 10)[1]
    return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want.tolist(), got.tolist())]))


def test_an_ivf_index_from_an_older_build_searches_with_the_new_probe_share(tmp_path):
    base = _clustered(6000)
    queries = _clustered(200, seed=1)
    old = FaissVectorStore(32, "ivf", expected=len(base))
    old.train(base)
    old.add(np.arange(len(base)), base)
    cells = int(old._index.nlist)
    old._index.nprobe = max(1, cells // 32)  # as the older build saved it
    thin = _recall(old, base, queries)
    old.save(tmp_path / "chunks.index", "stamp")
    loaded, stamp = FaissVectorStore.load(tmp_path / "chunks.index", 32, "ivf")
    assert stamp == "stamp" and loaded._index.nprobe == fs.ivf_probes(cells) == round(cells / 8)
    assert _recall(loaded, base, queries) > max(thin, 0.95)


def _town_docs(n: int, start: int = 0) -> list[Document]:
    return [
        Document(f"d{i:04d}", f"Doc {i}", f"Paragraph {i} is about topic {i % 17} and place {i % 5}.", "t")
        for i in range(start, start + n)
    ]


def test_auto_uses_exact_search_below_the_threshold_and_hnsw_above(tmp_path, monkeypatch):
    import engine.store.indexes as indexes

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("auto", CorpusSettings(index_kind="auto"))
    docs = _town_docs(400)
    c.add_documents(docs[:100])
    assert c._index("chunks").kind == "flat" and c.index_kinds()["chunks"] == ("flat", 1.0)
    monkeypatch.setattr(indexes, "AUTO_HNSW_AT", 200)
    c.add_documents(docs[100:])
    store = c._index("chunks")
    assert store.kind == "hnsw" and faiss.downcast_index(store._index.index).hnsw.efSearch == hnsw.HNSW_EF_SEARCH
    kind, recall = c.index_kinds()["chunks"]  # measured on the index's own vectors
    assert kind == "hnsw" and recall is not None and recall >= 0.95
    assert c.index_kinds(self_check=False)["chunks"] == ("hnsw", fs.MEASURED_RECALL_AT_10["hnsw"])


def test_a_deleted_document_stays_gone_from_an_hnsw_index_without_a_rebuild(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    c = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).create("h", CorpusSettings(index_kind="hnsw"))
    c.add_documents(_town_docs(120))
    text = "Paragraph 7 is about topic 7 and place 2."
    assert c.get_chunks([c.search_chunks(c.embed([text]), 1)[0][0][0]])[0].doc_id == "d0007"
    c.refresh_indexes()
    rebuilt: list[str] = []
    original = type(c)._rebuild_index

    def counting(self, which, *a, **k):
        rebuilt.append(which)
        return original(self, which, *a, **k)

    monkeypatch.setattr(type(c), "_rebuild_index", counting)
    c.delete_document("d0007")
    hits = c.search_chunks(c.embed([text]), 10)[0]
    assert len(hits) == 10 and all(not cid.startswith("d0007") for cid, _ in hits)
    assert len(c.search_chunks(c.embed([text]), 500)[0]) == 119  # every live chunk, no dead slot
    assert rebuilt == [] and c.check() == []
    c.close()
    reopened = Workspace(root, embedder=HashEmbedder(), keep_snapshots=0).open("h")  # tombstones in the file
    store = reopened._index("chunks")
    assert rebuilt == [] and store.kind == "hnsw" and len(store) == 119 == len(store.ids())
    assert all(not cid.startswith("d0007") for cid, _ in reopened.search_chunks(reopened.embed([text]), 10)[0])
    assert reopened.check() == []
    # past HNSW_MAX_DEAD_SHARE of the graph: the corpus rebuilds it without the dead nodes
    for i in range(20, 35):
        reopened.delete_document(f"d{i:04d}")
    store = reopened._index("chunks")
    assert "chunks" in rebuilt and store._dead < 12 and len(store) == 104 == len(store.ids())
    assert reopened.check() == []
    reopened.close()


def test_the_self_check_reports_an_index_that_misses_neighbours():
    base = _clustered(6000)
    ids = np.arange(len(base))
    thin = FaissVectorStore(32, "ivf", expected=len(base))
    thin.train(base)
    thin.add(ids, base)
    thin._index.nprobe = 1  # scans one cell of ~300: misses most neighbours in the next cells
    graph = FaissVectorStore(32, "hnsw")
    graph.add(ids, base)
    exact = FaissVectorStore(32, "flat")
    exact.add(ids, base)
    poor = sampled_recall(thin)
    assert poor is not None and poor < 0.95  # shown under the target, not as the kind's table figure
    thin._index.nprobe = 8
    assert sampled_recall(thin) > poor
    assert sampled_recall(graph) >= 0.95 and sampled_recall(exact) == 1.0
    graph.remove(ids[:100])  # tombstones are neither queries nor expected answers
    assert sampled_recall(graph) >= 0.95


def test_corpus_show_prints_each_index_kind_and_its_measured_recall(tmp_path, monkeypatch, capsys, embedder):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path / "ws"))
    note = tmp_path / "paris.txt"
    note.write_text("Paris is the capital of France. The Eiffel Tower is in Paris.\n")
    assert main(["corpus", "create", "notes", "--from", str(note)]) == 0
    capsys.readouterr()
    assert main(["corpus", "show", "notes"]) == 0
    out = capsys.readouterr().out
    assert "vector search: chunks flat (recall@10 vs exact 1.000), propositions flat" in out
    assert main(["corpus", "create", "graph", "--from", str(note), "--index", "hnsw"]) == 0
    capsys.readouterr()
    assert main(["corpus", "show", "graph"]) == 0
    out = capsys.readouterr().out
    assert "chunks hnsw (recall@10 vs exact 1.000)" in out and "50 of the index's own vectors" in out


def test_an_index_rebuilt_on_open_reports_its_progress(tmp_path, monkeypatch):
    """An index file of the wrong kind (an older IVF, or `auto` past its threshold) is rebuilt from the
    stored vectors when the corpus opens: `load_indexes` reports every page of it, so a caller at a
    million vectors shows minutes of work instead of a frozen first question."""
    import engine.store.indexes as indexes

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("grown", CorpusSettings(index_kind="auto"))
    c.add_documents(_town_docs(300))
    assert c.load_indexes()["chunks"] == "flat"
    c.close()
    monkeypatch.setattr(indexes, "AUTO_HNSW_AT", 200)  # the saved flat index is now the wrong kind
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).open("grown")
    seen: list[tuple[int, int, str]] = []
    original = indexes.CorpusIndexes._rebuild_index
    monkeypatch.setattr(
        indexes.CorpusIndexes, "_rebuild_index", lambda self, w, d, page=65536, **kw: original(self, w, d, 128, **kw)
    )
    kinds = c.load_indexes(on_progress=lambda done, total, label: seen.append((done, total, label)))
    assert kinds["chunks"] == "hnsw"
    chunk_steps = [(d, t) for d, t, label in seen if "chunks index (hnsw" in label]
    assert chunk_steps[0] == (0, 300) and chunk_steps[-1] == (300, 300) and len(chunk_steps) == 4  # 128-row pages
    # the second open finds the rebuilt file in step: nothing to rebuild, nothing reported
    c.close()
    seen.clear()
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).open("grown")
    assert c.load_indexes(on_progress=lambda *a: seen.append(a))["chunks"] == "hnsw" and not seen


def test_a_bigger_graph_searches_with_a_longer_candidate_list(monkeypatch):
    """At a fixed efSearch a graph misses more true neighbours as it grows (real text: 0.982 at 100k
    with 96, 0.969 at 228k): the search parameter follows the graph's size, also as it grows after
    a load."""
    assert hnsw.ef_search_for(10) == hnsw.HNSW_EF_SEARCH == 96
    assert hnsw.ef_search_for(100_000) == 192 and hnsw.ef_search_for(1_000_000) == 256
    monkeypatch.setattr(hnsw, "HNSW_EF_SEARCH_STEPS", ((0, 40), (300, 80), (600, 120)))
    base = _clustered(700)
    store = FaissVectorStore(32, "hnsw")
    graph = faiss.downcast_index(store._index.index)
    store.add(np.arange(200), base[:200])
    store.search(base[:1], 5)
    assert graph.hnsw.efSearch == 40
    store.add(np.arange(200, 700), base[200:])
    store.search(base[:1], 5)
    assert graph.hnsw.efSearch == 120


def test_a_few_queries_search_on_the_calling_thread_and_leave_its_thread_count_as_it_was():
    """One question's search runs without OpenMP's team (its start and spin-wait cost every core a
    few ms a question); the results are those of the team, and the thread's setting is restored."""
    base = _clustered(3000)
    queries = _clustered(fs.ONE_THREAD_BELOW + 4, seed=2)
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        for kind in ("flat", "hnsw"):
            store = FaissVectorStore(32, kind)
            store.add(np.arange(len(base)), base)
            together = store.search(queries, 10)[1]  # enough queries for the team
            one_by_one = np.vstack([store.search(q[None], 10)[1] for q in queries])
            assert (together == one_by_one).all(), kind
            assert faiss.omp_get_max_threads() == 2
        seen: list[int] = []

        class Spy:  # the flat index, noting the thread count its search runs with
            def __init__(self, index):
                self.index = index

            def search(self, q, k):
                seen.append(faiss.omp_get_max_threads())
                return self.index.search(q, k)

            def __getattr__(self, name):
                return getattr(self.index, name)

        flat = FaissVectorStore(32, "flat")
        flat.add(np.arange(len(base)), base)
        flat._index = Spy(flat._index)
        flat.search(queries[:1], 10)
        flat.search(queries, 10)
        assert seen == [1, 2]
    finally:
        faiss.omp_set_num_threads(before)
