"""KG2RAG's m-hop neighbourhood read from the indexed edge table equals the same walk over the
whole entity graph, and its queries use the indexes (EXPLAIN QUERY PLAN)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import networkx as nx
import pytest

from engine.core.textnorm import normalize_entity
from engine.core.types import Document
from engine.store import Workspace
from engine.store.graph import _CAPPED_EDGES, _DEGREE, neighbourhood_of
from engine.store.writes import ORPHAN_EDGES, ORPHAN_TRIPLETS
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

CHAIN = [
    ("Ann", "mother of", "Bob"),
    ("Bob", "born in", "Cork"),
    ("Cork", "located in", "Ireland"),
    ("Ireland", "member of", "EU"),
    ("Dan", "friend of", "Ann"),
    ("Eve", "lives in", "Oslo"),
    ("Bob", "plays", "Bob"),
]


@pytest.fixture()
def corpus(tmp_path):
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("kg")
    c.add_documents([Document(f"d{i}", s, f"{s} {p} {o}.", f"d{i}.txt") for i, (s, p, o) in enumerate(CHAIN)])
    by_doc = {ch.doc_id: ch.chunk_id for ch in c.chunks()}
    c.import_triplets([(by_doc[f"d{i}"], s, p, o) for i, (s, p, o) in enumerate(CHAIN)])
    return c


def _walk(graph: nx.MultiGraph, seeds, hops) -> set[int]:
    seen, frontier, keys = set(seeds) & set(graph), set(seeds) & set(graph), set()
    for _ in range(hops):
        nxt = set()
        for n in frontier:
            for _, m, k in graph.edges(n, keys=True):
                keys.add(k)
                if m not in seen:
                    nxt.add(m)
        seen |= nxt
        frontier = nxt
    return keys


@pytest.mark.parametrize("hops", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("seeds", [["ann"], ["bob", "oslo"], ["nobody"]])
def test_neighbourhood_equals_the_walk_over_the_whole_graph(corpus, seeds, hops):
    seeds = [normalize_entity(s) for s in seeds]
    sub = corpus.entity_neighbourhood(seeds, hops)
    assert {k for _, _, k in sub.edges(keys=True)} == _walk(corpus.entity_graph(), seeds, hops)
    full = corpus.entity_graph()
    for u, v, k, data in sub.edges(keys=True, data=True):
        assert full.edges[u, v, k] == data


def test_edges_follow_deletes_and_older_corpora_get_the_table(corpus):
    cid = corpus.chunks()[2].chunk_id  # Cork located in Ireland: replaced by nothing
    corpus.store_extraction(cid, [], corpus.extraction_statuses()[cid])
    assert {k for *_, k in corpus.entity_neighbourhood(["ann"], 9).edges(keys=True)} == {
        t.triplet_id for t in corpus.triplets() if t.subject in ("Ann", "Bob", "Dan")
    }
    path = corpus.path
    corpus.close()
    con = sqlite3.connect(path / "corpus.sqlite")  # as a corpus made before the table existed
    con.execute("DROP TABLE entity_edges")
    con.execute("DELETE FROM meta WHERE key='edges_built'")
    con.commit()
    con.close()
    c = Workspace(path.parent, embedder=HashEmbedder()).open("kg")
    assert len(c.entity_neighbourhood(["bob"], 1).edges) == 3  # ann-bob, bob-cork, bob-bob


def test_hot_queries_use_indexes(corpus):
    db = corpus._db
    plans = {
        "neighbourhood": (
            "SELECT tid, head, tail FROM entity_edges WHERE head IN (?) UNION "
            "SELECT tid, head, tail FROM entity_edges WHERE tail IN (?)",
            ("a", "a"),
        ),
        "triplets of chunks": ("SELECT tid FROM triplet_sources WHERE chunk_id IN (?)", ("x",)),
        "chunks by id": ("SELECT chunk_id FROM chunks WHERE chunk_id IN (?)", ("x",)),
        "rids of chunks": ("SELECT chunk_id, rid FROM chunks WHERE chunk_id IN (?)", ("x",)),
        "chunks by rid": ("SELECT rid, chunk_id FROM chunks WHERE rid IN (?)", (1,)),
        "chunks of a document": ("SELECT chunk_id FROM chunks WHERE doc_id=? ORDER BY position", ("d",)),
        "triplet by parts": ("SELECT tid FROM triplets WHERE subject=? AND predicate=? AND object=?", ("a", "b", "c")),
        # a hub's first edges: merged from both indexes in tid order, no sort of all its edges
        "capped edges of an entity": (_CAPPED_EDGES, ("a", "a", 5)),
        # the true degree of an entity the cap cut: counted on the index pages, no row read
        "degree of an entity": (_DEGREE, ("a", "a", "a")),
        # a replaced extraction drops only the triplets it orphaned: lookups, not a pass over all
        "orphaned triplets": (ORPHAN_TRIPLETS.format("?"), (1,)),
        "orphaned edges": (ORPHAN_EDGES.format("?"), (1,)),
        "a chunk's triplets": ("SELECT tid FROM triplet_sources WHERE chunk_id=?", ("x",)),
    }
    for name, (sql, args) in plans.items():
        plan = " | ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args).fetchall())
        assert "SCAN" not in plan.replace("SCAN CONSTANT ROW", ""), f"{name}: {plan}"
        if name.startswith("capped"):  # stops at the limit: no temporary table of every edge
            assert "MERGE" in plan and "TEMP B-TREE" not in plan, f"{name}: {plan}"
        if name in COVERED:  # from index pages alone, never a table row (a random page in a big file)
            assert plan.count("USING COVERING INDEX") == COVERED[name], f"{name}: {plan}"


#: queries read from covering indexes only, and how many index searches each makes
COVERED = {"neighbourhood": 2, "capped edges of an entity": 2, "degree of an entity": 2, "rids of chunks": 1}


def _old_edge_indexes(path) -> None:
    """Make the corpus's edge table indexed as before the covering indexes (entity only)."""
    con = sqlite3.connect(path / "corpus.sqlite")
    con.execute("DROP INDEX edges_head_cover")
    con.execute("DROP INDEX edges_tail_cover")
    con.execute("CREATE INDEX edges_head ON entity_edges(head)")
    con.execute("CREATE INDEX edges_tail ON entity_edges(tail)")
    con.commit()
    con.close()


