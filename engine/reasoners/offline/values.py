"""Values out of evidence for the offline reasoner: the facts (rule triplets) a chunk, a proposition
or a context paragraph states, and the best value of a relation for an entity among them."""

from __future__ import annotations

import re

from engine.core.textnorm import normalize_entity
from engine.reasoners.base import Evidence, source_label
from engine.reasoners.offline.match import (
    DATE_RELATIONS,
    NATIONALITY,
    Fact,
    RelationScorer,
    demonym,
    entity_score,
    parse_date,
    relation_key,
    split_proposition,
)
from engine.reasoners.offline.rules import extract_triplets
from engine.reasoners.offline.spans import MONTHS, STOPWORDS, clean_title, find_spans, split_sentences

#: Relation words asking for a place rather than a date ("place of death", "birthplace").
PLACE_WORDS = {
    "place",
    "birthplace",
    "location",
    "city",
    "country",
    "state",
    "where",
    "hometown",
    "town",
    "village",
    "county",
    "region",
    "province",
}
#: Placeholder nouns that name a person: `?founder` takes a person, never the date it was founded.
PERSON_WORDS = set(
    """person people director founder author writer mayor spouse wife husband father mother son daughter
child parent brother sister performer singer composer producer creator actor actress player coach
president leader member artist designer architect manager captain owner chairman ceo king queen
painter poet novelist musician inventor governor senator minister editor publisher""".split()
)
DATE_WORDS = {"year", "date", "decade", "day", "birthday"}
NUMBER_WORDS = {"population", "number", "count", "amount", "age", "height", "length", "size", "capacity"}
#: The type a question's wh-phrase asks of its final placeholder (`?answer`).
WH_TYPES = {
    "who": "person",
    "whom": "person",
    "where": "place",
    "what city": "place",
    "what state": "place",
    "what country": "place",
    "when": "date",
    "what year": "date",
    "which year": "date",
    "in what year": "date",
    "how many": "number",
    "how much": "number",
}
#: A binding needs entity match x relation similarity at least this high (see tests for examples).
BIND_THRESHOLD = 0.45


def evidence_facts(evidence: Evidence, entities: list[str]) -> list[Fact]:
    """Triplets from the evidence: re-extracted from chunk texts, and propositions split around
    the entities the open triplets name."""
    facts: list[Fact] = []
    # a fact's source is the label the evidence has in the solve prompt (C2, P3): the binding's source
    for i, (_cid, text) in enumerate(evidence.chunks):
        title = chunk_title(text)
        for s, p, o in extract_triplets(title, strip_title_prefix(text)):
            facts.append(Fact(s, p, o, source_label("C", i)))
    for i, prop in enumerate(evidence.propositions):
        for ent in entities:
            parts = split_proposition(prop, ent)
            if parts:
                facts.append(Fact(*parts, source_label("P", i)))
    return facts


def placeholder_type(placeholder: str, wh: str = "") -> str:
    """What a placeholder takes, from its name: `?town` a place, `?founder` a person, `?year` a date;
    the question's own `?answer` takes what its wh-phrase asks ("where" a place, "who" a person).
    "" when the name says nothing (`?x`, `?film`): the relation alone decides then."""
    noun = re.sub(r"_[ab]$", "", placeholder.lstrip("?").lower())
    if noun == "answer":
        return WH_TYPES.get(wh, "")
    if noun in PLACE_WORDS:
        return "place"
    if noun in DATE_WORDS:
        return "date"
    if noun in PERSON_WORDS:
        return "person"
    if noun in NUMBER_WORDS:
        return "number"
    return ""


def fits_type(value: str, kind: str) -> bool:
    """Can `value` fill a placeholder of type `kind`? A date is a date; a place or a person is a name
    (a capitalised span, not a date or a bare number); a number holds digits."""
    if kind == "date":
        return parse_date(value) is not None
    if kind == "number":
        # a quantity holds digits; a calendar date ("January 9, 1961") holds them too but counts nothing
        return bool(re.search(r"\d", value)) and not any(re.search(rf"\b{m}\b", value) for m in MONTHS)
    if kind in ("place", "person"):
        spans = find_spans(value, ("quote", "date", "name", "number"))
        return bool(spans) and spans[0].kind in ("name", "quote") and not re.fullmatch(r"[\d\s,.]+", value)
    return True


