"""T2RAG's retrieval step (no LLM call): queries -> one global proposition pool -> a walk to k chunks.

Why a global pool: each searchable triplet asks for a different fact, and a per-query top-k would
spend the budget evenly even when one query's best hit is far stronger than another's. Merging all
candidates by their best score and walking down until `k` distinct source chunks are covered lets
the strongest evidence for any open triplet win the budget.

The corpus calls are batched: one `embed` for all queries and one `search_propositions` for all
vectors, so a round costs one encoder pass and one index search however many triplets are open.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engine.methods.t2rag import channels
from engine.methods.t2rag.channels import chunk_lists, fuse, walked_for
from engine.methods.t2rag.state import State, known_parts_query, strip_wh_words
from engine.methods.t2rag.trace import (
    RetrievalQuery,
    RoundTiming,
    ShownChunk,
    T2RAGSettings,
    WalkedProposition,
)
from engine.store.protocol import CorpusView


def build_queries(
    state: State, question: str, settings: T2RAGSettings, asked: set[str] | None = None
) -> list[RetrievalQuery]:
    """The round's queries: the searchable triplets not asked in an earlier round (`asked` holds
    the lower-cased texts already asked), plus the question minus its wh-words (`question_query`).
    With no new triplet query the round is a fallback round: the question alone, once, in the form
    the settings choose (wh-words removed with `question_query`, as the reference code asks it;
    else as typed). When every query was asked before, the same queries again (`retrieve` then skips
    chunks already shown, so the solver never sees the same evidence twice)."""
    asked = asked or set()
    queries: list[RetrievalQuery] = []
    seen: set[str] = set()

    def add(text: str, kind: str, tid: str = "", again: bool = False) -> None:
        key = text.strip().lower()
        if key and key not in seen and (again or key not in asked):
            seen.add(key)
            queries.append(RetrievalQuery(text.strip(), kind, tid))

    for t in state.searchable:
        add(known_parts_query(t), "triplet", t.id)
    if queries:
        if settings.question_query:
            add(strip_wh_words(question), "question_stripped", again=True)
        return queries
    # the paper's fallback: nothing new to search (all fuzzy, no triplet, or every searchable one
    # asked before). One query for the question, not the question and its stripped form: the two
    # find the same propositions, so a later fallback round re-showed the first round's chunks.
    fallback = (strip_wh_words(question) if settings.question_query else "") or question
    add(fallback, "question")
    if not queries:  # asked everything before: the same queries, over chunks not shown yet
        for t in state.searchable:
            add(known_parts_query(t), "triplet", t.id, again=True)
        add(fallback, "question", again=True)
    return queries


def is_fallback(queries: list[RetrievalQuery]) -> bool:
    """A round that asks the question instead of a triplet: it shows only chunks not shown before."""
    return any(q.kind == "question" for q in queries)


#: The lists fused into a round's chunks with `chunk_channel` (`ShownChunk.ranks`), in fusion order.
CHANNELS = ("walk", "dense", "bm25")


@dataclass
class RetrievalOutcome:
    queries: list[RetrievalQuery]
    pool_size: int = 0
    walked: list[WalkedProposition] = field(default_factory=list)
    chunks: list[ShownChunk] = field(default_factory=list)


def retrieve(
    corpus: CorpusView,
    queries: list[RetrievalQuery],
    settings: T2RAGSettings,
    seen_chunks: set[str],
    timing: RoundTiming,
    channel_texts: Sequence[str] = (),
) -> RetrievalOutcome:
    """Walk the global pool by descending best score until `settings.k` distinct chunks are covered.

    A proposition stated by several chunks covers all of them. The round shows exactly `k` chunks at
    most: when the last proposition would overflow the budget, only its first chunks are taken.
    With `skip_seen_chunks`, and always in a fallback round (the question asked again finds what
    an earlier round showed), chunks in `seen_chunks` do not count and are not shown, and a
    proposition whose chunks were all shown before is skipped.

    With `chunk_channel` (ours, `tuned`) and `channel_texts` (the question; later rounds add their
    triplet queries), the walk's chunks are fused with the dense and BM25 chunk searches of those
    texts (channels.py) and the round shows the fused top `k`; the searches leave out the chunks
    the walk skips.
    """
    out = RetrievalOutcome(queries=queries)
    if not queries:
        return out
    t0 = time.perf_counter()
    texts = [t for t in channel_texts if t.strip()] if settings.chunk_channel else []
    # one encoder pass for the round: the queries, and the chunk channel's texts
    vecs = corpus.embed([q.text for q in queries] + texts)
    cvecs, vecs = vecs[len(queries) :], vecs[: len(queries)]
    t1 = time.perf_counter()
    hits = corpus.search_propositions(vecs, settings.candidate_depth)
    t2 = time.perf_counter()
    timing.embed, timing.search = t1 - t0, t2 - t1
    best = _pool(hits)
    out.pool_size = len(best)
    skip = seen_chunks if settings.skip_seen_chunks or is_fallback(queries) else set()
    if not texts:
        out.walked, covered = _walk(corpus, best, settings.k, skip)
        ranks = {c: {"walk": i} for i, c in enumerate(covered, start=1)}
    else:
        # the walk goes deeper than k: its chunks are one of three lists fused into the round's k
        walked, walk_chunks = _walk(corpus, best, channels.CHANNEL_DEPTH, skip)
        lists = [walk_chunks, *chunk_lists(corpus, texts, cvecs, skip)]
        covered = fuse(lists, settings.k, (channels.WALK_WEIGHT, 1.0, 1.0), channels.FUSION_K)
        out.walked = walked_for(walked, covered)
        ranks = {c: {name: li.index(c) + 1 for name, li in zip(CHANNELS, lists) if c in li} for c in covered}
        timing.search = time.perf_counter() - t1
    for c in corpus.get_chunks(covered):
        out.chunks.append(ShownChunk(chunk_id=c.chunk_id, title=c.title, text=c.text, ranks=ranks[c.chunk_id]))
    timing.retrieve = time.perf_counter() - t0
    return out


def retrieve_round(
    corpus: CorpusView,
    question: str,
    index: int,
    state: State,
    settings: T2RAGSettings,
    asked: set[str],
    seen_chunks: set[str],
    timing: RoundTiming,
) -> RetrievalOutcome:
    """Round `index`'s retrieval: its queries (`asked`: query texts of earlier rounds, updated; a round
    that asks nothing new skips the chunks shown before) and `retrieve`. The chunk channel searches
    the question; from round 2 also the round's triplet queries, which name what the bindings found
    (the question does not)."""
    queries = build_queries(state, question, settings, asked)
    repeat = all(q.text.lower() in asked for q in queries if q.kind != "question_stripped")
    texts = [question] + ([q.text for q in queries if q.kind == "triplet"] if index > 1 else [])
    got = retrieve(
        corpus, queries, replace(settings, skip_seen_chunks=True) if repeat else settings, seen_chunks, timing, texts
    )
    asked.update(q.text.lower() for q in queries)
    return got


def _pool(hits: list[list[tuple[int, float]]]) -> dict[int, tuple[float, int]]:
    """The global pool: triplet id -> (best score over the queries, the query that gave it); a
    proposition with no positive similarity to any query is left out."""
    best: dict[int, tuple[float, int]] = {}
    for qi, row in enumerate(hits):
        for tid, score in row:
            tid, score = int(tid), float(score)
            # no similarity to any query is no evidence (the reference walk skips it too)
            if tid < 0 or score <= 0.0:
                continue
            if tid not in best or score > best[tid][0]:
                best[tid] = (score, qi)
    return best


def _walk(
    corpus: CorpusView, best: dict[int, tuple[float, int]], k: int, skip: set[str]
) -> tuple[list[WalkedProposition], list[str]]:
    """Propositions by descending score (ties by id, so a run is reproducible) until their chunks
    cover `k` distinct chunks not in `skip`; returns the walked propositions and the covered chunk ids."""
    order = sorted(best, key=lambda tid: (-best[tid][0], tid))
    walked: list[WalkedProposition] = []
    covered: list[str] = []
    covered_set: set[str] = set()
    batch = max(4 * k, 16)
    i = 0
    # triplets are fetched in slices of the walk order: the walk usually ends within the first few
    while i < len(order) and len(covered) < k:
        ids = order[i : i + batch]
        i += batch
        by_id = {t.triplet_id: t for t in corpus.get_triplets(ids)}
        for tid in ids:
            trip = by_id.get(tid)
            if trip is None:
                continue
            chunk_ids = list(dict.fromkeys(trip.chunk_ids))
            eligible = [c for c in chunk_ids if c not in skip]
            if not eligible:
                continue
            new = []
            for c in eligible:
                if c not in covered_set and len(covered) < k:
                    covered.append(c)
                    covered_set.add(c)
                    new.append(c)
            score, qi = best[tid]
            walked.append(
                WalkedProposition(
                    triplet_id=tid,
                    text=trip.proposition,
                    score=score,
                    query_index=qi,
                    chunk_ids=chunk_ids,
                    new_chunk_ids=new,
                )
            )
            if len(covered) >= k:
                break
    return walked, covered


def chunk_for_solver(c: ShownChunk) -> str:
    """Chunk text with its title in front (a paragraph often names its subject only in the title)."""
    if c.title and not c.text.lstrip().startswith(c.title):
        return f"{c.title}\n{c.text}"
    return c.text
