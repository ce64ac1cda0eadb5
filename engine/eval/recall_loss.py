"""Where recall was lost, per question, read from a method's trace.

Every gold supporting unit (paragraph or sentence) of a question ends in exactly one bucket:
`found` (it is in the evidence the method gave the LLM) or one loss reason. The reasons follow
the method's own pipeline, so the table says which step to fix:

KG2RAG (the reference is its own seed ranking, plain dense retrieval):
  * a gold **seed** that did not reach the context: it states no triplet and the fill rule did
    not add it back (or, as a one-chunk tree, it ranked too low); the spanning tree pruned every
    edge it stated; its tree was cut to fit k; its tree was skipped for not fitting k; its tree
    ranked below the selected ones (a self-loop component apart);
  * a gold chunk **reached by the expansion** but not selected;
  * a gold unit **never a candidate** (neither seed nor expansion).
  Gold units in the context that were not seeds count as `gained by the expansion`.

T2RAG: a gold unit found in no round is `never retrieved`; `events` count the rounds that
added no new chunk, queries whose walked propositions reached no gold, and a decomposition
that gave no query triplet.

HippoRAG 2: a gold unit not in the top `qa_top_k` passages stated a retrieved fact the
recognition-memory filter dropped, stated a kept fact (a seed's passage) but PPR ranked it lower, or
stated no retrieved fact; `events` count questions whose filter kept nothing (dense fallback).
Other methods: `not retrieved`. Traces are read by attribute name and defensively, so a trace
that lacks a field (an older save, another method version) still yields its buckets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.core.types import Question
from engine.eval.metrics import PARAGRAPH, chunk_units, gold_units

NOT_RETRIEVED = "not retrieved"
METHOD_ERROR = "the method failed on the question"
SEED_NO_TRIPLET = "gold seed: no triplet, fill rule did not add it"
SEED_PRUNED = "gold seed: spanning tree pruned its edges"
SEED_CUT = "gold seed: cut from an overflowing tree"
SEED_SKIPPED = "gold seed: its tree skipped (too big for k)"
SEED_RANKED_LOW = "gold seed: its tree ranked below the selected ones"
SEED_SELF_LOOP = "gold seed: self-loop component not selected"
SEED_ALONE_LOW = "gold seed: no triplet, its one-chunk tree ranked below the selected ones"
EXPANDED_NOT_SELECTED = "reached by the expansion, not selected"
NEVER_CANDIDATE = "never a candidate (not a seed, not reached)"
GAINED = "gained by the expansion"
T2_NEVER = "never retrieved in any round"
EV_NO_NEW_CHUNK = "rounds that added no new chunk"
EV_QUERY_NO_GOLD = "queries that reached no gold"
EV_DECOMPOSITION = "decompositions with no query triplet"
HR_FACT_DROPPED = "stated a retrieved fact the filter dropped"
HR_FACT_KEPT_LOW = "stated a kept fact, PPR ranked it below the context"
HR_NO_FACT = "stated no retrieved fact, PPR ranked it below the context"
EV_DENSE_FALLBACK = "no fact kept: ranked by dense retrieval"

KG2RAG_REASONS = (
    SEED_NO_TRIPLET,
    SEED_PRUNED,
    SEED_CUT,
    SEED_SKIPPED,
    SEED_RANKED_LOW,
    SEED_SELF_LOOP,
    SEED_ALONE_LOW,
    EXPANDED_NOT_SELECTED,
    NEVER_CANDIDATE,
)


@dataclass
class RecallLoss:
    """One question's gold units by bucket (`lost`: reason -> units) plus method events."""

    method: str
    unit: str
    n_gold: int = 0
    found: int = 0
    gained: int = 0  # KG2RAG: found units that were not seeds
    lost: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    v = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return default if v is None else v


def _units_of(corpus: Any, chunk_ids: Iterable[str], unit: str, by_doc: bool = False) -> dict[str, list]:
    ids = list(dict.fromkeys(chunk_ids))
    return {c.chunk_id: chunk_units(c, unit, by_doc) for c in (corpus.get_chunks(ids) if ids else [])}


