"""HNSW parameters and deletion by tombstones (the `auto` index of large corpora, issue 30).

An HNSW graph cannot drop a node: faiss raises on `remove_ids`. Rebuilding the graph on every
document delete would cost minutes at a million vectors, so a deleted vector becomes a tombstone:
its slot in the id map (`IndexIDMap2.id_map`) is set to -1. Search results then carry -1 in that
slot, which every caller already skips as "no hit"; searches ask for more neighbours than wanted
while tombstones exist, so a user still gets k live ones. Tombstones live in the id map, so the
index file keeps them with no format change, and a reopened index still hides its deleted vectors.
Past `HNSW_MAX_DEAD_SHARE` of the graph the corpus rebuilds it from the stored vectors instead
(tombstones still cost search work: the graph walks through them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: graph degree: M 32 is faiss's recommendation for 384-d text vectors (recall on real text in
#: docs/scaling.md); memory 2 x M x 4 bytes a vector on top of its 1.5 KB
HNSW_M = 32
#: candidate list while building: higher makes a better graph, built more slowly (40, faiss's
#: default: a million vectors built in 18 minutes on one shared core, docs/scaling.md)
HNSW_EF_CONSTRUCTION = 40
#: candidate list while searching a graph of under 100k vectors, chosen on real MiniLM vectors for
#: recall@10 >= 0.95 against exact search (bench/real_recall.py, docs/scaling.md: 0.991 at 32.5k,
#: 0.982 at 100k; efSearch 32 gave 0.963 at 32.5k)
HNSW_EF_SEARCH = 96
#: (from n vectors, efSearch): a bigger graph needs a longer candidate list for the same recall. At a
#: fixed efSearch the share of true neighbours missed grows ~1.4-1.6x per doubling of n (real text,
#: 100k -> 228k: efSearch 96 0.982 -> 0.969, 192 0.992 -> 0.989, 256 0.996 -> 0.994), so 96 would
#: give ~0.92 at a million and 256 ~0.99 (projected). Set from the graph's size on load and after adds.
HNSW_EF_SEARCH_STEPS = ((0, HNSW_EF_SEARCH), (100_000, 192), (400_000, 256))


def ef_search_for(n: int) -> int:
    """The efSearch of a graph of `n` vectors (HNSW_EF_SEARCH_STEPS)."""
    return max(ef for at, ef in HNSW_EF_SEARCH_STEPS if n >= at)


#: a graph whose tombstones pass this share of its nodes is rebuilt (by the corpus) on the next delete
HNSW_MAX_DEAD_SHARE = 0.1
#: appends to an HNSW index are saved as a delta up to this share of it: a load inserts the delta's
#: vectors into the graph (~1 ms each at a million), so it is kept smaller than flat's and IVF's
HNSW_DELTA_SHARE = 1 / 64


def new_index(dim: int):
    """An empty HNSW graph (inner product) under an id map that keeps reverse ids, for `get`."""
    import faiss

    base = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    base.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    base.hnsw.efSearch = HNSW_EF_SEARCH
    return faiss.IndexIDMap2(base)


def fit_search(index) -> None:
    """Set the graph's efSearch for its size (HNSW_EF_SEARCH_STEPS): on load, and after adds grow it."""
    import faiss

    graph: Any = faiss.downcast_index(index.index)  # IndexHNSWFlat (faiss's stubs say Index)
    ef = ef_search_for(int(index.ntotal))
    if graph.hnsw.efSearch != ef:
        graph.hnsw.efSearch = ef


def prepare_loaded(index) -> int:
    """Set the search parameter on a loaded graph (a file saved with another one searches with
    this one) and return its tombstone count."""
    fit_search(index)
    return int(np.count_nonzero(id_map(index) < 0))


def id_map(index) -> np.ndarray:
    import faiss

    return faiss.vector_to_array(index.id_map).astype(np.int64)


def bury(index, ids: np.ndarray, dead: int) -> int:
    """Tombstone `ids` (unknown ids ignored); return the new tombstone count. Raises
    NotImplementedError when the graph would pass HNSW_MAX_DEAD_SHARE: the corpus rebuilds it."""
    import faiss

    slots = id_map(index)
    hit = np.isin(slots, np.asarray(ids, np.int64)) & (slots >= 0)
    n_hit = int(hit.sum())
    if not n_hit:
        return dead
    if dead + n_hit > HNSW_MAX_DEAD_SHARE * len(slots):
        raise NotImplementedError("too many deleted vectors in the HNSW graph: it is rebuilt")
    slots[hit] = -1
    faiss.copy_array_to_vector(slots, index.id_map)
    index.construct_rev_map()  # the buried ids no longer resolve (`get` raises KeyError for them)
    return dead + n_hit


def search(index, queries: np.ndarray, k: int, dead: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k live neighbours: with tombstones, ask for k + dead (or more, doubling, when a walk
    met more tombstones than live nodes) and keep the first k live hits of each row."""
    total = int(index.ntotal)
    live = total - dead
    if not dead:
        return index.search(queries, min(k, total))
    want = min(k, live)
    ask = min(total, k + min(dead, 4 * k))
    while True:
        scores, ids = index.search(queries, ask)
        if ask >= total or bool(np.all((ids >= 0).sum(axis=1) >= want)):
            break
        ask = min(total, 2 * ask)
    out_s = np.zeros((len(queries), want), np.float32)
    out_i = -np.ones((len(queries), want), np.int64)
    for row, (s, i) in enumerate(zip(scores, ids)):
        keep = np.flatnonzero(i >= 0)[:want]
        out_s[row, : len(keep)], out_i[row, : len(keep)] = s[keep], i[keep]
    return out_s, out_i