def _edge_indexes(path) -> set[str]:
    con = sqlite3.connect(path / "corpus.sqlite")
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='entity_edges'")}
    con.close()
    return names


def test_an_older_corpus_gets_the_covering_edge_indexes_on_its_first_writable_open(corpus):
    want = {k for *_, k in corpus.entity_neighbourhood(["ann"], 2, per_entity=2).edges(keys=True)}
    path = corpus.path
    corpus.close()
    _old_edge_indexes(path)
    ro = Workspace(path.parent, embedder=HashEmbedder(), read_only=True).open("kg")  # answers on the old ones
    assert {k for *_, k in ro.entity_neighbourhood(["ann"], 2, per_entity=2).edges(keys=True)} == want
    ro.close()
    assert _edge_indexes(path) == {"edges_head", "edges_tail"}  # a read-only open writes nothing
    c = Workspace(path.parent, embedder=HashEmbedder()).open("kg")
    assert _edge_indexes(path) == {"edges_head_cover", "edges_tail_cover"}
    assert {k for *_, k in c.entity_neighbourhood(["ann"], 2, per_entity=2).edges(keys=True)} == want
    assert c.check() == []


OPENER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.store import Workspace
    from tests._fake_embedder import HashEmbedder
    Workspace({root!r}, embedder=HashEmbedder()).open("kg")
