"""Pure pieces of the app's components: the capped, searchable corpus graph and settings forms."""

from __future__ import annotations

import networkx as nx


def _graph() -> nx.MultiGraph:
    g = nx.MultiGraph()
    for i in range(30):  # a hub with 30 spokes, and a separate pair
        g.add_node(f"spoke {i}", label=f"Spoke {i}")
        g.add_edge("hub", f"spoke {i}", key=i, subject="Hub", predicate="links", object=f"Spoke {i}")
    g.nodes["hub"]["label"] = "Hub"
    g.add_edge("lisbon", "portugal", key=99, subject="Lisbon", predicate="capital of", object="Portugal")
    g.nodes["lisbon"]["label"], g.nodes["portugal"]["label"] = "Lisbon", "Portugal"
    return g


def test_corpus_graph_keeps_the_cap_and_shows_connected_clusters():
    from components.graphs.entity_graph import entity_subgraph

    nodes, edges, matched = entity_subgraph(_graph(), "", cap=10)
    assert len(nodes) == 10 and matched == 33
    assert nodes[0].label == "Hub" and len(edges) == 9  # the hub with nine of its spokes, all linked


def test_corpus_graph_search_puts_matches_first_and_marks_them():
    from components.graphs.entity_graph import entity_subgraph

    nodes, edges, matched = entity_subgraph(_graph(), "lisb", cap=10)
    assert matched == 1 and [n.label for n in nodes] == ["Lisbon", "Portugal"]
    assert nodes[0].color != nodes[1].color  # the match is highlighted
    assert [(e.label, e.title) for e in edges] == [("capital of", "Lisbon capital of Portugal")]


def test_settings_form_reads_each_fields_docstring():
    from components.shell.settings_form import field_docs
    from engine.methods.t2rag.trace import T2RAGSettings

    docs = field_docs(T2RAGSettings)
    assert "k" in docs and "rounds" in docs and "chunk" in docs["k"]


def test_the_corpora_page_says_which_index_searches_and_its_measured_recall(tmp_path, monkeypatch):
    import engine.store.indexes as indexes
    from components.corpus.actions import index_summary
    from engine.core.types import Document
    from engine.store import CorpusSettings, Workspace
    from engine.vectors import faiss_store as fs
    from tests._fake_embedder import HashEmbedder

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("sized", CorpusSettings(index_kind="auto"))
    c.add_documents(
        [Document(f"d{i:04d}", f"Doc {i}", f"Paragraph {i} is about topic {i % 17}.", "t") for i in range(300)]
    )
    assert index_summary(c) == "chunks exact · propositions exact"
    monkeypatch.setattr(indexes, "AUTO_HNSW_AT", 200)
    recall = fs.MEASURED_RECALL_AT_10["hnsw"]
    assert index_summary(c) == f"chunks HNSW, recall@10 {recall:.3f} vs exact on real text · propositions exact"