def best_value(
    scorer: RelationScorer,
    entity: str,
    relation: str,
    facts: list[Fact],
    forward: bool,
    placeholder: str = "",
    kind: str = "",
    like: str = "",
) -> tuple[str, str, float]:
    """The value of `relation` for `entity` (forward: entity is the subject) with its source. The
    value must fit `kind` (see `placeholder_type`); with no kind, a named placeholder and the relation
    type it: `?city` wants a place, "born" a date ("born in" alone is either). Among values that tie
    (every "Lilu is ..." fact matches "is" alike), `like` (an analogy's category, "demon") picks the
    one nearest in meaning: "word for a spirit", not "mentioned in many ancient texts"."""
    rel_key = relation_key(relation)
    cands = [(f, entity_score(entity, f.subject if forward else f.object)) for f in facts]
    cands = [(f, e) for f, e in cands if e > 0]
    if not cands:
        return "", "", 0.0
    if rel_key in NATIONALITY:
        # the nationality sits in a copula object: "is an English-American film director"
        best = ("", "", 0.0)
        for f, e in cands:
            if not forward:
                continue
            d = (
                f.object
                if relation_key(f.predicate) in NATIONALITY
                else demonym(f.object)
                if f.predicate in ("is", "was", "are", "were")
                else ""
            )
            if d and e > best[2]:
                best = (d, f.source, e)
        return best
    sims = scorer.score(relation, [f.predicate for f, _ in cands])
    # "born" / "died" / "formed" want a date, "place of death" a place: "born in London" is
    # not a birth date, and a comparison of dates must not be handed a city
    noun = placeholder.lstrip("?").lower()
    wants_place = bool(PLACE_WORDS & (set(relation.lower().split()) | {noun}))
    wants_date = (rel_key in DATE_RELATIONS or noun in ("year", "date")) and not wants_place
    if kind:
        wants_place, wants_date = kind == "place", kind == "date"
    best = ("", "", 0.0)
    ties: list[tuple[str, str, float]] = []
    for (f, e), sim in zip(cands, sims):
        value = f.object if forward else f.subject
        if kind and not fits_type(value, kind):
            continue
        if forward and ((wants_date and not parse_date(value)) or (wants_place and find_spans(value, ("date",)))):
            continue
        score = e * sim
        if entity_score(entity, value) >= 0.9:
            continue
        if score > best[2]:
            best = (value, f.source, score)
        ties.append((value, f.source, score))
    return _nearest(scorer, like, [t for t in ties if t[2] >= best[2] - 1e-6]) if like else best


def _nearest(scorer: RelationScorer, like: str, ties: list[tuple[str, str, float]]) -> tuple[str, str, float]:
    """Of values that tie on the relation, the one nearest `like` in meaning (an analogy's category)."""
    near = scorer.score(like, [v for v, _s, _sc in ties])
    return ties[max(range(len(ties)), key=near.__getitem__)]


def context_triplets(context: str) -> list[tuple[str, str, str]]:
    """Rule triplets of the context paragraphs (blank-line separated, each under its title)."""
    if not context.strip():
        return []
    out: list[tuple[str, str, str]] = []
    for para in re.split(r"\n\s*\n", context):
        para = para.strip()
        if para:
            out.extend(extract_triplets(chunk_title(para), strip_title_prefix(para)))
    return out


def _title_prefix(text: str) -> re.Match | None:
    """A "Title: sentence" (sentence chunks) or "Title\\ntext" (paragraphs) prefix, if there is one."""
    m = re.match(r"([^\n:]{2,80})(?::\s|\n)", text)
    if not m:
        return None
    head = m.group(1).strip()
    if (
        not head[:1].isupper()
        or len(head.split()) > 8
        or head.count("(") != head.count(")")
        or re.search(r"\b(?:is|was|are|were)\b", head)
    ):
        return None
    return m


def chunk_title(text: str) -> str:
    """The chunk's topic: its title prefix, else the first name of its first sentence."""
    m = _title_prefix(text)
    if m:
        return m.group(1).strip()
    spans = find_spans(text[:200], ("quote", "name"))
    return spans[0].text if spans else ""


def strip_title_prefix(text: str) -> str:
    m = _title_prefix(text)
    return text[m.end() :] if m else text


def _relation_stems(scorer: RelationScorer, relation: str) -> set[str]:
    """First five letters of the relation's content words and of its usual surface forms."""
    words = re.findall(r"[a-z]+", " ".join(scorer.forms(relation)).lower())
    return {w[:5] for w in words if len(w) > 2 and w not in ("the", "and", "was", "for", "from", "with")}


