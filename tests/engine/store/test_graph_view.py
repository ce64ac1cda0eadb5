"""The Corpora graph tab's bounded view: at most `cap` entities read from the indexed edge table
(the whole entity graph is never loaded), the induced edges among them with the same attributes
as the whole graph's, and counts of what was left out."""

from __future__ import annotations

import pytest

from engine.core.textnorm import normalize_entity
from engine.core.types import Document
from engine.store import Workspace
from engine.store.graph_view import entity_view
from tests._fake_embedder import HashEmbedder


@pytest.fixture
def corpus(tmp_path):
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).create("g")
    c.add_documents([Document(f"d{i}", f"T{i}", f"Hub{i % 3} met Person{i} in City{i % 7}.", "t") for i in range(60)])
    chunk = dict(c._db.execute("SELECT doc_id, chunk_id FROM chunks").fetchall())
    rows = []
    for i in range(60):
        rows += [
            (chunk[f"d{i}"], f"Hub{i % 3}", "met", f"Person{i}"),
            (chunk[f"d{i}"], f"Person{i}", "in", f"City{i % 7}"),
        ]
    rows.append((chunk["d0"], "Alpha Lake", "near", "Hub0"))
    c.import_triplets(rows)
    return c


def _check_against_whole(view, whole):
    g = view.graph
    for n, a in g.nodes(data=True):
        assert n in whole and a["label"] == whole.nodes[n]["label"]
    induced = {(k) for u, v, k in whole.edges(keys=True) if u in g and v in g}
    assert {k for _, _, k in g.edges(keys=True)} == induced
    for u, v, k, a in g.edges(keys=True, data=True):
        assert a == whole.edges[u, v, k]
    assert view.total_entities == whole.number_of_nodes() and view.total_edges == whole.number_of_edges()
    assert view.left_out_entities == whole.number_of_nodes() - g.number_of_nodes()
    assert view.left_out_edges == whole.number_of_edges() - g.number_of_edges()


def test_the_hub_view_holds_the_best_connected_entities_without_loading_the_graph(corpus, monkeypatch):
    whole = corpus.entity_graph()
    top = sorted(whole.nodes, key=lambda n: -whole.degree(n))[:3]
    monkeypatch.setattr(type(corpus), "entity_graph", lambda self: pytest.fail("the whole graph was loaded"))
    monkeypatch.setattr(type(corpus), "triplets", lambda self, *a: pytest.fail("every triplet was read"))
    view = entity_view(corpus, "", cap=25)
    assert view.graph.number_of_nodes() == 25 and view.matched == whole.number_of_nodes()
    # the best-connected entity with its whole neighbourhood (22 entities), then the next hub
    assert {top[0], *whole.neighbors(top[0])} | set(top[1:2]) <= set(view.graph.nodes)
    assert view.left_out_entities == whole.number_of_nodes() - 25 > 0
    monkeypatch.undo()
    _check_against_whole(view, whole)


def test_a_search_shows_the_matches_and_their_neighbours(corpus):
    whole = corpus.entity_graph()
    view = entity_view(corpus, "city", cap=12)
    matches = [n for n in whole.nodes if "city" in n]
    assert view.matched == len(matches) == 7
    assert set(matches) <= set(view.graph.nodes) and view.graph.number_of_nodes() == 12
    _check_against_whole(view, whole)
    lake = entity_view(corpus, "Alpha Lake", cap=10)
    assert lake.matched == 1 and {normalize_entity("Alpha Lake"), normalize_entity("Hub0")} <= set(lake.graph.nodes)
    assert lake.graph.nodes[normalize_entity("Alpha Lake")]["label"] == "Alpha Lake"
    nothing = entity_view(corpus, "zzz%_", cap=10)
    assert nothing.matched == 0 and nothing.graph.number_of_nodes() == 0


def test_a_view_follows_new_triplets_and_a_bad_cap_is_refused(corpus):
    before = entity_view(corpus, "", cap=400)
    chunk = corpus._db.execute("SELECT chunk_id FROM chunks LIMIT 1").fetchone()[0]
    corpus.import_triplets([(chunk, "Newcomer", "met", "Hub1")])
    after = entity_view(corpus, "", cap=400)
    assert after.total_entities == before.total_entities + 1 and "newcomer" in after.graph
    _check_against_whole(after, corpus.entity_graph())
    with pytest.raises(ValueError, match="cap"):
        entity_view(corpus, "", cap=0)
