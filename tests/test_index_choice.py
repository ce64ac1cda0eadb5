"""The index `auto` picks at scale (issue 30): IVF with ~4 sqrt(n) cells and an eighth of them
scanned, chosen on real text for recall@10 >= 0.95 against exact search (bench/real_recall.py);
an IVF index saved by an older build (sqrt(n) cells, 1/32 scanned) opens and searches with the new
share; `corpus show` says which index each corpus uses and its measured recall."""

from __future__ import annotations

import numpy as np

from engine.cli import main
from engine.store import CorpusSettings, Workspace
from engine.vectors import FaissVectorStore
from engine.vectors import faiss_store as fs
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


def test_auto_uses_exact_search_below_the_threshold_and_finer_ivf_cells_above(tmp_path, monkeypatch):
    import engine.store.indexes as indexes

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("auto", CorpusSettings(index_kind="auto"))
    from engine.types import Document

    docs = [Document(f"d{i}", f"Doc {i}", f"Paragraph {i} is about topic {i % 17} and place {i % 5}.", "t")
            for i in range(400)]
    c.add_documents(docs[:100])
    assert c._index("chunks").kind == "flat" and c.index_kinds()["chunks"] == ("flat", 1.0)
    monkeypatch.setattr(indexes, "AUTO_IVF_AT", 200)
    c.add_documents(docs[100:])
    store = c._index("chunks")
    assert store.kind == "ivf" and int(store._index.nlist) == fs.ivf_cells(400) == min(80, 400 // 39)
    kind, recall = c.index_kinds()["chunks"]
    assert kind == "ivf" and recall is not None and recall >= 0.95


def test_corpus_show_prints_each_index_kind_and_its_measured_recall(tmp_path, monkeypatch, capsys, embedder):
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path / "ws"))
    note = tmp_path / "paris.txt"
    note.write_text("Paris is the capital of France. The Eiffel Tower is in Paris.\n")
    assert main(["corpus", "create", "notes", "--from", str(note)]) == 0
    capsys.readouterr()
    assert main(["corpus", "show", "notes"]) == 0
    out = capsys.readouterr().out
    assert "vector search: chunks flat (recall@10 vs exact 1.000), propositions flat" in out
