"""Pieces every method shares: the context format the answer step reads, the answer step itself,
and trace hygiene.

Methods import these from here, never from a sibling method, so a method package can change
without touching the others.
"""

from __future__ import annotations

from typing import Any

from engine.core import serde
from engine.core.types import Chunk
from engine.llm.base import LLMCall, LLMError


def format_context(chunks: list[Chunk]) -> str:
    """Paragraphs in the order given, each under its title, separated by blank lines.

    Shared by KG2RAG and the baselines so a comparison differs only in which chunks are sent.
    Title-prefixed sentence chunks already start with their title; it is not repeated.
    """
    parts = []
    for c in chunks:
        text = c.text.strip()
        title = (c.title or "").strip()
        parts.append(text if not title or text.startswith(title) else f"{title}\n{text}")
    return "\n\n".join(parts)


def clean_call(call: LLMCall) -> LLMCall:
    """`parsed` is free-form; passing it through JSON once makes a saved trace load back equal
    (tuples become lists now rather than on reload). Anything JSON cannot hold becomes its repr."""
    if call.parsed is not None:
        try:
            call.parsed = serde.loads(Any, serde.dumps(call.parsed))
        except (TypeError, ValueError):
            call.parsed = repr(call.parsed)
    return call


def cached_reranker(cache: dict[str, Any], spec: str, corpus: Any) -> Any:
    """The reranker for `spec` (engine.embed.rerank.make_reranker), built once per method instance: a
    cross-encoder loads its model on first use."""
    if spec not in cache:
        from engine.embed.rerank import make_reranker

        cache[spec] = make_reranker(spec, getattr(corpus, "embedder", None))
    return cache[spec]


def answer_step(reasoner: Any, question: str, context: str) -> tuple[str, LLMCall | None, str]:
    """The answer step every method ends with: (answer, its call, the error to report: "" when it
    answered). A provider that failed after its retries (500s, garbage) is an error, not an empty
    answer; a refused or unreachable one is recorded as a call with its error."""
    try:
        answer, call = reasoner.answer(question, context)
    except LLMError as exc:
        return "", LLMCall(job="answer", model=getattr(reasoner, "name", ""), error=str(exc)), str(exc)
    if call is not None and call.error and not answer:
        return answer, call, f"the answer step failed: {call.error}"
    return answer, call, ""
