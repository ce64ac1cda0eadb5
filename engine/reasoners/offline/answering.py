"""The answer step of the offline reasoner: a comparison or yes/no check over facts, else the value
of the question's last relation among the resolved facts, a walk over the context's rule
triplets, or the best-typed span of the sentence most like the question."""

from __future__ import annotations

import re
from typing import Any

from engine.core.textnorm import normalize_entity
from engine.reasoners.base import is_placeholder
from engine.reasoners.offline.match import (
    Fact,
    RelationScorer,
    demonym,
    entity_score,
    parse_date,
    parse_number,
    same_value,
    split_proposition,
)
from engine.reasoners.offline.questions import QuestionShape
from engine.reasoners.offline.spans import STOPWORDS, context_sentences, find_spans
from engine.reasoners.offline.values import BIND_THRESHOLD, best_value


def compare(scorer: RelationScorer, shape: QuestionShape, facts: list[Fact]) -> tuple[str, str]:
    values: list[str] = []
    pred = shape.triplets[1 if shape.via else 0][1]
    for ent in shape.entities:
        if shape.via:  # "whose director is younger": compare the directors' birth dates
            ent, _src, score = best_value(scorer, ent, shape.via, facts, True)
            if score < BIND_THRESHOLD:
                values.append("")
                continue
        v, _src, score = best_value(scorer, ent, pred, facts, True)
        values.append(v if score >= BIND_THRESHOLD * 0.8 else "")
    if shape.op in ("earlier", "later", "larger", "smaller") and len(values) == 2 and all(values):
        parse: Any = parse_date if shape.op in ("earlier", "later") else parse_number  # both comparable
        a, b = parse(values[0]), parse(values[1])
        if a is not None and b is not None and a != b:
            pick_first = (a < b) == (shape.op in ("earlier", "smaller"))
            return shape.entities[0 if pick_first else 1], f"compared {values[0]!r} with {values[1]!r}"
        return "", f"could not compare {values!r}"
    if shape.op == "match":
        hits = [i for i, v in enumerate(values) if v and shape.attribute.lower() in v.lower()]
        if len(hits) == 1:
            return shape.entities[hits[0]], f"{values[hits[0]]!r} matches {shape.attribute!r}"
        return "", f"no single match for {shape.attribute!r} in {values!r}"
    if shape.op == "same":
        if len(values) == 2 and all(values):
            return ("yes" if same_value(values[0], values[1]) else "no"), f"compared {values!r}"
        return "no", "values missing: defaulted to no"
    if shape.op in ("both", "check"):
        # every copula statement about the entity counts: "is an English film director" and
        # "is one of the highest-grossing directors" together describe Nolan
        words = content_words(shape.attribute)
        described = [
            set().union(
                *[
                    content_words(f.object)
                    for f in facts
                    if f.predicate.lower() in ("is", "was", "are", "were") and entity_score(ent, f.subject) >= 0.9
                ]
                or [set()]
            )
            for ent in shape.entities
        ]
        if words and described and all(words <= d for d in described):
            return "yes", f"every entity is described with {sorted(words)}"
        return "no", f"not every entity is described with {sorted(words)}"
    if shape.op in ("earlier", "later", "larger", "smaller"):
        return "", f"no comparable value for every entity: {values!r}"
    return "", "unrecognised comparison"


def walk(scorer: RelationScorer, shape: QuestionShape, facts: list[Fact]) -> tuple[str, str]:
    """Fill the question's triplets in order from the context's rule triplets, as `solve` would."""
    bound: dict[str, str] = {}
    for s, p, o in shape.triplets:
        s, o = bound.get(s, s), bound.get(o, o)
        if is_placeholder(s) == is_placeholder(o):
            continue
        forward = is_placeholder(o)
        value, source, score = best_value(scorer, s if forward else o, p, facts, forward)
        if score < BIND_THRESHOLD or not value:
            return "", ""
        bound[o if forward else s] = value
        if "?answer" in bound:
            return bound["?answer"], f"context triplet {source!r} ({score:.2f})"
    return "", ""


