"""The answer to a multi-hop question is the value of its final placeholder, and nothing else.

A chained shape ((Orla Vennick, born in, ?town), (?town, mayor, ?answer)) is walked hop by hop over
the resolved facts, then over the context's rule triplets, each value typed by its placeholder
(`?town` a place, "who"'s `?answer` a person). When the walk stops before `?answer`, the context may
still state the final hop: a typed span of a sentence that names the last bound value. Otherwise
the answer is empty and the reason says which placeholder stayed open: an intermediate value (the
town) is never presented as the answer (the mayor).
"""

from __future__ import annotations

import re

from engine.reasoners.base import is_placeholder
from engine.reasoners.offline.answering import from_context, named_as_asked
from engine.reasoners.offline.match import Fact, RelationScorer, entity_score
from engine.reasoners.offline.questions import QuestionShape
from engine.reasoners.offline.rules import _same_person as same_person  # the extractor's own name rule
from engine.reasoners.offline.spans import clean_title, context_sentences, find_spans
from engine.reasoners.offline.values import (
    BIND_THRESHOLD,
    best_value,
    chunk_title,
    fits_type,
    placeholder_type,
    sentence_value,
)

FINAL = "?answer"


def is_chained(shape: QuestionShape) -> bool:
    """A shape whose answer hangs off another placeholder: a hop must be filled before the answer."""
    final = next((t for t in shape.triplets if FINAL in (t[0], t[2])), None)
    return final is not None and len(shape.triplets) > 1 and all(is_placeholder(p) for p in (final[0], final[2]))


def walk_typed(
    scorer: RelationScorer, shape: QuestionShape, facts: list[Fact], bound: dict[str, str] | None = None
) -> dict[str, str]:
    """Fill the shape's placeholders in chain order from `facts`; returns what was bound."""
    bound = dict(bound or {})
    progress = True
    while progress and FINAL not in bound:
        progress = False
        for s, p, o in shape.triplets:
            s2, o2 = bound.get(s, s), bound.get(o, o)
            if is_placeholder(s2) == is_placeholder(o2):
                continue
            forward = is_placeholder(o2)
            ph, entity = (o2, s2) if forward else (s2, o2)
            kind = placeholder_type(ph, shape.wh)
            exact = _restated(facts, entity, p, forward)
            if exact and not is_placeholder(exact):  # the solver's own filled triplet, as the method hands it back
                bound[ph] = exact
                progress = True
                continue
            value, _src, score = best_value(scorer, entity, p, facts, forward, ph, kind)
            if score < BIND_THRESHOLD:
                # the reverse reading: (?studio, produced, X) stated as (X, produced by, Saltlight Studio)
                v2, _s2, sc2 = best_value(scorer, entity, p, facts, not forward, ph, kind)
                value, score = (v2, sc2 * 0.9) if sc2 * 0.9 > score else (value, score)
            if score >= BIND_THRESHOLD and value and not is_placeholder(value):
                bound[ph] = value
                progress = True
    return bound


def _restated(facts: list[Fact], entity: str, relation: str, forward: bool) -> str:
    """The value of a fact that is this very triplet filled in: same relation, same known part."""
    rel = relation.strip().lower()
    for f in facts:
        known, value = (f.subject, f.object) if forward else (f.object, f.subject)
        if f.predicate.strip().lower() == rel and entity_score(entity, known) >= 0.9 and not is_placeholder(value):
            return value
    return ""


def _open_hop(shape: QuestionShape, bound: dict[str, str]) -> tuple[str, str, str] | None:
    """The first triplet that still holds an unfilled placeholder, with what is known substituted."""
    for t in shape.triplets:
        parts = tuple(bound.get(x, x) for x in t)
        if any(is_placeholder(x) for x in (parts[0], parts[2])):
            return parts  # type: ignore[return-value]
    return None


def _from_sentences(
    scorer: RelationScorer, shape: QuestionShape, question: str, context: str, anchor: str, exclude: set[str]
) -> str:
    """A span of the right type from a context sentence that names `anchor` (the last bound value)."""
    sentences = [s for s in context_sentences(context) if entity_score(anchor, s) > 0 or anchor.lower() in s.lower()]
    if not sentences:
        return ""
    kind = placeholder_type(FINAL, shape.wh)
    scores = scorer.sentence_scores(question, sentences)
    for _score, sent in sorted(zip(scores, sentences), key=lambda x: -x[0])[:2]:
        for span in find_spans(sent):
            text = span.text
            if entity_score(anchor, text) >= 0.6 or any(entity_score(x, text) >= 0.6 for x in exclude):
                continue
            if text.lower() in question.lower():
                continue
            if kind and not fits_type(text, kind):
                continue
            if not kind and span.kind not in ("name", "quote"):
                continue
            return text
    return ""


