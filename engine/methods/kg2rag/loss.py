"""Where KG2RAG lost a gold unit, read from its trace (the eval's "where recall was lost" table).

The reference is its own seed ranking, plain dense retrieval:

* a gold **seed** that did not reach the context: it states no triplet and the fill rule did not
  add it back (or, as a one-chunk tree, it ranked too low); the spanning tree pruned every edge it
  stated; its tree was cut to fit k; its tree was skipped for not fitting k; its tree ranked below
  the selected ones (a self-loop component apart);
* a gold chunk **reached by the expansion** but not selected;
* a gold unit **never a candidate** (neither seed nor expansion).

Gold units in the context that were not seeds count as `gained` by the expansion.
"""

from __future__ import annotations

from typing import Any

from engine.methods.hooks import LossReport, UnitsOf, get

SEED_NO_TRIPLET = "gold seed: no triplet, fill rule did not add it"
SEED_PRUNED = "gold seed: spanning tree pruned its edges"
SEED_CUT = "gold seed: cut from an overflowing tree"
SEED_SKIPPED = "gold seed: its tree skipped (too big for k)"
SEED_RANKED_LOW = "gold seed: its tree ranked below the selected ones"
SEED_SELF_LOOP = "gold seed: self-loop component not selected"
SEED_ALONE_LOW = "gold seed: no triplet, its one-chunk tree ranked below the selected ones"
EXPANDED_NOT_SELECTED = "reached by the expansion, not selected"
NEVER_CANDIDATE = "never a candidate (not a seed, not reached)"

REASONS = (
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


def recall_loss(tr: Any, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
    out = LossReport()
    seeds = [get(s, "chunk_id") for s in get(tr, "seeds", [])]
    n_trip = {get(s, "chunk_id"): get(s, "n_triplets", 0) for s in get(tr, "seeds", [])}
    added = [get(c, "chunk_id") for h in get(tr, "hops", []) for c in get(h, "chunks_added", [])]
    added += [get(c, "chunk_id") for c in get(tr, "completed", [])]  # the paper preset's title completion
    trees = list(get(tr, "trees", []))  # rank order
    units = units_of(seeds + added)
    seed_units = {u for c in seeds for u in units.get(c, [])}
    out.gained = len(found - seed_units)
    for u in sorted(missing, key=str):
        seed_holders = [c for c in seeds if u in units.get(c, [])]
        if seed_holders:
            out.lose(_seed_reason(seed_holders[0], n_trip, trees))
        elif any(u in units.get(c, []) for c in added):
            out.lose(EXPANDED_NOT_SELECTED)
        else:
            out.lose(NEVER_CANDIDATE)
    return out


def _seed_reason(cid: str, n_trip: dict[str, int], trees: list) -> str:
    """Why seed chunk `cid` is not in the context: the first tree (in rank order) holding it decides."""
    tree = next((t for t in trees if cid in get(t, "chunk_ids", [])), None)
    if tree is None:
        return SEED_NO_TRIPLET if not n_trip.get(cid) else SEED_PRUNED
    if cid in get(tree, "cut_chunk_ids", []):
        return SEED_CUT
    if get(tree, "kind", "tree") == "self-loops":
        return SEED_SELF_LOOP
    if str(get(tree, "note", "")).startswith("skipped"):
        return SEED_SKIPPED
    if get(tree, "kind", "tree") == "seed":
        return SEED_ALONE_LOW
    return SEED_RANKED_LOW
