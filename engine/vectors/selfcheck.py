"""How well an approximate index finds what exact search finds, on the index's own vectors.

`corpus show` prints it next to the index kind: recall measured on the user's own corpus at its
own size, not a figure from another data set. Some of the stored vectors are the queries; the exact
answer is a blockwise scan of every stored vector (memory: one block), the index's answer its own
search. Each query is a stored vector moved a little off itself (below); a hit scoring as high as
exact search's tenth counts (duplicate texts make ties).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

_BLOCK = 65536


def _blocks(store) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(ids, vectors) of everything stored, a block at a time (HNSW tombstones left out)."""
    import faiss

    if store.kind == "ivf":
        yield from store._ivf_lists()
        return
    slots = faiss.vector_to_array(store._index.id_map).astype(np.int64)
    inner = faiss.downcast_index(store._index.index)
    for at in range(0, len(slots), _BLOCK):
        part = slots[at : at + _BLOCK]
        vecs = inner.reconstruct_n(at, len(part)).reshape(len(part), store.dim)
        live = part >= 0
        yield part[live], vecs[live]


def sampled_recall(store, queries: int = 50, k: int = 10, seed: int = 0) -> float | None:
    """Recall@k of `store`'s search against exact search, with `queries` of its own vectors as the
    queries; 1.0 for an exact (`flat`) index, None for an empty one."""
    if store.kind == "flat":
        return 1.0
    ids = store.ids()
    if not len(ids):
        return None
    pick = np.random.default_rng(seed).choice(ids, min(queries, len(ids)), replace=False)
    # near a stored vector, not on it: a question lands between the stored texts, and a stored vector
    # sits in its own cell or graph neighbourhood, which would make the check look better than search is
    q = store.get(pick)
    q = q + np.random.default_rng(seed).normal(scale=0.3 / np.sqrt(store.dim), size=q.shape).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    k = min(k, len(ids))
    best_s = np.full((len(q), k), -np.inf, np.float32)
    best_i = -np.ones((len(q), k), np.int64)
    for block_ids, vecs in _blocks(store):
        scores = q @ vecs.T
        both_s = np.concatenate([best_s, scores], axis=1)
        both_i = np.concatenate([best_i, np.broadcast_to(block_ids, scores.shape)], axis=1)
        top = np.argsort(-both_s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(both_s, top, 1), np.take_along_axis(both_i, top, 1)
    scores, got = store.search(q, k)
    # a hit tied with exact search's k-th score counts (equal vectors: either is a right answer)
    tied = scores >= best_s[:, -1:] - 1e-5
    return float(np.mean([(np.isin(g, e) | t).sum() / k for g, e, t in zip(got, best_i, tied & (got >= 0))]))
