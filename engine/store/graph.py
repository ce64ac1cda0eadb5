"""The entity graph: the indexed `entity_edges` table, a seed neighbourhood read by lookups, the
whole graph for small views."""

from __future__ import annotations

from collections.abc import Iterable

from engine.core.textnorm import normalize_entity
from engine.core.types import Triplet
from engine.store.base import CorpusBase
from engine.store.schema import _EDGE_INDEXES, _EDGES_VERSION, _OLD_EDGE_INDEXES, _SCHEMA
from engine.store.util import _chunks


def entity_graph_of(triplets: Iterable[Triplet], names: dict[int, tuple[str, str]] | None = None):
    """The entity graph of `triplets`: a networkx MultiGraph with normalized entities as nodes
    (attribute `label`: the first surface form) and one edge per triplet, keyed by triplet id, with
    its subject, predicate, object, triplet_id and chunk_ids. `names` gives a triplet's normalized
    (head, tail) when already known. A triplet whose entity normalizes to nothing is left out."""
    import networkx as nx

    g = nx.MultiGraph()
    for t in triplets:
        h, tl = (
            names[t.triplet_id]
            if names and t.triplet_id in names
            else (normalize_entity(t.subject), normalize_entity(t.object))
        )
        if not h or not tl:
            continue
        g.add_node(h, label=t.subject) if h not in g else None
        g.add_node(tl, label=t.object) if tl not in g else None
        g.add_edge(
            h,
            tl,
            key=t.triplet_id,
            subject=t.subject,
            predicate=t.predicate,
            object=t.object,
            triplet_id=t.triplet_id,
            chunk_ids=t.chunk_ids,
        )
    return g


#: One entity's first edges by triplet id, both directions: a merge of the two indexes (each
#: yields its rows in tid order) that stops at the limit (tests/engine/store/test_entity_neighbourhood.py).
_CAPPED_EDGES = (
    "SELECT tid, head, tail FROM entity_edges WHERE head=? "
    "UNION SELECT tid, head, tail FROM entity_edges WHERE tail=? ORDER BY tid LIMIT ?"
)


#: An entity's true degree (edges in either direction, a self-loop once), counted on the indexes.
_DEGREE = (
    "SELECT (SELECT COUNT(*) FROM entity_edges WHERE head=?) "
    "+ (SELECT COUNT(*) FROM entity_edges WHERE tail=? AND head<>?)"
)

#: Graph attribute of a capped neighbourhood: entity -> its true degree, for every entity the read
#: cap cut (more edges than `per_entity`), so a trace can say "read 64 of 1,412".
DEGREES = "entity_degrees"


def neighbourhood_of(graph, entities: Iterable[str], hops: int, per_entity: int = -1, keep: Iterable[int] = ()):
    """The part of `graph` a walk of `hops` hops from `entities` can reach: every edge incident to
    an entity at distance < hops (with `per_entity` >= 0: each entity's first `per_entity` edges by
    key, the triplet id), with the same node and edge attributes. The edges keyed by `keep` are in
    it whatever the cap, and the true degree of each entity the cap cut is in `graph.graph[DEGREES]`."""
    keep = {int(k) for k in keep}
    seen = {e for e in entities if e in graph}
    frontier = set(seen)
    kept = {(u, v, k) for u, v, k in graph.edges(keys=True) if k in keep} if hops > 0 else set()
    keys, degrees = {k for *_, k in kept}, {}
    for _ in range(max(hops, 0)):
        nxt = set()
        for n in sorted(frontier):
            edges = sorted(graph.edges(n, keys=True), key=lambda e: e[2])
            if 0 <= per_entity < len(edges):
                degrees[n] = len(edges)
            for _, m, key in edges if per_entity < 0 else edges[:per_entity]:
                keys.add(key)
                if m not in seen:
                    nxt.add(m)
        seen |= nxt
        frontier = nxt
    sub = graph.edge_subgraph([(u, v, k) for u, v, k in graph.edges(keys=True) if k in keys]).copy()
    sub.graph[DEGREES] = degrees
    return sub


