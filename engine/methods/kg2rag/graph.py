"""KG2RAG's graph algorithms, free of any corpus or model: expansion, spanning trees, walk, selection.

Selection (step 7) lives in `select.py`, the trace records in `records.py`. Everything here works
on a `networkx.MultiGraph` shaped like `Corpus.entity_graph()` (nodes are normalized entities; one
edge per triplet, keyed by triplet_id, carrying subject / predicate / object / triplet_id /
chunk_ids) and on plain chunk scores, so each step can be checked by hand.
`engine.methods.kg2rag` wires these steps to a corpus and a reasoner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import networkx as nx

from engine.core.textnorm import normalize_entity
from engine.methods.kg2rag.records import EntityCap, GraphEdge, Hop, PrunedEdge, ScoredChunkId, Tree

__all__ = [
    "EntityCap",
    "Expansion",
    "GraphEdge",
    "Hop",
    "PrunedEdge",
    "ScoredChunkId",
    "Tree",
    "build_multigraph",
    "dfs_walk",
    "expand",
    "spanning_trees",
    "triplet_index",
    "weighted_edges",
]

# --- step 2: expansion -----------------------------------------------------------------------


@dataclass
class Expansion:
    seed_entities: list[str]  # entities of the seeds' triplets: the first frontier
    hops: list[Hop]
    triplet_ids: list[int]  # every triplet within reach, in discovery order
    chunk_scores: dict[str, float]  # every candidate chunk (seeds and added) -> s(q, c)
    #: added chunk -> the frontier entities whose followed triplets named it (the authors' scoring
    #: gives a chunk the score of the entity it joined through)
    via: dict[str, set[str]] = field(default_factory=dict)
    #: (hop, frontier entity, entity reached) per followed triplet within reach, in hop order
    links: list[tuple[int, str, str]] = field(default_factory=list)


def expand(
    graph: nx.MultiGraph,
    seed_scores: dict[str, float],
    seed_triplets: dict[int, tuple[str, ...]],
    hops: int,
    score_chunks: Callable[[list[str]], dict[str, float]],
    expansion_cap: int,
    max_entity_edges: int,
) -> Expansion:
    """Breadth-first `hops` hops from the seeds' entities; chunks stating a reached triplet join.

    `seed_scores` are the seed chunks with their similarity; `seed_triplets` the triplets they
    state (triplet_id -> every chunk stating it); `score_chunks(ids)` gives s(q, c) for other
    chunks. The seeds' own triplets are always within reach. Two caps keep a hub from flooding
    the candidates: at most `max_entity_edges` new edges per entity per hop (its best, by the
    best chunk stating each), and at most `expansion_cap` added chunks in all (the best ones;
    the budget is shared by the hops).
    """
    index = triplet_index(graph)
    frontier = sorted({n for t in seed_triplets if t in index for n in index[t][:2]})
    st = _Walk(
        scores=dict(seed_scores),
        seeds=set(seed_scores),
        seen_triplets=set(seed_triplets),
        triplets_in_reach=sorted(seed_triplets),
        seen_entities=set(frontier),
        budget=max(0, expansion_cap),
    )
    seed_entities = list(frontier)
    out_hops: list[Hop] = []
    for h in range(1, max(0, hops) + 1):
        if not frontier:
            break
        followed, caps = _follow_edges(graph, frontier, st.seen_triplets, st.scores, score_chunks, max_entity_edges)
        extra = [c for cids in seed_triplets.values() for c in cids] if h == 1 else []
        out_hops.append(_take_hop(st, h, frontier, followed, caps, extra, score_chunks))
        added = {c.chunk_id for c in out_hops[-1].chunks_added}
        if h == 1:  # another chunk stating a seed triplet joined through that triplet's entities
            for tid, cids in seed_triplets.items():
                for c in added.intersection(cids) if tid in index else ():
                    st.via.setdefault(c, set()).update(index[tid][:2])
        for tid in out_hops[-1].triplet_ids:
            cids, other, ent = followed[tid]
            st.links.append((h, ent, other))
            for c in added.intersection(cids):
                st.via.setdefault(c, set()).add(ent)
        frontier = out_hops[-1].entities_reached
    keep = st.seeds | set(st.added)
    return Expansion(
        seed_entities=seed_entities,
        hops=out_hops,
        triplet_ids=st.triplets_in_reach,
        chunk_scores={c: float(s) for c, s in st.scores.items() if c in keep},
        via=st.via,
        links=st.links,
    )


@dataclass
class _Walk:
    """What `expand` carries from hop to hop."""

    scores: dict[str, float]  # every chunk scored so far -> s(q, c)
    seeds: set[str]
    seen_triplets: set[int]
    triplets_in_reach: list[int]
    seen_entities: set[str]
    budget: int  # chunks the expansion may still add
    added: list[str] = field(default_factory=list)
    via: dict[str, set[str]] = field(default_factory=dict)
    links: list[tuple[int, str, str]] = field(default_factory=list)


def _take_hop(
    st: _Walk,
    h: int,
    frontier: list[str],
    followed: dict[int, tuple[tuple[str, ...], str, str]],
    caps: list[EntityCap],
    extra: list[str],
    score_chunks: Callable[[list[str]], dict[str, float]],
) -> Hop:
    """One hop's bookkeeping: the chunks the followed edges name (and `extra`: at hop 1 the other
    chunks stating the seeds' own triplets) join best first within the budget; a triplet is within
    reach only if a surviving candidate states it, and entities reached only through cut chunks
    are not expanded further."""
    pool = {c for cids, _, _ in followed.values() for c in cids} | set(extra)
    pool -= st.seeds | set(st.added)
    if pool - st.scores.keys():
        st.scores.update(score_chunks(sorted(pool - st.scores.keys())))
    new_chunks = sorted(pool, key=lambda c: (-st.scores.get(c, float("-inf")), c))
    kept_chunks, cut = new_chunks[: st.budget], new_chunks[st.budget :]
    st.budget -= len(kept_chunks)
    st.added.extend(kept_chunks)
    candidates = st.seeds | set(st.added)
    tids = [t for t in sorted(followed) if candidates.intersection(followed[t][0])]
    st.seen_triplets.update(followed)
    st.triplets_in_reach.extend(tids)
    reached = sorted({followed[t][1] for t in tids} - st.seen_entities)
    st.seen_entities.update(reached)
    return Hop(
        hop=h,
        frontier=list(frontier),
        entities_reached=reached,
        triplet_ids=tids,
        chunks_added=[ScoredChunkId(c, float(st.scores[c])) for c in kept_chunks],
        entity_caps=caps,
        cut_by_total_cap=[ScoredChunkId(c, float(st.scores[c])) for c in cut],
    )


def _follow_edges(
    graph: nx.MultiGraph,
    frontier: list[str],
    seen_triplets: set[int],
    scores: dict[str, float],
    score_chunks: Callable[[list[str]], dict[str, float]],
    max_entity_edges: int,
) -> tuple[dict[int, tuple[tuple[str, ...], str, str]], list[EntityCap]]:
    """One hop's edges: each frontier entity's unseen edges (both directions: the graph is
    undirected), its best `max_entity_edges` by the best chunk stating each. `scores` gains the
    similarity of every chunk the edges name. Returns triplet_id -> (chunks, entity reached, frontier
    entity it was followed from), caps."""
    per_entity: dict[str, list[tuple[int, tuple[str, ...], str]]] = {}
    for ent in frontier:
        for a, b, key, data in graph.edges(ent, keys=True, data=True):
            tid = int(data.get("triplet_id", key))
            if tid not in seen_triplets:
                per_entity.setdefault(ent, []).append((tid, tuple(data.get("chunk_ids", ())), b if a == ent else a))
    unscored = sorted({c for es in per_entity.values() for _, cids, _ in es for c in cids} - scores.keys())
    if unscored:
        scores.update(score_chunks(unscored))

    def edge_score(cids: tuple[str, ...]) -> float:
        return max((scores.get(c, float("-inf")) for c in cids), default=float("-inf"))

    followed: dict[int, tuple[tuple[str, ...], str, str]] = {}
    caps: list[EntityCap] = []
    # the store's read cap: the true degree of each entity it cut (engine/store/graph.py DEGREES)
    degrees: dict[str, int] = graph.graph.get("entity_degrees") or {}
    for ent in frontier:
        edges = sorted(
            (e for e in per_entity.get(ent, []) if e[0] not in followed), key=lambda e: (-edge_score(e[1]), e[0])
        )
        present = sum(1 for _ in graph.edges(ent, keys=True)) if ent in graph else 0
        unread = max(0, degrees.get(ent, 0) - present)
        over = max_entity_edges >= 0 and len(edges) > max_entity_edges
        if over or unread:
            kept = min(len(edges), max_entity_edges) if max_entity_edges >= 0 else len(edges)
            caps.append(
                EntityCap(
                    entity=ent,
                    degree=degrees.get(ent) or len(edges),
                    kept=kept,
                    cut_triplet_ids=[e[0] for e in edges[kept:]],
                    unread=unread,
                )
            )
            edges = edges[:kept]
        for tid, cids, other in edges:
            followed[tid] = (cids, other, ent)
    return followed, caps


def triplet_index(graph: nx.MultiGraph) -> dict[int, tuple[str, str, dict]]:
    """triplet_id -> (node, node, edge data), built once per graph object and kept on it."""
    idx = graph.graph.get("_kg2rag_triplet_index")
    if idx is None or graph.graph.get("_kg2rag_triplet_index_size") != graph.number_of_edges():
        idx = {int(d.get("triplet_id", k)): (a, b, d) for a, b, k, d in graph.edges(keys=True, data=True)}
        graph.graph["_kg2rag_triplet_index"] = idx
        graph.graph["_kg2rag_triplet_index_size"] = graph.number_of_edges()
    return idx


# --- step 3: the weighted graph --------------------------------------------------------------


def weighted_edges(graph: nx.MultiGraph, triplet_ids: Iterable[int], chunk_scores: dict[str, float]) -> list[GraphEdge]:
    """One edge per (triplet within reach, candidate chunk stating it), weighted s(q, chunk)."""
    by_tid = triplet_index(graph)
    out: list[GraphEdge] = []
    for tid in dict.fromkeys(triplet_ids):
        if tid not in by_tid:
            continue
        a, b, d = by_tid[tid]
        # The graph is undirected, so (a, b) may come back in either order: orient by the subject.
        u, v = _orient(a, b, d)
        for cid in d.get("chunk_ids", ()):
            if cid in chunk_scores:
                out.append(
                    GraphEdge(
                        u=u,
                        v=v,
                        subject=d.get("subject", u),
                        predicate=d.get("predicate", ""),
                        object=d.get("object", v),
                        triplet_id=tid,
                        chunk_id=cid,
                        weight=float(chunk_scores[cid]),
                    )
                )
    return out


def _orient(a: str, b: str, data: dict) -> tuple[str, str]:
    subj = data.get("subject")
    if subj is not None and normalize_entity(subj) == b and normalize_entity(data.get("object", "")) == a:
        return b, a
    return a, b


def build_multigraph(edges: list[GraphEdge]) -> nx.MultiGraph:
    """The weighted graph with every parallel edge kept (the trace and the app draw it)."""
    g = nx.MultiGraph()
    for e in edges:
        g.add_edge(e.u, e.v, key=(e.triplet_id, e.chunk_id), weight=e.weight, edge=e)
    return g


# --- steps 4-5: spanning trees and their arrangement ------------------------------------------


def spanning_trees(edges: list[GraphEdge]) -> list[Tree]:
    """A maximum spanning tree per connected component, each arranged by a depth-first walk.

    Kruskal over edges sorted heaviest first: of parallel edges between the same two entities
    only the heaviest can enter (the rest would close a 2-cycle), and any other edge closing a
    cycle is pruned. Trees come back in the order of their heaviest edge.
    """
    g = build_multigraph(edges)
    trees: list[Tree] = []
    comps = [sorted(c) for c in nx.connected_components(g)]
    comp_edges: list[list[GraphEdge]] = []
    for comp in comps:
        es = [d["edge"] for _, _, d in g.subgraph(comp).edges(data=True)]
        comp_edges.append(sorted(es, key=lambda e: e.sort_key))
    order = sorted(range(len(comps)), key=lambda i: (comp_edges[i][0].sort_key if comp_edges[i] else (0.0,), comps[i]))
    for i in order:
        kept, pruned = _kruskal(comp_edges[i])
        walk = dfs_walk(kept)
        if walk:
            trees.append(
                Tree(
                    tree_id=len(trees),
                    nodes=comps[i],
                    kept_edges=walk,
                    pruned_edges=pruned,
                    # a question link joins two trees' entities but states nothing: no chunk, no line
                    chunk_ids=list(dict.fromkeys(e.chunk_id for e in walk if not e.is_question_link)),
                    triplet_form="\n".join(dict.fromkeys(e.line for e in walk if not e.is_question_link)),
                    root=walk[0].u,
                )
            )
        else:
            # Only self-loops ("X is X"-like triplets, or a subject and object that normalize to
            # one entity): no edge survives, but the component still stands for a chunk that
            # reached the graph. Like the reference code, keep its best chunk, so the
            # component competes in the ranking instead of silently losing that chunk.
            best = pruned[0].edge  # edges come heaviest first
            trees.append(
                Tree(
                    tree_id=len(trees),
                    nodes=comps[i],
                    kept_edges=[],
                    pruned_edges=pruned,
                    chunk_ids=[best.chunk_id],
                    triplet_form=best.line,
                    root=best.u,
                    kind="self-loops",
                )
            )
    return trees


def _kruskal(sorted_edges: list[GraphEdge]) -> tuple[list[GraphEdge], list[PrunedEdge]]:
    uf = nx.utils.UnionFind()
    kept: list[GraphEdge] = []
    pruned: list[PrunedEdge] = []
    pairs: set[frozenset[str]] = set()
    for e in sorted_edges:
        pair = frozenset((e.u, e.v))
        if e.u == e.v:
            pruned.append(PrunedEdge(e, "self-loop"))
        elif uf[e.u] == uf[e.v]:
            pruned.append(PrunedEdge(e, "parallel" if pair in pairs else "cycle"))
        else:
            uf.union(e.u, e.v)
            pairs.add(pair)
            kept.append(e)
    return kept, pruned


def dfs_walk(tree_edges: list[GraphEdge]) -> list[GraphEdge]:
    """Depth-first walk of a tree starting at its heaviest edge.

    Why the heaviest edge: it carries the chunk most similar to the question, so the paragraph
    the reader most needs comes first, and the depth-first order then keeps each fact next to
    the facts it connects to - a reasoning chain reads in chain order rather than by title.
    At each entity, unvisited edges are taken heaviest first.
    """
    if not tree_edges:
        return []
    ordered = sorted(tree_edges, key=lambda e: e.sort_key)
    adj: dict[str, list[GraphEdge]] = {}
    for e in ordered:
        adj.setdefault(e.u, []).append(e)
        adj.setdefault(e.v, []).append(e)
    root = ordered[0].u  # the heaviest edge is the heaviest at its subject, so it is walked first
    walk: list[GraphEdge] = []
    used: set[int] = set()
    visited = {root}
    stack = [(root, iter(adj[root]))]
    while stack:
        node, it = stack[-1]
        for e in it:
            if id(e) in used:
                continue
            nxt = e.v if e.u == node else e.u
            if nxt in visited:
                continue
            used.add(id(e))
            visited.add(nxt)
            walk.append(e)
            stack.append((nxt, iter(adj[nxt])))
            break
        else:
            stack.pop()
    return walk
