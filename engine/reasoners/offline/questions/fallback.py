"""The last resorts: one triplet from the question's main entity and its remaining words, and for a
question that names nothing (a definitional "what is" question) one triplet from its head noun
phrase and verb, so retrieval still has a searchable triplet instead of none.

    "What is the most common type of skin cancer?"       -> (skin cancer, most common type, ?answer)
    "Which of the two tornado outbreaks killed the most people?" -> (two tornado outbreaks, killed most people, ?answer)
"""

from __future__ import annotations

import re

from engine.reasoners.offline.questions.shape import AUX, DEMONYM, WH, QuestionShape, named_spans, wh_word
from engine.reasoners.offline.spans import COMMON_VERBS, STOPWORDS, find_spans


def _content(text: str) -> list[str]:
    return [
        w
        for w in re.findall(r"[A-Za-z0-9][\w'\-]*", text)
        if w.lower() not in STOPWORDS and w.lower() not in ("many", "much", "year", "name")
    ]


def parse_definitional(q: str) -> QuestionShape | None:
    """A question with no named entity: its head noun phrase is the subject, its verb the relation."""
    aux = r"(?:is|are|was|were|do|does|did|has|have|had)"
    body = re.sub(rf"^(?:{WH}|in what|of what)(?:\s+of\s+the)?\s+(?:{aux}\s+)?", "", q.strip(), flags=re.I)
    of = re.match(
        rf"{WH}\s+(?:is|are|was|were)\s+(?:the|an?)\s+([a-z][\w\- ]*?)\s+of\s+(?:the\s+|an?\s+)?([\w\- ]+)$", q, re.I
    )
    if of:  # "what is the most common type of skin cancer"
        return QuestionShape("definitional", [(of.group(2), of.group(1), "?answer")], entities=[of.group(2)])
    words = [w for w in re.findall(r"[A-Za-z0-9][\w'\-]*", body) if w.lower() not in AUX]
    verb_at = next(
        (i for i, w in enumerate(words) if i and (w.lower() in COMMON_VERBS or re.search(r"[a-z]ed$", w))), -1
    )
    if verb_at > 0:  # "(which of the two) tornado outbreaks | killed the most people"
        subject = " ".join(w for w in words[:verb_at] if w.lower() not in STOPWORDS)
        relation = " ".join(w for w in words[verb_at:] if w.lower() not in STOPWORDS)
    else:  # "what is photosynthesis"
        subject, relation = " ".join(w for w in words if w.lower() not in STOPWORDS), "is"
    if not subject or not relation:
        return None
    return QuestionShape("definitional", [(subject, relation, "?answer")], entities=[subject])


def _predicate_text(q: str, entity: str) -> str:
    """The question's words that can say the relation. In a declarative question whose entity is
    the subject of a verb ("Indian film photographer Jagdish Mali is father to which actress"), the
    words before the entity describe it and only the words after it ask; otherwise every word but
    the entity's."""
    at = q.find(entity)
    after = q[at + len(entity) :] if at > 0 else ""
    before = q[:at] if at > 0 else ""
    # a description has no clause of its own ("Common Sense which was written by ..." is one)
    declarative = not re.match(
        rf"\s*(?:{WH}|in|on|at|for|from|of|to|by|with|during)\b", before, re.I
    ) and not re.search(r"\b(?:is|was|are|were|which|who|that|by)\b", before, re.I)
    if after and declarative and re.match(r"\s*(?:is|was|are|were|has|had|have)\b", after, re.I):
        return after
    return q.replace(entity, " ")


def parse_fallback(q: str, entity: str = "") -> QuestionShape:
    """(main entity, remaining content words, ?answer); `entity` forces the subject."""
    spans = named_spans(q)
    quoted = [s.text for s in find_spans(q, ("quote",))]
    # a demonym ("American", "Israeli") is rarely what the question is about
    spans = [
        s.removesuffix("'s").removesuffix("'") for s in spans if len(s.split()) > 1 or not DEMONYM.search(s)
    ] or spans
    entity = entity or (quoted[0] if quoted else (max(spans, key=lambda s: len(s.split())) if spans else ""))
    if not entity:
        shape = parse_definitional(q)
        if shape:
            shape.wh = wh_word(q)
            return shape
        return QuestionShape("fallback", [], wh=wh_word(q))
    rest = _predicate_text(q, entity)
    copula = "is" if re.search(r"\b(?:is|was|are|were)\b", rest, re.I) else "related to"
    relation = " ".join(_content(rest)[:6]) or copula  # "Lilu is what?" asks what Lilu is
    return QuestionShape("fallback", [(entity, relation, "?answer")], entities=[entity], wh=wh_word(q))