""")


def test_a_kill_while_the_covering_indexes_are_built_leaves_them_to_the_next_open(corpus):
    want = {k for *_, k in corpus.entity_neighbourhood(["bob"], 1, per_entity=2).edges(keys=True)}
    path = corpus.path
    corpus.close()
    _old_edge_indexes(path)
    env = {**os.environ, "TRIPLET_LENS_FAULT": "write.before_commit@1"}
    proc = subprocess.run(
        [sys.executable, "-c", OPENER.format(repo=str(REPO), root=str(path.parent))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]  # killed inside the build
    assert _edge_indexes(path) == {"edges_head", "edges_tail"}  # rolled back: the old ones, both still there
    c = Workspace(path.parent, embedder=HashEmbedder()).open("kg")
    assert _edge_indexes(path) == {"edges_head_cover", "edges_tail_cover"}
    assert {k for *_, k in c.entity_neighbourhood(["bob"], 1, per_entity=2).edges(keys=True)} == want
    assert c.check() == []


def test_a_capped_neighbourhood_reads_each_entitys_first_edges_by_triplet_id(corpus):
    bob_edges = sorted(k for *_, k in corpus.entity_neighbourhood(["bob"], 1).edges(keys=True))
    assert len(bob_edges) == 3
    for cap in (0, 1, 2, 3, 9):
        sub = corpus.entity_neighbourhood(["bob"], 1, per_entity=cap)
        assert sorted(k for *_, k in sub.edges(keys=True)) == bob_edges[:cap]
        # the in-memory walk over the whole graph caps the same way
        same = neighbourhood_of(corpus.entity_graph(), ["bob"], 1, per_entity=cap)
        assert sorted(k for *_, k in same.edges(keys=True)) == bob_edges[:cap]
    # two hops: each entity reached is capped on its own; uncapped equals the plain walk
    assert {k for *_, k in corpus.entity_neighbourhood(["ann"], 3, per_entity=-1).edges(keys=True)} == _walk(
        corpus.entity_graph(), ["ann"], 3
    )
    tid = {(t.subject, t.object): t.triplet_id for t in corpus.triplets()}
    # ann's first two: ann-bob, dan-ann; then bob's first two (ann-bob again, bob-cork) and dan's one
    two = {k for *_, k in corpus.entity_neighbourhood(["ann"], 2, per_entity=2).edges(keys=True)}
    assert two == {tid["Ann", "Bob"], tid["Dan", "Ann"], tid["Bob", "Cork"]}


def test_kg2rag_on_the_neighbourhood_equals_kg2rag_on_the_whole_graph(corpus):
    from engine.methods import build_method
    from engine.methods.kg2rag import KG2RAGSettings
    from engine.reasoners import make_reasoner

    class WholeGraphOnly:  # the same corpus, without the indexed neighbourhood
        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            if name == "entity_neighbourhood":
                raise AttributeError(name)
            return getattr(self._inner, name)

    method = build_method("kg2rag", make_reasoner("", embedder=corpus.embedder))
    for q in ("Where was Bob born?", "Who is the friend of Ann?", "Which union is Ireland a member of?"):
        a = method.answer(q, corpus, KG2RAGSettings(k=2, hops=2))
        b = method.answer(q, WholeGraphOnly(corpus), KG2RAGSettings(k=2, hops=2))
        assert a.evidence_chunk_ids == b.evidence_chunk_ids
        assert [(e.u, e.v, e.triplet_id) for e in a.trace.edges] == [(e.u, e.v, e.triplet_id) for e in b.trace.edges]
        assert a.trace.edges and len(a.evidence_chunk_ids) > 1  # the graph was walked


def test_a_replaced_extraction_drops_the_triplets_it_orphaned_and_keeps_shared_ones(corpus):
    first, second = corpus.chunks()[0].chunk_id, corpus.chunks()[1].chunk_id
    statuses = corpus.extraction_statuses()
    corpus.store_extraction(second, [("Bob", "born in", "Cork"), ("Ann", "mother of", "Bob")], statuses[second])
    corpus.store_extraction(first, [("Ann", "visits", "Cork")], statuses[first])
    kept = {(t.subject, t.predicate, t.object): t for t in corpus.triplets()}
    assert ("Ann", "mother of", "Bob") in kept  # still stated by the second chunk
    assert kept["Ann", "mother of", "Bob"].chunk_ids == (second,)
    corpus.delete_document(corpus.chunks()[1].doc_id)
    left = {(t.subject, t.predicate, t.object) for t in corpus.triplets()}
    assert ("Ann", "mother of", "Bob") not in left and ("Bob", "born in", "Cork") not in left
    edges = {r[0] for r in corpus._db.execute("SELECT tid FROM entity_edges")}
    assert edges == {t.triplet_id for t in corpus.triplets()} and corpus.check() == []