class CorpusGraph(CorpusBase):
    """The entity graph of a corpus (see the module docstring)."""

    def entity_neighbourhood(self, entities: Iterable[str], hops: int, per_entity: int = -1, keep: Iterable[int] = ()):
        """The part of `entity_graph()` a walk of `hops` hops from `entities` (normalized names) can
        reach: every edge incident to an entity at distance < hops, read with indexed lookups, so a
        question's cost follows its neighbourhood, not the corpus. Same node and edge attributes.

        `per_entity` >= 0 reads at most that many edges of each entity: its first by triplet id (the
        order the facts were stored, so adding documents never changes which edges of a hub a
        question reads), one indexed merge of the head and tail indexes that stops at the limit, so
        a hub costs `per_entity` rows however many edges it has. The triplets in `keep` (KG2RAG: the
        seed chunks' own) are read whatever the cap: storage order must not cut the facts the walk
        starts from. Each entity the cap cut has its true degree in `graph.graph[DEGREES]` (counted
        on the index, no row read)."""
        if not self._edges_ready:  # a read-only corpus from before the edge table
            return neighbourhood_of(self.entity_graph(), entities, hops, per_entity, keep)
        seen = {e for e in entities if e}
        frontier, tids = set(seen), {}
        degrees: dict[str, int] = {}
        with self._lock:
            for tid, h, t in self._edges_by_id(sorted({int(k) for k in keep})) if hops > 0 else []:
                tids[tid] = (h, t)
            for _ in range(max(hops, 0)):
                if not frontier:
                    break
                nxt: set[str] = set()
                for tid, h, t in self._edges_of(sorted(frontier), per_entity, degrees):
                    if h and t:
                        tids[tid] = (h, t)
                        nxt.update(x for x in (h, t) if x not in seen)
                seen |= nxt
                frontier = nxt
        # names normalized when stored: not again per question (a hub has thousands)
        g = entity_graph_of(self.get_triplets(sorted(tids)), tids)
        g.graph[DEGREES] = degrees
        return g

    def _edges_by_id(self, tids: list[int]) -> list[tuple[int, str, str]]:
        rows: list[tuple[int, str, str]] = []
        for part in _chunks(tids, 400):
            marks = ",".join("?" * len(part))
            rows += self._db.execute(
                f"SELECT tid, head, tail FROM entity_edges WHERE tid IN ({marks})", part
            ).fetchall()
        return [(t, h, tl) for t, h, tl in rows if h and tl]

    def _edges_of(self, entities: list[str], per_entity: int, degrees: dict[str, int]) -> list[tuple[int, str, str]]:
        """(tid, head, tail) of the edges incident to `entities`: all, or each entity's first
        `per_entity` by triplet id (then `degrees` gains the true degree of each entity cut)."""
        rows: list[tuple[int, str, str]] = []
        if per_entity >= 0:
            for ent in entities:
                got = self._db.execute(_CAPPED_EDGES, (ent, ent, per_entity)).fetchall()
                if len(got) == per_entity:  # at the limit: maybe cut, count the rest on the index
                    degree = int(self._db.execute(_DEGREE, (ent, ent, ent)).fetchone()[0])
                    if degree > per_entity:
                        degrees[ent] = degree
                rows += got
            return rows
        for part in _chunks(entities, 400):
            marks = ",".join("?" * len(part))
            rows += self._db.execute(
                f"SELECT tid, head, tail FROM entity_edges WHERE head IN ({marks}) "
                f"UNION SELECT tid, head, tail FROM entity_edges WHERE tail IN ({marks})",
                part + part,
            ).fetchall()
        return rows

    def _edges_covered(self) -> bool:
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        return {"edges_head_cover", "edges_tail_cover"} <= names and not names.intersection(_OLD_EDGE_INDEXES)

    def _cover_entity_edges(self) -> None:
        """Give a corpus made before them the covering edge indexes (and drop the entity-only ones
        they replace), in one transaction: a kill midway rolls back, and the next open builds them."""
        with self._write():
            if not self._edges_covered():
                for sql in filter(None, (x.strip() for x in _EDGE_INDEXES.split(";"))):
                    self._db.execute(sql)
                for name in _OLD_EDGE_INDEXES:
                    self._db.execute(f"DROP INDEX IF EXISTS {name}")

    def entity_graph(self):
        """networkx MultiGraph: normalized entities as nodes, one edge per triplet (key = triplet id)."""
        with self._lock:
            gen = int(self._get_meta("prop_gen"))
            if self._graph is None or self._graph_gen != gen:
                self._graph, self._graph_gen = entity_graph_of(self.triplets()), gen
            return self._graph

    def _build_entity_edges(self) -> None:
        """Fill `entity_edges` for a corpus made before it existed (or salvaged), in batches."""
        with self._lock, self._process_lock(30.0):
            self._db.executescript(_SCHEMA)  # adds the table and its indexes to an older file
        with self._write():
            last = 0
            while True:
                rows = self._db.execute(
                    "SELECT tid, subject, object FROM triplets WHERE tid > ? ORDER BY tid LIMIT 10000", (last,)
                ).fetchall()
                if not rows:
                    break
                self._db.executemany(
                    "INSERT OR IGNORE INTO entity_edges(tid, head, tail) VALUES (?,?,?)",
                    [(t, normalize_entity(s), normalize_entity(o)) for t, s, o in rows],
                )
                last = rows[-1][0]
            self._set_meta("edges_built", _EDGES_VERSION)
        self._edges_ready = True
