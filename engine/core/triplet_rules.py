"""The triplet rules every source of triplets obeys (SPEC section 0): LLM extraction, the offline
rules and imported files. One module, below the LLM layer and the store, so a triplet is kept or
dropped by the same rules wherever it comes from (before, imports and extraction had two
placeholder lists that disagreed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from engine.core.limits import MAX_TRIPLET_PART_CHARS, part_too_long
from engine.core.textnorm import normalize_entity

#: Whole parts that mean "the model did not know"; a triplet holding one says nothing (compared
#: after lower-casing and trimming).
PLACEHOLDER_PARTS = frozenset(
    {
        "",
        "?",
        "??",
        "-",
        "--",
        "_",
        "...",
        "unknown",
        "none",
        "null",
        "nil",
        "n/a",
        "na",
        "nan",
        "undefined",
        "unspecified",
        "not specified",
        "not mentioned",
        "not given",
        "not available",
        "not applicable",
        "no",
        "empty",
        "tbd",
        "<unknown>",
        "[unknown]",
        "(unknown)",
        "entity",
        "subject",
        "predicate",
        "object",
        "head",
        "relation",
        "tail",
    }
)
_STOPWORDS = frozenset(
    "a an the of in on at to for by with from and or as is was were be been are its it his her their this that".split()
)
_TOKEN = re.compile(r"\w+", re.UNICODE)


def clean_part(part: Any) -> str:
    """One part as text: whitespace collapsed, surrounding quotes dropped."""
    s = " ".join(str(part).split()) if part is not None else ""
    return s.strip().strip("\"'`").strip()


def _occurs(part: str, text_lower: str, text_tokens: set[str]) -> bool:
    """Case-insensitive substring, or every content word of `part` among the chunk's words.

    Token level so "born in" still matches "was born on 3 May 1960 in"; stopwords are ignored so
    "the director of" does not count as occurring because "the" does.
    """
    low = part.lower()
    if low and low in text_lower:
        return True
    words = [w for w in _TOKEN.findall(low) if w not in _STOPWORDS]
    return bool(words) and all(w in text_tokens for w in words)


def filter_reason(subject: str, predicate: str, obj: str) -> str | None:
    """Why a triplet breaks the text-free rules, or None to keep it: an empty or placeholder part,
    a part longer than engine.core.limits.MAX_TRIPLET_PART_CHARS (a paragraph, not an entity), subject
    equal to object."""
    for name, v in (("subject", subject), ("predicate", predicate), ("object", obj)):
        if not v.strip():
            return f"empty {name}"
        if len(v) > MAX_TRIPLET_PART_CHARS:
            return f"the {name} has {len(v):,} characters; the limit is {MAX_TRIPLET_PART_CHARS} per part"
        if v.strip().lower() in PLACEHOLDER_PARTS:
            return f"placeholder {name} {v!r}"
    if normalize_entity(subject) == normalize_entity(obj) or subject.strip().lower() == obj.strip().lower():
        return "subject equals object"
    return None


def filter_triplets(triplets: Iterable[Sequence[Any]], chunk_text: str) -> list[tuple[str, str, str]]:
    """Keep well-formed, grounded, distinct triplets of one chunk, in their original order.

    Drops what `filter_reason` drops, anything that is not three parts, and a triplet whose
    predicate and object both do not occur in the chunk text (KG2RAG's grounding rule: a relation
    that is nowhere in the text was invented). Dedupes case- and space-insensitively, keeping the
    first surface form.
    """
    text_lower = chunk_text.lower()
    tokens = set(_TOKEN.findall(text_lower))
    seen: set[tuple[str, str, str]] = set()
    out: list[tuple[str, str, str]] = []
    for t in triplets:
        if isinstance(t, (str, bytes)) or not isinstance(t, Sequence) or len(t) != 3:
            continue
        s, p, o = (clean_part(x) for x in t)
        if part_too_long(s, p, o) or filter_reason(s, p, o):
            continue
        if not _occurs(p, text_lower, tokens) and not _occurs(o, text_lower, tokens):
            continue
        key = (s.lower(), p.lower(), o.lower())
        if key in seen:
            continue
        seen.add(key)
        out.append((s, p, o))
    return out
