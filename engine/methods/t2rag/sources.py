"""Where a T2RAG binding came from: the proposition or passage the solver named, checked and quoted.

The solve prompt labels propositions `P1...` and passages `C1...`; the solver names one per value.
The engine checks that the named evidence states the value and quotes the sentence that does;
with no source named, the value is looked up in the walked propositions and marked `guessed`.
"""

from __future__ import annotations

import re
from typing import Any

from engine.methods.t2rag.trace import BindingRecord, ShownChunk, WalkedProposition
from engine.reasoners.base import SolveResult, parse_source_label


def attribute_bindings(
    bindings: list[BindingRecord], solved: Any, walked: list[WalkedProposition], chunks: list[ShownChunk]
) -> None:
    """Point each binding at the evidence it came from. The solver names a source per value ("P2",
    "C1": the labels it saw in the solve prompt); the engine checks that the named evidence states the
    value and quotes the sentence that does. With no source named, the value is looked up in the
    walked propositions and the link is marked `guessed`."""
    sources = solved.sources if isinstance(solved, SolveResult) else {}
    low_sources = {str(k).strip().lower(): str(v).strip() for k, v in sources.items()}
    for b in bindings:
        hint = low_sources.get(b.placeholder.lower(), "")
        label = parse_source_label(hint) if hint else None
        b.source = hint
        if label is not None:
            kind, i = label
            if kind == "P" and i < len(walked):
                _link_proposition(b, walked[i])
                b.source_kind, b.quote = "proposition", _quote(walked[i].text, b.value)
            elif kind == "C" and i < len(chunks):
                b.chunk_ids = [chunks[i].chunk_id]
                b.source_kind, b.quote = "chunk", _quote(chunks[i].text, b.value)
            else:
                b.source_kind = "unverified"
                b.note = b.note or f"source {hint} names no evidence shown in this round"
                continue
            if not b.quote:
                b.source_kind = "unverified"
                b.note = b.note or f"{hint} does not state {b.value!r}"
            continue
        match = None
        if hint:  # free text: a proposition's words
            match = next((w for w in walked if w.text.strip().lower() == hint.lower()), None) or next(
                (w for w in walked if hint.lower() in w.text.lower() or w.text.lower() in hint.lower()), None
            )
        if match is None and b.value:
            match = next((w for w in walked if b.value.lower() in w.text.lower()), None)
            if match is not None:
                b.source_kind = "guessed"
        elif match is not None:
            b.source_kind = "proposition"
        if match is not None:
            _link_proposition(b, match)
            b.quote = _quote(match.text, b.value)
        elif hint:
            b.proposition, b.source_kind = hint, "unverified"


def _link_proposition(b: BindingRecord, w: WalkedProposition) -> None:
    b.proposition, b.proposition_triplet_id, b.chunk_ids = w.text, w.triplet_id, list(w.chunk_ids)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _quote(text: str, value: str) -> str:
    """The sentence of `text` that contains `value` (case-insensitive), "" when none does."""
    want = _loose(value)
    if not want:
        return ""
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        if want in _loose(sentence):
            return sentence.strip()
    return ""


def _loose(text: str) -> str:
    """Lower case, punctuation as space, single spaces, padded: "Kubrick's" matches "kubrick s"."""
    return " " + " ".join(re.sub(r"[^\w]+", " ", text.lower()).split()) + " "
