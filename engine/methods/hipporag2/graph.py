"""HippoRAG 2's graph over a corpus's stored triplets, its seed weights and Personalized PageRank.

Restated from OSU-NLP-Group/HippoRAG `src/hipporag/HippoRAG.py` (`index`, `add_fact_edges`,
`add_passage_edges`, `add_synonymy_edges`, `add_new_edges`, `graph_search_with_fact_entities`,
`get_top_k_weights`, `run_ppr`) and `utils/misc_utils.py` (`text_processing`, `min_max_normalize`):

* phrase nodes: the subjects and objects of the triplets after `text_processing` (lower case,
  every non-alphanumeric a space); passage nodes: the chunks;
* fact edges: subject-object, +1 per triplet per chunk in each direction; passage edges: chunk to each
  of its phrases, weight 1; synonym edges: phrase pairs whose embeddings' cosine is at least the
  threshold (among each phrase's `synonymy_edge_topk` nearest, at most 101 each, phrases of more than
  two alphanumerics only), weight = the cosine, overwriting a fact edge between the same pair as the
  authors' dict does (the rules: engine/core/phrases.py; the corpus keeps the phrase vectors and
  synonym edges: engine/store/phrase_graph.py);
* the authors add every directed pair to an undirected igraph, so a pair listed both ways counts
  twice: the adjacency here sums both directions the same way.

PPR is a numpy/scipy power iteration (python-igraph is not available): p = (1-d) r + d W'p with W
column-normalized by weighted degree and the mass of isolated nodes returned by the reset vector, as
igraph's PRPACK does, iterated to an L1 change below 1e-12.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from engine.core.phrases import text_processing  # noqa: F401 - re-exported: the authors' normalization


def min_max_normalize(x: np.ndarray) -> np.ndarray:
    """(x - min) / (max - min); all ones when every value is the same (the authors' code divides
    by zero there, and its PPR then drops the NaN weights)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    span = float(x.max() - x.min())
    return (x - x.min()) / span if span > 0 else np.ones_like(x)


@dataclass
class HippoGraph:
    phrases: list[str]  # phrase node i is phrases[i]
    passages: list[str]  # passage node len(phrases) + j is passages[j] (a chunk id)
    phrase_chunks: dict[str, set[str]]  # the authors' `ent_node_to_chunk_ids`
    stats: dict[tuple[str, str], float]  # the authors' `node_to_node_stats`, keys: phrase text or "chunk:<id>"
    kinds: dict[tuple[str, str], str] = field(default_factory=dict)
    adjacency: sparse.csr_matrix | None = None

    @property
    def n(self) -> int:
        return len(self.phrases) + len(self.passages)

    def index(self) -> dict[str, int]:
        out = {p: i for i, p in enumerate(self.phrases)}
        out.update({passage_key(c): len(self.phrases) + j for j, c in enumerate(self.passages)})
        return out

    def counts(self) -> dict[str, int]:
        by_kind: dict[str, int] = {}
        for k in self.kinds.values():
            by_kind[k] = by_kind.get(k, 0) + 1
        return {
            "phrase_nodes": len(self.phrases),
            "passage_nodes": len(self.passages),
            **{f"{k}_edges": v for k, v in sorted(by_kind.items())},
        }


def passage_key(chunk_id: str) -> str:
    return f"chunk:{chunk_id}"


