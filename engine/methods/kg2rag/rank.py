"""KG2RAG step 6 without a cross-encoder: score each tree against the question from stored vectors.

The paper scores `cross_encoder(question, tree's triplet form)`. With no cross-encoder, encoding
each tree's text at question time would cost an embedder call per question and break the speed
target, so every score here reads vectors the corpus already holds:

* `max` / `mean` / `centroid`: the question's cosine with the tree's propositions (its best fact,
  their average, or the normalized mean proposition vector, closest to embedding the whole
  triplet form);
* `chunk-max` / `chunk-mean`: the similarity s(q, c) of the tree's chunks, the same score the
  seeds were picked by and the edges are weighted with;
* `text`: the question against the normalized mean of the tree's chunk vectors (an embedding of
  the tree's text form, approximated);
* `seed-sum`: the summed similarity of the seed chunks the tree holds (trees built around many
  good seeds first);
* `max+chunk`: the mean of `max` and `chunk-max` (the best fact and the best passage).

Measured in bench/retrieval_quality.py (docs/benchmarks.md, "Retrieval quality (issue 16)");
the best is `KG2RAGSettings.tree_score`'s default.
"""

from __future__ import annotations

import numpy as np

from engine.methods.kg2rag.graph import Tree

TREE_SCORES = ("max", "mean", "centroid", "chunk-max", "chunk-mean", "text", "seed-sum", "max+chunk")
_DESCRIBE = {
    "max": "the best cosine of its propositions",
    "mean": "the mean cosine of its propositions",
    "centroid": "cosine with its mean proposition vector",
    "chunk-max": "the best similarity of its chunks",
    "chunk-mean": "the mean similarity of its chunks",
    "text": "cosine with the mean vector of its chunks (its text form)",
    "seed-sum": "the summed similarity of the seed chunks it holds",
    "max+chunk": "the mean of its best proposition cosine and its best chunk similarity",
}


def tree_triplet_ids(t: Tree) -> list[int]:
    """The triplets a tree stands for: its kept edges, or its self-loops when only those exist."""
    edges = t.kept_edges if t.kept_edges else [p.edge for p in t.pruned_edges if t.kind == "self-loops"]
    return list(dict.fromkeys(e.triplet_id for e in edges if not e.is_question_link))


def describe(tree_score: str) -> str:
    return f"embedding cosine: {tree_score} = {_DESCRIBE[tree_score]} (no cross-encoder configured)"


def cosine_rank(
    trees: list[Tree],
    qvec: np.ndarray,
    corpus,
    tree_score: str,
    chunk_scores: dict[str, float],
    seed_scores: dict[str, float],
) -> str:
    """Set each tree's `rank_score` by `tree_score`; return the ranker's description for the trace."""
    if tree_score not in TREE_SCORES:
        raise ValueError(f"tree_score must be one of {', '.join(TREE_SCORES)}, got {tree_score!r}")
    if tree_score == "max+chunk":
        cosine_rank(trees, qvec, corpus, "max", chunk_scores, seed_scores)
        facts = [t.rank_score for t in trees]
        cosine_rank(trees, qvec, corpus, "chunk-max", chunk_scores, seed_scores)
        for t, f in zip(trees, facts):
            if t.rank_score is not None and f is not None:
                t.rank_score = (t.rank_score + f) / 2
    elif tree_score in ("max", "mean", "centroid"):
        tids = sorted({tid for t in trees for tid in tree_triplet_ids(t)})
        vecs = np.asarray(corpus.proposition_vectors(tids), dtype=np.float32) if tids else np.zeros((0, 1))
        row = {tid: i for i, tid in enumerate(tids)}
        cos = vecs @ qvec if tids else np.zeros(0)
        for t in trees:
            idx = [row[tid] for tid in tree_triplet_ids(t)]
            if not idx:
                t.rank_score = None
            elif tree_score == "max":
                t.rank_score = float(cos[idx].max())
            elif tree_score == "mean":
                t.rank_score = float(cos[idx].mean())
            else:
                centroid = vecs[idx].mean(axis=0)
                t.rank_score = float(centroid @ qvec / (float(np.linalg.norm(centroid)) or 1.0))
    elif tree_score == "text":
        ids = sorted({c for t in trees for c in t.chunk_ids})
        vecs = np.asarray(corpus.chunk_vectors(ids), dtype=np.float32) if ids else np.zeros((0, 1))
        crow = {c: i for i, c in enumerate(ids)}
        for t in trees:
            if not t.chunk_ids:
                t.rank_score = None
                continue
            mean = vecs[[crow[c] for c in t.chunk_ids]].mean(axis=0)
            t.rank_score = float(mean @ qvec / (float(np.linalg.norm(mean)) or 1.0))
    else:
        for t in trees:
            if tree_score == "seed-sum":
                vals = [seed_scores[c] for c in t.chunk_ids if c in seed_scores]
                t.rank_score = float(sum(vals)) if t.chunk_ids else None
            else:
                vals = [chunk_scores[c] for c in t.chunk_ids if c in chunk_scores]
                agg = max if tree_score == "chunk-max" else (lambda xs: sum(xs) / len(xs))
                t.rank_score = float(agg(vals)) if vals else None
    return describe(tree_score)