def recall_loss(
    method: str, trace: Any, question: Question, corpus: Any, evidence_chunk_ids: list[str], unit: str = PARAGRAPH
) -> RecallLoss | None:
    """The buckets of one question's gold units; None when it has no gold at this unit."""
    gold = gold_units(question, unit)
    if not gold:
        return None
    out = RecallLoss(method=method, unit=unit, n_gold=len(gold))
    units = _units_of(corpus, evidence_chunk_ids, unit, bool(question.supporting_docs))
    found = {u for cid in evidence_chunk_ids for u in units.get(cid, [])} & gold
    out.found = len(found)
    missing = gold - found
    if method == "kg2rag" and trace is not None:
        _kg2rag(out, trace, corpus, unit, found, missing, bool(question.supporting_docs))
    elif method == "t2rag" and trace is not None:
        _t2rag(out, trace, corpus, unit, gold, missing, bool(question.supporting_docs))
    elif method == "hipporag2" and trace is not None:
        _hipporag2(out, trace, corpus, unit, missing, bool(question.supporting_docs))
    elif missing:
        out.lost[NOT_RETRIEVED] = len(missing)
    return out


def failed_recall_loss(method: str, question: Question, unit: str = PARAGRAPH) -> RecallLoss | None:
    """An errored question: every gold unit is lost to the error (None when it has no gold)."""
    gold = gold_units(question, unit)
    return RecallLoss(method=method, unit=unit, n_gold=len(gold), lost={METHOD_ERROR: len(gold)}) if gold else None


def _add(d: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        d[key] = d.get(key, 0) + n


def _hipporag2(out: RecallLoss, tr: Any, corpus: Any, unit: str, missing: set, by_doc: bool = False) -> None:
    def fact_chunks(facts: Any) -> list[str]:
        return [c for f in facts for c in _get(f, "chunk_ids", [])]

    kept, retrieved = fact_chunks(_get(tr, "facts_kept", [])), fact_chunks(_get(tr, "facts_retrieved", []))
    units = _units_of(corpus, kept + retrieved, unit, by_doc)
    kept_units = {u for c in kept for u in units.get(c, [])}
    retrieved_units = {u for c in retrieved for u in units.get(c, [])}
    if _get(tr, "fallback", ""):
        _add(out.events, EV_DENSE_FALLBACK)
    for u in missing:
        _add(out.lost, HR_FACT_KEPT_LOW if u in kept_units else HR_FACT_DROPPED if u in retrieved_units else HR_NO_FACT)


def _kg2rag(out: RecallLoss, tr: Any, corpus: Any, unit: str, found: set, missing: set, by_doc: bool = False) -> None:
    seeds = [_get(s, "chunk_id") for s in _get(tr, "seeds", [])]
    n_trip = {_get(s, "chunk_id"): _get(s, "n_triplets", 0) for s in _get(tr, "seeds", [])}
    added = [_get(c, "chunk_id") for h in _get(tr, "hops", []) for c in _get(h, "chunks_added", [])]
    added += [_get(c, "chunk_id") for c in _get(tr, "completed", [])]  # the paper preset's title completion
    trees = list(_get(tr, "trees", []))  # rank order
    units = _units_of(corpus, seeds + added, unit, by_doc)
    seed_units = {u for c in seeds for u in units.get(c, [])}
    out.gained = len(found - seed_units)
    for u in sorted(missing, key=str):
        seed_holders = [c for c in seeds if u in units.get(c, [])]
        if seed_holders:
            _add(out.lost, _seed_reason(seed_holders[0], n_trip, trees))
        elif any(u in units.get(c, []) for c in added):
            _add(out.lost, EXPANDED_NOT_SELECTED)
        else:
            _add(out.lost, NEVER_CANDIDATE)


def _seed_reason(cid: str, n_trip: dict[str, int], trees: list) -> str:
    """Why seed chunk `cid` is not in the context: the first tree (in rank order) holding it decides."""
    tree = next((t for t in trees if cid in _get(t, "chunk_ids", [])), None)
    if tree is None:
        return SEED_NO_TRIPLET if not n_trip.get(cid) else SEED_PRUNED
    if cid in _get(tree, "cut_chunk_ids", []):
        return SEED_CUT
    if _get(tree, "kind", "tree") == "self-loops":
        return SEED_SELF_LOOP
    if str(_get(tree, "note", "")).startswith("skipped"):
        return SEED_SKIPPED
    if _get(tree, "kind", "tree") == "seed":
        return SEED_ALONE_LOW
    return SEED_RANKED_LOW


def _t2rag(out: RecallLoss, tr: Any, corpus: Any, unit: str, gold: set, missing: set, by_doc: bool = False) -> None:
    decomposition = _get(tr, "decomposition")
    if decomposition is not None and not _get(decomposition, "triplets", []):
        _add(out.events, EV_DECOMPOSITION)
    rounds = list(_get(tr, "rounds", []))
    every = [_get(c, "chunk_id") for r in rounds for c in _get(r, "chunks", [])]
    every += [c for r in rounds for w in _get(r, "walked", []) for c in _get(w, "chunk_ids", [])]
    units = _units_of(corpus, every, unit, by_doc)
    seen: set[str] = set()
    for r in rounds:
        shown = {_get(c, "chunk_id") for c in _get(r, "chunks", [])}
        if not shown - seen:
            _add(out.events, EV_NO_NEW_CHUNK)
        seen |= shown
        hits: dict[int, set] = {}
        for w in _get(r, "walked", []):
            got = {u for c in _get(w, "chunk_ids", []) for u in units.get(c, [])} & gold
            hits.setdefault(int(_get(w, "query_index", 0)), set()).update(got)
        for qi in range(len(_get(r, "queries", []))):
            if not hits.get(qi):
                _add(out.events, EV_QUERY_NO_GOLD)
    if missing:
        out.lost[T2_NEVER] = len(missing)


# --- aggregation over a run --------------------------------------------------------------------


@dataclass
class RecallLossSummary:
    """One method's buckets over a run: units and questions per reason."""

    method: str
    unit: str = PARAGRAPH
    n_questions: int = 0  # questions with gold and a trace-derived record
    n_gold: int = 0
    found: int = 0
    gained: int = 0
    lost_units: dict[str, int] = field(default_factory=dict)
    lost_questions: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)  # summed counts
    event_questions: dict[str, int] = field(default_factory=dict)