def from_facts(scorer: RelationScorer, shape: QuestionShape, question: str, facts: list[Fact]) -> tuple[str, str]:
    """The value of the question's last relation among resolved facts, not already in the question."""
    if not facts:
        return "", ""
    final = next((t for t in reversed(shape.triplets) if "?answer" in t), None)
    relation = final[1] if final else " ".join(content_words(question))
    qn = normalize_entity(question)
    sims = scorer.score(relation, [f.predicate for f in facts])
    best, best_score = "", 0.0
    for f, sim in zip(facts, sims):
        if sim < BIND_THRESHOLD:
            continue  # an intermediate hop ("?director") is not the answer to "place of death"
        for value in (f.object, f.subject):
            if normalize_entity(value) and normalize_entity(value) not in qn:
                if sim > best_score:
                    best, best_score = value, sim
                break
    return best, f"fact matching {relation!r} ({best_score:.2f})" if best else ""


def from_context(scorer: RelationScorer, shape: QuestionShape, question: str, context: str) -> tuple[str, str]:
    """The best-typed span of the sentence most similar to the question, not in the question."""
    sentences = context_sentences(context)
    if not sentences:
        return "", "no context"
    scores = scorer.sentence_scores(question, sentences)
    qwords = set(normalize_entity(question).split())
    by_score = sorted(zip(scores, sentences), key=lambda x: -x[0])
    ranked = by_score[:3]
    filled = cloze(question, [sent for _score, sent in by_score])
    if filled:
        return filled, "the name a context sentence puts where the question asks (its own words before it)"
    count = counted_number(question, ranked)
    if count:
        return count, "number before the counted noun in a sentence like the question"
    named = named_as_asked(question, [sent for _score, sent in ranked])
    if named:
        return named, "a name holding the asked noun in a sentence like the question"
    # passes from strict to loose: the preferred kind of span, away from the sentence's subject
    # (the topic the question already names, often under a fuller name), mostly new words
    for kinds, strict in (
        (_answer_kinds(shape.wh)[:1], True),
        (_answer_kinds(shape.wh), True),
        (_answer_kinds(shape.wh), False),
    ):
        for score, sent in ranked:
            for span in find_spans(sent):
                words = normalize_entity(span.text).split()
                if span.kind not in kinds or not words or set(words) <= qwords:
                    continue
                if strict and (
                    span.start <= 1
                    or len(set(words) & qwords) * 2 > len(words)
                    or (shape.wh in ("who", "where") and demonym(span.text) == span.text)
                ):
                    continue
                return span.text, f"{span.kind} span of a sentence like the question ({score:.2f})"
    return "", "no typed span in the best sentences"


_CLOZE = re.compile(r"((?:[\w'-]+\s+){1,3}?[\w'-]+)\s+(of|in|for|from|at|by)\s+(?:which|what)\s+[a-z]+\b", re.I)


def cloze(question: str, sentences: list[str]) -> str:
    """ "... he was an Anglo-Saxon Earl of which location": the name that follows the very words
    before the wh-phrase in a context sentence ("Tostig Godwinson was an Anglo-Saxon Earl of
    *Northumbria*"). The question's own phrase must carry two content words, one capitalised, so a
    common phrase ("the city of which") never matches; never a name the question already holds."""
    m = _CLOZE.search(question)
    if not m:
        return ""
    lead = [w for w in m.group(1).split() if w.lower() not in STOPWORDS]  # "he was an" drops out
    if len(lead) < 2 or not any(w[:1].isupper() for w in lead):
        return ""
    phrase = re.compile(r"\b" + r"\s+".join(map(re.escape, lead)) + rf"\s+{m.group(2)}\s+", re.I)
    asked = normalize_entity(question)
    for sent in sentences:
        for hit in phrase.finditer(sent):
            span = next(iter(find_spans(sent[hit.end() :], ("name", "quote"))), None)
            if span is not None and span.start == 0 and normalize_entity(span.text) not in asked:
                return span.text
    return ""


def counted_number(question: str, ranked: list[tuple[float, str]]) -> str:
    """ "How many times ...": the number that counts the question's noun ("struck 22 *times*"), not
    the first number of the sentence (a year, a share). The best-ranked sentence holding one wins."""
    m = re.search(r"\bhow many\s+([a-z]+)", question.lower())
    if not m:
        return ""
    stem = m.group(1)[:4]  # "times" -> "time", "records" -> "reco": singular and plural alike
    for _score, sent in ranked:
        for span in find_spans(sent, ("number",)):
            if any(w.startswith(stem) for w in re.findall(r"[a-z]+", sent[span.end :].lower())[:2]):
                return span.text
    return ""