def build_graph(
    chunk_triples: dict[str, list[tuple[str, str, str]]], synonyms: Iterable[tuple[str, str, float]]
) -> HippoGraph:
    """The graph of `chunk_triples` (chunk id -> its processed triples, in corpus order) with the
    synonym edges `(phrase, neighbour, cosine)` the corpus keeps (engine/core/phrases.py's rules);
    a synonym edge naming a phrase this graph does not hold is left out."""
    stats: dict[tuple[str, str], float] = {}
    kinds: dict[tuple[str, str], str] = {}
    phrase_chunks: dict[str, set[str]] = {}
    for cid, triples in chunk_triples.items():  # add_fact_edges
        ents: set[str] = set()
        for s, _, o in triples:
            for edge in ((s, o), (o, s)):
                stats[edge] = stats.get(edge, 0.0) + 1
                kinds[edge] = "fact"
            ents.update((s, o))
        for e in ents:
            phrase_chunks.setdefault(e, set()).add(cid)
    for cid, triples in chunk_triples.items():  # add_passage_edges
        for e in {x for s, _, o in triples for x in (s, o)}:
            stats[(passage_key(cid), e)] = 1.0
            kinds[(passage_key(cid), e)] = "passage"
    for a, b, score in synonyms:  # add_synonymy_edges: the cosine overwrites a fact edge's count
        if a in phrase_chunks and b in phrase_chunks:
            stats[(a, b)] = score
            kinds[(a, b)] = "synonym"
    phrases = sorted(phrase_chunks)  # np.unique order
    g = HippoGraph(phrases, list(chunk_triples), phrase_chunks, stats, kinds)
    g.adjacency = adjacency(g)
    return g


def adjacency(g: HippoGraph) -> sparse.csr_matrix:
    """Symmetric weighted adjacency: every (a, b) of `stats` added both ways (self loops dropped)."""
    idx = g.index()
    rows, cols, vals = [], [], []
    for (a, b), w in g.stats.items():
        if a == b or a not in idx or b not in idx:
            continue
        rows += [idx[a], idx[b]]
        cols += [idx[b], idx[a]]
        vals += [w, w]
    return sparse.csr_matrix((vals, (rows, cols)), shape=(g.n, g.n), dtype=np.float64)


def phrase_seeds(g: HippoGraph, kept: list[tuple[tuple[str, str, str], float]], link_top_k: int) -> dict[str, float]:
    """Phrase reset weights from the kept facts ((s, p, o), normalized score): a phrase gets its
    facts' scores each divided by the number of chunks it occurs in, averaged over its facts; only
    the `link_top_k` heaviest phrases stay (`graph_search_with_fact_entities`, `get_top_k_weights`)."""
    total: dict[str, float] = {}
    occurs: dict[str, int] = {}
    for (s, _, o), score in kept:
        for phrase in (s.lower(), o.lower()):
            if phrase not in g.phrase_chunks:
                continue
            n = len(g.phrase_chunks[phrase])
            total[phrase] = total.get(phrase, 0.0) + (score / n if n else score)
            occurs[phrase] = occurs.get(phrase, 0) + 1
    weights = {p: total[p] / occurs[p] for p in total}
    top = sorted(weights.items(), key=lambda x: x[1], reverse=True)[:link_top_k]
    return dict(top)


def reset_vector(g: HippoGraph, phrase_w: dict[str, float], passage_w: dict[str, float]) -> np.ndarray:
    idx = g.index()
    r = np.zeros(g.n)
    for p, w in phrase_w.items():
        r[idx[p]] += w
    for cid, w in passage_w.items():
        r[idx[passage_key(cid)]] += w
    return np.where(np.isnan(r) | (r < 0), 0.0, r)


def personalized_pagerank(
    adj: sparse.csr_matrix, reset: np.ndarray, damping: float = 0.5, tol: float = 1e-12, max_iter: int = 10_000
) -> np.ndarray:
    """Scores summing to 1: p = (1 - d) r + d (W D^-1 p + dangling mass * r), r the normalized reset."""
    total = float(reset.sum())
    if total <= 0:
        raise ValueError("Personalized PageRank needs a reset vector with positive weight")
    r = reset / total
    deg = np.asarray(adj.sum(axis=1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    walk = (adj.T.multiply(inv)).tocsr()  # column j spread over j's neighbours by edge weight
    dangling = deg == 0
    p = r.copy()
    for _ in range(max_iter):
        nxt = damping * (walk @ p + p[dangling].sum() * r) + (1 - damping) * r
        if np.abs(nxt - p).sum() < tol:
            p = nxt
            break
        p = nxt
    return p / p.sum()
