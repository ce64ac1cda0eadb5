"""Where HippoRAG 2 lost a gold unit, read from its trace (the eval's "where recall was lost" table).

A gold unit not in the top `qa_top_k` passages stated a retrieved fact the recognition-memory
filter dropped, stated a kept fact (a seed's passage) but PPR ranked it lower, or stated no
retrieved fact; `events` count questions whose filter kept nothing (dense fallback).
"""

from __future__ import annotations

from typing import Any

from engine.methods.hooks import LossReport, UnitsOf, get

FACT_DROPPED = "stated a retrieved fact the filter dropped"
FACT_KEPT_LOW = "stated a kept fact, PPR ranked it below the context"
NO_FACT = "stated no retrieved fact, PPR ranked it below the context"
DENSE_FALLBACK = "no fact kept: ranked by dense retrieval"


def recall_loss(tr: Any, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
    def fact_chunks(facts: Any) -> list[str]:
        return [c for f in facts for c in get(f, "chunk_ids", [])]

    out = LossReport()
    kept, retrieved = fact_chunks(get(tr, "facts_kept", [])), fact_chunks(get(tr, "facts_retrieved", []))
    units = units_of(kept + retrieved)
    kept_units = {u for c in kept for u in units.get(c, [])}
    retrieved_units = {u for c in retrieved for u in units.get(c, [])}
    if get(tr, "fallback", ""):
        out.count(DENSE_FALLBACK)
    for u in missing:
        out.lose(FACT_KEPT_LOW if u in kept_units else FACT_DROPPED if u in retrieved_units else NO_FACT)
    return out
