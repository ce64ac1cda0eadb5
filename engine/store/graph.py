"""The entity graph: the indexed `entity_edges` table, a seed neighbourhood read by lookups, the whole graph for small views."""
from __future__ import annotations

from typing import Iterable

from engine.store.schema import _EDGES_VERSION, _SCHEMA
from engine.store.util import _chunks
from engine.textnorm import normalize_entity


class CorpusGraph:
    """The entity graph: the indexed `entity_edges` table, a seed neighbourhood read by lookups, the whole graph for small views."""

    def entity_neighbourhood(self, entities: Iterable[str], hops: int):
        """The part of `entity_graph()` a walk of `hops` hops from `entities` (normalized names) can
        reach: every edge incident to an entity at distance < hops, read with indexed lookups, so a
        question's cost follows its neighbourhood, not the corpus. Same node and edge attributes."""
        import networkx as nx

        if not self._edges_ready:  # a read-only corpus from before the edge table
            full = self.entity_graph()
            seen = set(e for e in entities if e in full)
            frontier, keep = set(seen), set()
            for _ in range(max(hops, 0)):
                nxt = set()
                for n in frontier:
                    for _, m, key in full.edges(n, keys=True):
                        keep.add(key)
                        if m not in seen:
                            nxt.add(m)
                seen |= nxt
                frontier = nxt
            return full.edge_subgraph([(u, v, k) for u, v, k in full.edges(keys=True) if k in keep]).copy()
        seen = {e for e in entities if e}
        frontier, tids = set(seen), {}
        with self._lock:
            for _ in range(max(hops, 0)):
                if not frontier:
                    break
                rows = []
                for part in _chunks(sorted(frontier), 400):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(f"SELECT tid, head, tail FROM entity_edges WHERE head IN ({marks}) "
                                             f"UNION SELECT tid, head, tail FROM entity_edges WHERE tail IN ({marks})",
                                             part + part).fetchall()
                nxt = set()
                for tid, h, t in rows:
                    if h and t:
                        tids[tid] = (h, t)
                        nxt.update(x for x in (h, t) if x not in seen)
                seen |= nxt
                frontier = nxt
        g = nx.MultiGraph()
        for t in self.get_triplets(sorted(tids)):
            h, tl = tids[t.triplet_id]  # normalized when stored: not again per question (a hub has thousands)
            g.add_node(h, label=t.subject) if h not in g else None
            g.add_node(tl, label=t.object) if tl not in g else None
            g.add_edge(h, tl, key=t.triplet_id, subject=t.subject, predicate=t.predicate, object=t.object,
                       triplet_id=t.triplet_id, chunk_ids=t.chunk_ids)
        return g

    def entity_graph(self):
        """networkx MultiGraph: normalized entities as nodes, one edge per triplet (key = triplet id)."""
        import networkx as nx

        with self._lock:
            gen = int(self._get_meta("prop_gen"))
            if self._graph is not None and self._graph_gen == gen:
                return self._graph
            g = nx.MultiGraph()
            for t in self.triplets():
                h, tl = normalize_entity(t.subject), normalize_entity(t.object)
                if not h or not tl:
                    continue
                g.add_node(h, label=t.subject) if h not in g else None
                g.add_node(tl, label=t.object) if tl not in g else None
                g.add_edge(h, tl, key=t.triplet_id, subject=t.subject, predicate=t.predicate, object=t.object,
                           triplet_id=t.triplet_id, chunk_ids=t.chunk_ids)
            self._graph, self._graph_gen = g, gen
            return g

    def _build_entity_edges(self) -> None:
        """Fill `entity_edges` for a corpus made before it existed (or salvaged), in batches."""
        with self._lock, self._process_lock(30.0):
            self._db.executescript(_SCHEMA)  # adds the table and its indexes to an older file
        with self._write():
            last = 0
            while True:
                rows = self._db.execute("SELECT tid, subject, object FROM triplets WHERE tid > ? ORDER BY tid "
                                        "LIMIT 10000", (last,)).fetchall()
                if not rows:
                    break
                self._db.executemany("INSERT OR IGNORE INTO entity_edges(tid, head, tail) VALUES (?,?,?)",
                                     [(t, normalize_entity(s), normalize_entity(o)) for t, s, o in rows])
                last = rows[-1][0]
            self._set_meta("edges_built", _EDGES_VERSION)
        self._edges_ready = True
