"""A bounded view of a corpus's entity graph, read from the indexed `entity_edges` table.

The Corpora page's graph tab draws at most a few hundred entities; loading every triplet into a
networkx graph to pick them (`Corpus.entity_graph()`) costs memory that grows with the corpus.
`entity_view(corpus, search, cap)` returns a small networkx MultiGraph with the same node and
edge attributes as `entity_graph()`, holding at most `cap` entities - the entities matching
`search` with their neighbours, or the best-connected entities with theirs - the edges among
them, and counts of what was left out. Memory follows `cap`; the hub ranking (a grouped scan of
the edge table, done in SQLite) is cached per state of the triplets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.core.textnorm import normalize_entity

#: neighbours read per chosen entity (a hub may have millions; the view needs a handful)
NEIGHBOURS_READ = 200
_CACHE: dict[tuple, Any] = {}


@dataclass
class EntityView:
    graph: Any  # networkx.MultiGraph: at most `cap` entities and the triplet edges among them
    matched: int  # entities matching the search (without a search: every entity)
    total_entities: int
    total_edges: int
    left_out_entities: int  # entities of the corpus not in the view
    left_out_edges: int  # triplet edges of the corpus not in the view
    bounded: bool = True  # False: an old read-only corpus without the edge table (whole graph read)


def _degree(db, names: list[str]) -> dict[str, int]:
    out = dict.fromkeys(names, 0)
    for i in range(0, len(names), 400):
        part = names[i : i + 400]
        marks = ",".join("?" * len(part))
        for col in ("head", "tail"):
            for name, n in db.execute(
                f"SELECT {col}, COUNT(*) FROM entity_edges WHERE {col} IN ({marks}) GROUP BY {col}", part
            ):
                out[name] += n
    return out


def _neighbours(db, name: str, limit: int) -> list[str]:
    rows = db.execute("SELECT tail FROM entity_edges WHERE head = ? AND tail != '' LIMIT ?", (name, limit)).fetchall()
    rows += db.execute("SELECT head FROM entity_edges WHERE tail = ? AND head != '' LIMIT ?", (name, limit)).fetchall()
    return list(dict.fromkeys(r[0] for r in rows))


def _cached(corpus, what: tuple, compute):
    """`compute()` cached per corpus, state of its triplets and `what` (a few small values)."""
    key = (str(corpus.path), corpus.token, int(corpus._get_meta("prop_gen"))) + what
    if key not in _CACHE:
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[key] = compute()
    return _CACHE[key]


def _hubs(corpus, db, cap: int) -> list[tuple[str, int]]:
    """The `cap` best-connected entities (name, degree): one grouped scan in SQLite, cached."""
    return _cached(
        corpus,
        ("hubs", cap),
        lambda: db.execute(
            "SELECT e, COUNT(*) AS d FROM (SELECT head AS e FROM entity_edges UNION ALL "
            "SELECT tail FROM entity_edges) WHERE e != '' GROUP BY e ORDER BY d DESC, e LIMIT ?",
            (cap,),
        ).fetchall(),
    )


def _totals(corpus, db) -> tuple[int, int]:
    def count():
        entities = db.execute(
            "SELECT COUNT(*) FROM (SELECT head AS e FROM entity_edges WHERE head != '' UNION "
            "SELECT tail FROM entity_edges WHERE tail != '')"
        ).fetchone()[0]
        edges = db.execute("SELECT COUNT(*) FROM entity_edges WHERE head != '' AND tail != ''").fetchone()[0]
        return entities, edges

    return _cached(corpus, ("totals",), count)


def entity_view(corpus, search: str = "", cap: int = 150) -> EntityView:
    """At most `cap` entities of `corpus`'s graph (see the module docstring) and what was left out."""
    if cap < 1:
        raise ValueError("the node cap must be at least 1")
    if not getattr(corpus, "_edges_ready", False):  # a read-only corpus from before the edge table
        g = corpus.entity_graph()
        return EntityView(g, g.number_of_nodes(), g.number_of_nodes(), g.number_of_edges(), 0, 0, bounded=False)
    query = (search or "").strip().lower()
    with corpus._lock:
        db = corpus._db
        total_entities, total_edges = _totals(corpus, db)
        if query:
            seeds, matched = _search_seeds(db, search, query, cap)
        else:
            hubs = _hubs(corpus, db, cap)
            seeds, matched = [h for h, _ in hubs], total_entities
        chosen = _choose(db, seeds, bool(query), cap)
        edges = _edges_among(db, chosen)
        g = _graph(chosen, _labels(db, chosen, edges), edges, _sources(db, [r[0] for r in edges]))
    return EntityView(
        g, matched, total_entities, total_edges, total_entities - g.number_of_nodes(), total_edges - g.number_of_edges()
    )