def named_as_asked(question: str, sentences: list[str], exclude: tuple[str, ...] = ()) -> str:
    """ "What county ...": a name that carries the asked noun ("Rockland County"), in the first of
    `sentences` holding one, rather than the first name after the relation (the state after it);
    never a name of the question or of `exclude` (a hop's own value)."""
    m = re.match(r"(?:what|which)\s+([a-z]+)\b", question.strip().lower())
    if not m or m.group(1) in STOPWORDS or m.group(1) in ("year", "type", "kind", "sort", "part"):
        return ""
    noun, asked = m.group(1).rstrip("s"), normalize_entity(question)
    for sent in sentences:
        for span in find_spans(sent, ("name",)):
            words = [w.rstrip("s") for w in span.text.split()[1:]]  # the noun names it, after a name
            if noun.capitalize() not in words or normalize_entity(span.text) in asked:
                continue
            if not any(entity_score(x, span.text) >= 0.6 for x in exclude):
                return span.text
    return ""


def fit_to_wh(answer: str, wh: str) -> str:
    """ "what state" / "what country" asks for the last part of "Philadelphia, Pennsylvania"; "what
    year" for the year of "May 17, 1965"."""
    parts = [p.strip() for p in answer.split(",")]
    if wh in ("what state", "what country") and len(parts) > 1 and all(parts):
        return parts[-1]
    year = re.fullmatch(r"(?:\w+\.?\s+)?(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?(?:\w+\.?\s+)?(\d{4})", answer.strip())
    if wh in ("what year", "which year", "in what year") and year and year.group(1) != answer.strip():
        return year.group(1)
    return answer


_WORD_FOR = re.compile(r"\b(?:word|term|name)\s+(?:for|meaning)\s+((?:an?\s+)?[\w-]+(?:\s+[\w-]+){0,2})", re.I)


def what_it_means(answer: str) -> str:
    """ "masculine Akkadian word for a spirit" is, as what the thing *is*, "a spirit": an analogy
    ("If Gallu is a demon, Lilu is what?") asks for the category, not for the word's language."""
    m = _WORD_FOR.search(answer)
    return m.group(1) if m else answer


_ASKED_TYPE = re.compile(
    r"\b(?:which|what)\s+((?:[\w-]+\s+){0,3}?[\w-]+)\s*(?:\b(?:is|was|are|were|did|does|do|has|had)\b|$)", re.I
)


def drop_asked_type(answer: str, question: str) -> str:
    """ "...father to which Bollywood actress?" answered "Bollywood actress Antara Mali" is
    "Antara Mali": the question already names the answer's type, so a value that starts with (the
    tail of) that type phrase before a name is the name. Nothing is dropped unless a capitalised name
    is left."""
    m = _ASKED_TYPE.search(question.rstrip("? "))
    if not m or not answer:
        return answer
    asked = m.group(1).lower().split()
    words = answer.split()
    for start in range(len(asked)):
        tail = asked[start:]
        lead = [w.lower() for w in words[: len(tail)]]
        if lead == tail and len(words) > len(tail) and words[len(tail)][:1].isupper():
            return " ".join(words[len(tail) :])
    return answer


def _answer_kinds(wh: str) -> tuple[str, ...]:
    """Span kinds that can answer a wh-question, the likeliest first."""
    if wh in ("when", "what year", "which year", "in what year"):
        return ("date",)
    if wh in ("how many", "how much", "how long", "how old"):
        return ("number", "date")
    if wh in ("who", "whom", "whose", "where", "what city", "what state", "what country"):
        return ("name", "quote")
    return ("name", "quote", "date", "number")


def content_words(text: str) -> set[str]:
    """Lowercase content words, plural 's' dropped: "film directors" -> {"film", "director"}."""
    out = set()
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in STOPWORDS or len(w) < 3:
            continue
        out.add(w[:-1] if w.endswith("s") and not w.endswith("ss") else w)
    return out


def parse_fact(text: str, shape: QuestionShape) -> Fact | None:
    """A fact as "s | p | o" or as a proposition split around an entity of the question. An open
    triplet ("Haymo of Faversham | era | ?era": the paper's synthesis lists unresolved clues too)
    states nothing: None, so a placeholder is never read as a value."""
    parts = [p.strip() for p in text.split("|")]
    if len(parts) == 3 and all(parts):
        return (
            None if is_placeholder(parts[0]) or is_placeholder(parts[2]) else Fact(parts[0], parts[1], parts[2], text)
        )
    for ent in shape.entities + [t[0] for t in shape.triplets if not is_placeholder(t[0])]:
        split = split_proposition(text, ent)
        if split:
            return Fact(*split, text)
    words = text.split()
    return Fact(words[0], " ".join(words[1:-1]), words[-1], text) if len(words) >= 3 else None
