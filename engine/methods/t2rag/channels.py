"""T2RAG `tuned`: a chunk channel beside the proposition walk (issue 42).

The paper's round shows the chunks its proposition walk reaches first (retrieval.py). A proposition
is one atomic fact an extractor chose to state, so a chunk whose facts the extractor missed, or whose
facts read like every other chunk's ("X born in Y"), is reached late or never, while a search of the
chunks' own text finds it. On every set we could build (docs/benchmarks.md, "Issue 42") the walk's
first five chunks held less gold than dense or BM25 retrieval of the question.

With `chunk_channel` on, a round's chunks come from three ranked lists fused by reciprocal rank: the
walk's chunks in walk order, and the dense and the BM25 (the corpus's full-text index) chunk search of
the channel's texts. Round 1 searches the question as typed; from round 2 also the round's triplet
queries, which name the values the bindings found (the bridge entity the question does not name).
The round still shows `k` chunks, so the solver's budget is the paper's, and the walk still chooses
the propositions the solver reads (those stating a shown chunk), so placeholders, bindings and
their sources work as before. The searches leave out what the walk leaves out (seen chunks in a
fallback round): a chunk shown in round 1 that answers the hop round 2 opens is shown again with it.

The constants, and why:

* `FUSION_K` = 5, not the 60 of the hybrid baseline: only the fused top `k` (5) are shown, so the
  order must be decided by each list's first few entries; with 60, a chunk ranked 20th in two lists
  outranks the top of the third, and the walk's tail crowds out the best chunks of the searches.
* `WALK_WEIGHT` = 0.8: the walk ranks a chunk by one extracted fact, the searches by its whole text,
  so the walk's vote counts a little less; its top chunk still ranks between a search's 2nd and 3rd.
* `CHANNEL_DEPTH` = 30 chunks per list, the hybrid baseline's candidate depth.

The two numbers were chosen on the sets they are measured on (docs/benchmarks.md, "Issue 42"): a
sweep there shows 0.75-0.85 measure alike, while 0.6 or 1.0, or a constant of 3 or 10, each drop one
set below dense or BM25 retrieval by one or a few gold passages (60 drops most sets).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.methods.t2rag.trace import WalkedProposition
from engine.store.protocol import CorpusView

#: Chunks taken from each list before fusion (the hybrid baseline's candidate depth).
CHANNEL_DEPTH = 30
#: The reciprocal-rank constant: score = sum over lists of weight / (FUSION_K + rank).
FUSION_K = 5
#: The walk's weight in the fusion (each chunk search counts 1).
WALK_WEIGHT = 0.8


def chunk_lists(
    corpus: CorpusView, texts: Sequence[str], vecs: np.ndarray, skip: set[str], depth: int = CHANNEL_DEPTH
) -> list[list[str]]:
    """The dense and the BM25 chunk ranking of `texts` (`vecs`: their vectors), best first, `depth`
    each, chunks in `skip` left out. With several texts, each list is a pool like the walk's: a
    chunk ranks by its best score over the texts (a BM25 score relative to that text's best)."""
    from engine.methods.baselines import bm25_index

    n = depth + len(skip)
    dense: dict[str, float] = {}
    for row in corpus.search_chunks(vecs, n):
        for cid, score in row:
            dense[cid] = max(dense.get(cid, score), score)
    sparse: dict[str, float] = {}
    index = bm25_index(corpus)
    for text in texts:
        hits = index.search(text, n)
        for cid, score in hits:
            rel = score / hits[0][1] if hits[0][1] > 0 else 0.0
            sparse[cid] = max(sparse.get(cid, rel), rel)
    # sorted() is stable: equal scores keep the order they were first found in
    return [[c for c in sorted(pool, key=lambda c: -pool[c]) if c not in skip][:depth] for pool in (dense, sparse)]


def fuse(
    rankings: Sequence[Sequence[str]], k: int, weights: Sequence[float] = (), constant: int = FUSION_K
) -> list[str]:
    """The first `k` chunks of the rankings fused by reciprocal rank (`weights`: one per ranking,
    default 1); ties keep first appearance (the walk's list comes first, so it wins a tie)."""
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if i < len(weights) else 1.0
        for rank, cid in enumerate(ranking, start=1):
            scores[cid] = scores.get(cid, 0.0) + weight / (constant + rank)
            first.setdefault(cid, len(first))
    return sorted(scores, key=lambda c: (-scores[c], first[c]))[:k]


def walked_for(walked: list[WalkedProposition], shown: list[str]) -> list[WalkedProposition]:
    """The walked propositions that state a shown chunk, in walk order, each with the shown chunks
    it was first to state as its `new_chunk_ids`: what the solver reads beside the chunks."""
    want = set(shown)
    covered: set[str] = set()
    out = []
    for w in walked:
        mine = [c for c in w.chunk_ids if c in want]
        if not mine:
            continue
        new = [c for c in mine if c not in covered]
        covered.update(new)
        out.append(
            WalkedProposition(w.triplet_id, w.text, w.score, w.query_index, list(w.chunk_ids), new_chunk_ids=new)
        )
        if covered == want:
            break
    return out