def _search_seeds(db, search: str, query: str, cap: int) -> tuple[list[str], int]:
    """Entities whose name holds `query` (or normalizes to `search`), best-connected first, and
    how many match in all."""
    like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    norm = normalize_entity(search)
    match_sql = (
        "SELECT head AS e FROM entity_edges WHERE head LIKE ? ESCAPE '\\' OR head = ? UNION "
        "SELECT tail FROM entity_edges WHERE tail LIKE ? ESCAPE '\\' OR tail = ?"
    )
    args = (like, norm, like, norm)
    matched = db.execute(f"SELECT COUNT(*) FROM ({match_sql}) WHERE e != ''", args).fetchone()[0]
    hits = [r[0] for r in db.execute(f"SELECT e FROM ({match_sql}) WHERE e != '' LIMIT ?", (*args, 4 * cap))]
    deg = _degree(db, hits)
    return sorted(hits, key=lambda n: (-deg[n], n)), matched


def _choose(db, seeds: list[str], searched: bool, cap: int) -> list[str]:
    """At most `cap` entities: the search hits first, then their neighbours; without a search,
    each hub followed by its best-connected neighbours."""
    chosen: list[str] = list(seeds[:cap]) if searched else []
    seen = set(chosen)
    for s in seeds:
        if len(chosen) >= cap:
            break
        if not searched and s not in seen:  # hubs: each with its neighbourhood
            seen.add(s)
            chosen.append(s)
        nbs = _neighbours(db, s, NEIGHBOURS_READ)
        deg = _degree(db, [n for n in nbs if n not in seen])
        for nb in sorted(deg, key=lambda n: (-deg[n], n)):
            if len(chosen) >= cap:
                break
            seen.add(nb)
            chosen.append(nb)
    return chosen


def _edges_among(db, chosen: list[str]) -> list[tuple]:
    """(tid, head, tail, subject, predicate, object) of the triplet edges between chosen entities."""
    keep = set(chosen)
    edges = []
    for i in range(0, len(chosen), 400):
        part = chosen[i : i + 400]
        marks = ",".join("?" * len(part))
        edges += db.execute(
            f"SELECT e.tid, e.head, e.tail, t.subject, t.predicate, t.object FROM entity_edges e "
            f"JOIN triplets t ON t.tid = e.tid WHERE e.head IN ({marks})",
            part,
        ).fetchall()
    return [r for r in edges if r[2] in keep]


def _labels(db, chosen: list[str], edges: list[tuple]) -> dict[str, str]:
    """Each chosen entity's surface form, as a triplet writes it (not its normalized key)."""
    labels: dict[str, str] = {}
    for _tid, h, t, s, _p, o in edges:
        labels.setdefault(h, s)
        labels.setdefault(t, o)
    for n in chosen:
        if n not in labels:  # an entity drawn without an edge: its surface form from one triplet
            row = (
                db.execute(
                    "SELECT t.subject FROM entity_edges e JOIN triplets t ON t.tid = e.tid WHERE e.head = ? LIMIT 1",
                    (n,),
                ).fetchone()
                or db.execute(
                    "SELECT t.object FROM entity_edges e JOIN triplets t ON t.tid = e.tid WHERE e.tail = ? LIMIT 1",
                    (n,),
                ).fetchone()
            )
            labels[n] = row[0] if row else n
    return labels


def _sources(db, tids: list[int]) -> dict[int, list[str]]:
    """The chunks stating each triplet."""
    sources: dict[int, list[str]] = {}
    for i in range(0, len(tids), 400):
        part = tids[i : i + 400]
        for tid, cid in db.execute(
            f"SELECT tid, chunk_id FROM triplet_sources WHERE tid IN ({','.join('?' * len(part))})", part
        ):
            sources.setdefault(tid, []).append(cid)
    return sources


def _graph(chosen: list[str], labels: dict[str, str], edges: list[tuple], sources: dict[int, list[str]]) -> Any:
    """The view as a networkx MultiGraph with `entity_graph()`'s node and edge attributes."""
    import networkx as nx

    g = nx.MultiGraph()
    for n in chosen:
        g.add_node(n, label=labels[n])
    for tid, h, t, s, p, o in edges:
        g.add_edge(
            h,
            t,
            key=tid,
            subject=s,
            predicate=p,
            object=o,
            triplet_id=tid,
            chunk_ids=tuple(sorted(sources.get(tid, ()))),
        )
    return g
