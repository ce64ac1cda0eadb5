"""The `json+ner` style through the batch API: two phases per chunk, each its own batch.

Phase 1 sends the named-entity prompt (custom_id `<chunk_id>#ner`, style "ner" in the batch
state); when that batch finishes its replies are parsed and stored in the batch state with the
batch's closing, in one transaction (`BatchState.close_ner_batch`). Phase 2 sends the triple
prompt listing those entities (`<chunk_id>#extract`, style "json+ner"), exactly what
`LLMReasoner._extract_with_ner` sends as its second call; its import stores the triplets with the
tokens and batch price of both calls and drops the chunk's NER reply. A chunk whose NER request
went unanswered is pending with no reply (the next run asks it again); one whose triple request
went unanswered keeps its reply (the next run sends only phase 2). A rerun therefore never pays
for either phase of a chunk twice.
"""

from __future__ import annotations

from typing import Any

from engine.extraction_batch.api import BatchInfo
from engine.triplets.batch_state import BatchRecord, BatchState

#: the batch state's style of a phase-1 (named-entity) batch
NER_STYLE = "ner"


def reply_text(body: dict[str, Any]) -> str:
    choices = body.get("choices") or [{}]
    return str(((choices[0] or {}).get("message") or {}).get("content") or "")


def tokens(body: dict[str, Any]) -> tuple[int, int]:
    usage = body.get("usage") or {}
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def import_ner(
    state: BatchState,
    rec: BatchRecord,
    info: BatchInfo,
    answered: dict[str, dict[str, Any]],
    errors: dict[str, str],
    summary: Any,
) -> None:
    """Store a finished NER batch's replies and close it; its unanswered chunks are pending again."""
    from engine.reasoners.parsing import parse_entities

    ids = state.chunk_ids(rec.input_file_id)
    replies: dict[str, tuple[list[str], int, int]] = {}
    for cid in ids:
        if cid in answered:
            entities, _ = parse_entities(reply_text(answered[cid]))  # none found still lets phase 2 work
            replies[cid] = (entities, *tokens(answered[cid]))
    unanswered = [cid for cid in ids if cid not in replies]
    summary.chunks_requeued += len(unanswered)
    for cid in unanswered[: max(0, 20 - len(summary.failures))]:
        summary.failures.append(
            (cid, f"batch {info.id} {info.status} (entities): {errors.get(cid) or info.errors or 'no reply'}")
        )
    state.close_ner_batch(rec.input_file_id, info.status, replies)
    summary.closed.append((info.id, info.status))
    summary.ner_replies += len(replies)
