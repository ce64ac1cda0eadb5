"""Limits on what a user hands the engine, each refused with a message naming it.

Work must be bounded by content, not only by bytes: a 1 MB question took 548 s and 1 GB, an
empty question still got an answer, an invalid UTF-8 byte gave a tokenizer error.
"""

from __future__ import annotations

#: Longest question accepted, in characters (multi-hop questions are a sentence or two).
MAX_QUESTION_CHARS = 2000
#: Longest triplet part (subject, predicate or object) stored, in characters.
MAX_TRIPLET_PART_CHARS = 500


class InputRejected(ValueError):
    """Input the engine will not work on; the message names the limit."""


def check_question(question: str) -> str:
    """The question, stripped; InputRejected when it is empty, too long or not valid text."""
    if not isinstance(question, str):
        raise InputRejected(f"the question must be text, got {type(question).__name__}")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise InputRejected(
            "the question holds bytes that are not valid UTF-8 text; retype it or fix its encoding"
        ) from None
    q = question.strip()
    if not q:
        raise InputRejected("the question is empty")
    if len(q) > MAX_QUESTION_CHARS:
        raise InputRejected(f"the question has {len(q):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
    return q


def part_too_long(*parts: str) -> bool:
    """A triplet with a part past MAX_TRIPLET_PART_CHARS (a pasted paragraph, not an entity)."""
    return any(len(p or "") > MAX_TRIPLET_PART_CHARS for p in parts)
