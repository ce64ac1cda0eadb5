"""What the evaluation reads from a T2RAG trace: where recall was lost, and the facts its failure
labels come from (engine/eval/failures.py labels decomposition / retrieval / filling / synthesis).

Recall: a gold unit found in no round is `never retrieved`; `events` count the rounds that added
no new chunk, queries whose walked propositions reached no gold, and a decomposition that gave no
query triplet. Traces are read by attribute name and defensively (`hooks.get`), so an older save
or a plain dict still yields its buckets.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.methods.hooks import LossReport, PipelineFacts, UnitsOf, get
from engine.reasoners.base import is_placeholder

NEVER = "never retrieved in any round"
NO_NEW_CHUNK = "rounds that added no new chunk"
QUERY_NO_GOLD = "queries that reached no gold"
NO_QUERY_TRIPLET = "decompositions with no query triplet"


def recall_loss(tr: Any, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
    out = LossReport()
    decomposition = get(tr, "decomposition")
    if decomposition is not None and not get(decomposition, "triplets", []):
        out.count(NO_QUERY_TRIPLET)
    rounds = list(get(tr, "rounds", []))
    every = [get(c, "chunk_id") for r in rounds for c in get(r, "chunks", [])]
    every += [c for r in rounds for w in get(r, "walked", []) for c in get(w, "chunk_ids", [])]
    units = units_of(every)
    seen: set[str] = set()
    for r in rounds:
        shown = {get(c, "chunk_id") for c in get(r, "chunks", [])}
        if not shown - seen:
            out.count(NO_NEW_CHUNK)
        seen |= shown
        hits: dict[int, set] = {}
        for w in get(r, "walked", []):
            got = {u for c in get(w, "chunk_ids", []) for u in units.get(c, [])} & gold
            hits.setdefault(int(get(w, "query_index", 0)), set()).update(got)
        for qi in range(len(get(r, "queries", []))):
            if not hits.get(qi):
                out.count(QUERY_NO_GOLD)
    out.lose(NEVER, len(missing))
    return out


def _triplet_text(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, (list, tuple)):
        return " ".join(str(x) for x in t)
    parts = [get(t, "subject"), get(t, "predicate"), get(t, "object")]
    return " ".join(str(p) for p in parts if p is not None)


def _has_placeholder(t: Any) -> bool:
    if isinstance(t, (list, tuple)):
        return any(is_placeholder(str(x)) for x in t)
    parts = [get(t, "subject"), get(t, "predicate"), get(t, "object")]
    return any(is_placeholder(str(p)) for p in parts if p is not None)


def _chunk_ids(items: Iterable[Any]) -> list[str]:
    out = []
    for c in items or ():
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, (list, tuple)) and c:
            out.append(str(c[0]))  # (chunk_id, text) pairs
        else:
            cid = get(c, "chunk_id")
            if cid is None:
                cid = get(get(c, "chunk"), "chunk_id")
            if cid is not None:
                out.append(str(cid))
    return out


def failure_facts(trace: Any) -> PipelineFacts:
    """The four facts the failure labeler reads, from a T2RAG trace (dataclass or plain JSON dict)."""
    if trace is None:
        return PipelineFacts(None, None, None, None)
    decomp = get(trace, "decomposition")
    qts = get(decomp, "triplets") if decomp is not None else None
    n_qt = len(qts) if qts is not None else None
    if decomp is not None and get(decomp, "failure"):
        n_qt = 0  # nothing usable parsed: the rounds ran on the question alone
    rounds = get(trace, "rounds") or []
    has_rounds = get(trace, "rounds") is not None  # without rounds: the evidence ids stand in
    retrieved: list[str] = []
    for r in rounds:
        retrieved += _chunk_ids(get(r, "chunks") or ())
        for w in get(r, "walked") or ():
            retrieved += [str(c) for c in (get(w, "new_chunk_ids") or ())]
    final = get(rounds[-1], "state_after") if rounds else get(decomp, "state")
    open_left = None
    resolved = None
    if final is not None:
        open_left = len(get(final, "searchable") or []) + len(get(final, "fuzzy") or [])
        res = get(final, "resolved") or []
        resolved = tuple(_triplet_text(t) for t in res)
        open_left += sum(1 for t in res if _has_placeholder(t))
    return PipelineFacts(n_qt, tuple(retrieved) if has_rounds else None, open_left, resolved)