def summarize_recall_loss(method: str, items: Iterable[RecallLoss | None], unit: str = PARAGRAPH) -> RecallLossSummary:
    s = RecallLossSummary(method=method, unit=unit)
    for x in items:
        if x is None:
            continue
        s.n_questions += 1
        s.n_gold += x.n_gold
        s.found += x.found
        s.gained += x.gained
        for k, v in x.lost.items():
            _add(s.lost_units, k, v)
            _add(s.lost_questions, k, 1 if v else 0)
        for k, v in x.events.items():
            _add(s.events, k, v)
            _add(s.event_questions, k, 1 if v else 0)
    return s


def recall_loss_markdown(summaries: list[RecallLossSummary]) -> list[str]:
    """The "where recall was lost" table: one row per (method, reason), biggest loss first."""
    rows = []
    for s in summaries:
        if not s.n_questions:
            continue
        rows.append(f"| {s.method} | found in the context | {s.found} of {s.n_gold} | {s.n_questions} |")
        if s.gained:
            rows.append(f"| {s.method} | {GAINED} (included above) | {s.gained} | |")
        for k, v in sorted(s.lost_units.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(f"| {s.method} | lost: {k} | {v} | {s.lost_questions.get(k, 0)} |")
        for k, v in sorted(s.events.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(f"| {s.method} | {k} | {v} | {s.event_questions.get(k, 0)} |")
    if not rows:
        return []
    unit = summaries[0].unit
    return [
        f"Where recall was lost (count = gold {unit}s, or events for the T2RAG rows without 'lost'; "
        "questions = how many questions it touched):",
        "",
        "| method | where | count | questions |",
        "|---|---|---|---|",
        *rows,
    ]