def _named_part(sentence: str, named: list[str], entity: str) -> str:
    """The sentence's first name span holding every word of `named`, other than the entity."""
    for span in find_spans(sentence, ("quote", "name")):
        words = span.text.split()
        if all(w in words for w in named) and len(words) > len(named) and entity_score(entity, span.text) < 0.6:
            return span.text
    return ""


#: "in his 1968 album X": a possessive before the work names its maker, the sentence's subject
_POSSESSIVE = r"\b(?:his|her|their)\s+(?:[\w'-]+\s+){0,3}?[\"\u201c]?"
_PRONOUN_SUBJECT = re.compile(r"(?:He|She|They)\b")


def possessor(entity: str, chunks: tuple[tuple[str, str], ...]) -> tuple[str, str, float]:
    """Who a work belongs to when a sentence says so with a possessive: "Engelbert Humperdinck also
    recorded a vocal version of the song in his 1968 album *A Man Without Love*" makes the album his.
    The owner is the sentence's subject: its first name when the sentence opens with it, the
    paragraph's topic when it opens with a pronoun. Scored at the binding threshold, as a reading."""
    name = clean_title(entity).strip()
    if len(name) < 3:
        return "", "", 0.0
    pattern = re.compile(_POSSESSIVE + re.escape(name), re.IGNORECASE)
    for i, (_cid, text) in enumerate(chunks):
        title = clean_title(chunk_title(text))
        for sent in split_sentences(strip_title_prefix(text)):
            m = pattern.search(sent)
            # "his 1968 album X" names X; "their dismay at the X" only mentions it
            if not m or any(w.lower() in STOPWORDS for w in m.group(0).split()[1 : -len(name.split())]):
                continue
            head = sent[: m.start()]
            first = next(iter(find_spans(head, ("name",))), None)
            if first is not None and first.start == 0 and entity_score(entity, first.text) < 0.6:
                return first.text, source_label("C", i), BIND_THRESHOLD
            if _PRONOUN_SUBJECT.match(sent) and title and entity_score(entity, title) < 0.6:
                return title, source_label("C", i), BIND_THRESHOLD
    return "", "", 0.0


def sentence_value(
    scorer: RelationScorer,
    entity: str,
    relation: str,
    chunks: tuple[tuple[str, str], ...],
    forward: bool,
    kind: str = "",
) -> tuple[str, str, float]:
    """A hop no rule triplet states, read off a sentence that names `entity` and a word of `relation`:
    forward, the first typed span after the relation's last word ("Morrow was born in *Elsmere*"), in a
    sentence of the entity's own paragraph even when a pronoun names it; backward,
    the chunk's own topic ("The film was shot in Leland" in the paragraph about the film). Scored at
    the binding threshold: a reading, never preferred over a stated triplet."""
    stems = _relation_stems(scorer, relation)
    named = [w for w in relation.split() if w[:1].isupper()]  # a name the value carries ("Adelaide team")
    ent = normalize_entity(entity.split(",")[0])  # "Leland, North Carolina" is "Leland" in its sentences
    if not stems and forward and kind == "person":
        # a bare "by" names a maker: (A Man Without Love, by, ?singer) read off "... in his 1968 album ..."
        return possessor(entity, chunks)
    if not stems or not ent:
        return "", "", 0.0
    for i, (_cid, text) in enumerate(chunks):
        title = clean_title(chunk_title(text))
        about = bool(title) and entity_score(entity, title) >= 0.9  # "Her first novel ..." in X's paragraph
        for sent in split_sentences(strip_title_prefix(text)):
            low = sent.lower()
            hits = [m for m in re.finditer(r"[a-z]+", low) if m.group(0)[:5] in stems]
            if not hits or not (about or f" {ent} " in f" {normalize_entity(sent)} "):
                continue
            if not forward:
                value = title if title and entity_score(entity, title) < 0.6 else ""
                if not value:  # the paragraph is about the entity: the sentence names the other side first
                    before = [s for s in find_spans(sent, ("quote", "name")) if s.end <= hits[0].start()]
                    value = next((s.text for s in before if entity_score(entity, s.text) < 0.6), "")
            elif named and (part := _named_part(sent, named, entity)):
                value = part  # "includes the Adelaide team": the span that carries the name the question gives
            else:
                # the value follows the relation's last word: "first novel ... was published by *X*"
                after = [s for s in find_spans(sent) if s.start >= hits[-1].end()]
                after = [s for s in after if entity_score(entity, s.text) < 0.6]
                value = next((s.text for s in after if not kind or fits_type(s.text, kind)), "")
            if value and (not kind or fits_type(value, kind)):
                return value, source_label("C", i), BIND_THRESHOLD
    return "", "", 0.0