def _after_relation(
    scorer: RelationScorer,
    shape: QuestionShape,
    question: str,
    context: str,
    hop: tuple[str, str, str],
    anchor: str,
    exclude: set[str],
) -> str:
    """The final hop read as the solver reads an intermediate one: in a sentence about the bound value
    that holds a word of the hop's relation, the typed span after that word ("... Bach, whose
    godfather was *Telemann*"), not the sentence's first name (often the anchor's kin or namesake)."""
    paragraphs = tuple((str(i), p.strip()) for i, p in enumerate(re.split(r"\n\s*\n", context)) if p.strip())
    kind = placeholder_type(FINAL, shape.wh)
    value, _src, _score = sentence_value(scorer, anchor, hop[1], paragraphs, hop[2] == FINAL, kind)
    if not value or value.lower() in question.lower() or any(entity_score(x, value) >= 0.6 for x in exclude):
        return ""
    return value


def chained_answer(
    scorer: RelationScorer, shape: QuestionShape, question: str, facts: list[Fact], ctx_facts: list[Fact], context: str
) -> tuple[str, str, str]:
    """(answer, how, reason-when-empty) for a chained shape."""
    bound = walk_typed(scorer, shape, facts)
    if FINAL in bound:
        return bound[FINAL], "final placeholder filled from the resolved facts", ""
    bound = walk_typed(scorer, shape, facts + ctx_facts, bound)
    if FINAL in bound:
        return bound[FINAL], "final placeholder filled from the context's triplets", ""
    hop = _open_hop(shape, bound)
    hop_text = f"({', '.join(hop)})" if hop else ""
    final_hop = next((t for t in shape.triplets if FINAL in (t[0], t[2])), None)
    anchor = ""
    if final_hop is not None:
        other = final_hop[0] if final_hop[2] == FINAL else final_hop[2]
        anchor = bound.get(other, "")
    if anchor and context.strip() and final_hop is not None:
        exclude = set(bound.values()) | set(shape.entities)
        about = [x for x in context_sentences(context) if entity_score(anchor, x) > 0 or anchor.lower() in x.lower()]
        text = named_as_asked(question, about, tuple(exclude))
        if text:
            return text, f"a name holding the asked noun in a sentence about {anchor!r}", ""
        text = _after_relation(scorer, shape, question, context, final_hop, anchor, exclude)
        if text:
            return text, f"span after a word of {final_hop[1]!r} in a sentence about {anchor!r}", ""
        text = _from_sentences(scorer, shape, question, context, anchor, exclude)
        if text:
            return text, f"span of a context sentence about {anchor!r}", ""
    final_kind = placeholder_type(FINAL, shape.wh)
    hops = {p for t in shape.triplets for p in (t[0], t[2]) if is_placeholder(p) and p != FINAL}
    hop_kinds = {placeholder_type(p, shape.wh) for p in hops}
    if not anchor and final_kind and hop_kinds and not hop_kinds & {"", final_kind}:
        # no hop filled, but every hop's type differs from the answer's (a place asked of a person):
        # a typed span of the sentence most like the question cannot be a hop's value
        text, how = from_context(scorer, shape, question, context)
        if text and fits_type(text, final_kind) and not any(entity_score(x, text) >= 0.6 for x in shape.entities):
            return text, f"{how}; typed {final_kind}, unlike every hop ({', '.join(sorted(hop_kinds))})", ""
    reason = f"final placeholder {FINAL} unfilled: no evidence states {hop_text}"
    if bound:
        reason += " (filled: " + ", ".join(f"{k} = {v}" for k, v in bound.items()) + ")"
    return "", reason, reason


def common_name(answer: str, context: str) -> str:
    """A person's full name ("Barnaby Thomas Gerard Joyce") as the paragraph about them is titled
    ("Barnaby Joyce"): the name the documents use for them, and the one a reader would give."""
    if not answer or not context:
        return answer
    for para in re.split(r"\n\s*\n", context):
        title = clean_title(chunk_title(para.strip()))
        if title and title != answer and len(title.split()) < len(answer.split()) and same_person(answer, title):
            return title
    return answer
