"""The store's other backends: an HNSW index, and embeddings served through litellm."""

from __future__ import annotations

import pytest

from engine.core.types import Document
from engine.store import CorpusSettings, Workspace, embedding_text
from tests.engine.store.test_store import DOCS


def test_hnsw_index_searches_deletes_and_reopens(tmp_path, embedder):
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    corpus = ws.create("big", CorpusSettings(index_kind="hnsw"))
    corpus.add_documents(DOCS)
    q = corpus.embed(["What is the capital of France?"])
    assert corpus.get_chunks([corpus.search_chunks(q, 1)[0][0][0]])[0].doc_id == "d-paris"
    corpus.delete_document("d-paris")  # HNSW cannot drop nodes: tombstones, kept by the index file
    hits = corpus.search_chunks(q, 10)[0]
    assert hits and all(not cid.startswith("d-paris") for cid, _ in hits)
    corpus.close()
    reopened = Workspace(tmp_path / "ws", embedder=embedder).open("big")
    assert reopened.settings.index_kind == "hnsw" and reopened.check() == []


def test_litellm_embedder_through_an_openai_compatible_server(tmp_path, loopback_llm, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-embedding-key")  # read by litellm, never stored
    from engine.llm import endpoints

    # the environment's key may go to this endpoint because the operator listed it
    monkeypatch.setattr(endpoints, "_policy", endpoints.EndpointPolicy.strict([loopback_llm.base_url]))
    ws = Workspace(tmp_path / "ws")
    corpus = ws.create(
        "remote",
        CorpusSettings(embedder="litellm:openai/text-embedding-3-small", embedder_api_base=loopback_llm.base_url),
    )
    corpus.add_documents(
        [Document("a", "A", "Alpha text about rivers.", "t"), Document("b", "B", "Beta text about mountains.", "t")]
    )
    assert corpus.embedder.spec == "litellm:openai/text-embedding-3-small"
    first = corpus.chunks("a")[0]
    hits = corpus.search_chunks(corpus.embed([embedding_text(first)]), 2)[0]
    assert hits[0] == (first.chunk_id, pytest.approx(1.0, abs=1e-4))  # the server's vectors are fixed per text
    assert corpus.check() == []
    for f in corpus.path.iterdir():
        assert b"sk-test-embedding-key" not in f.read_bytes()
