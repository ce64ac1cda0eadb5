"""Questions that hop from a named entity through unnamed ones: chains ("the nationality of the
director of Inception"), possessives, relative clauses and bridges through a described noun."""

from __future__ import annotations

import re

from engine.reasoners.offline.questions.shape import (
    AUX,
    COMPOUND_RELATIONS,
    DEMONYM,
    EVENT_VERBS,
    WH,
    QuestionShape,
    looks_like_name,
    slug,
    wh_word,
)
from engine.reasoners.offline.spans import TITLE_NOUNS, find_spans, place_text


def parse_chain(q: str) -> QuestionShape | None:
    """ "What is the R1 of the R2 of Z" and "When was the R of Z born" """
    m = re.match(rf"(?:{WH}|in what year|what year)\s+(?:is|was|are|were|did|does)\s+the\s+(.+)$", q, re.I)
    if not m:
        return None
    body = m.group(1)
    for compound in COMPOUND_RELATIONS:  # "place of death" is one relation, not two hops
        body = re.sub(rf"\b{compound}\b", compound.replace(" of ", "_of_"), body)
    event = re.search(r"\s+(born|die|died|founded|formed|released|established|published)$", body)
    if event:
        body = body[: event.start()]
    # the entity is the first "of ..." tail that reads as a name: "of Me and Bobby McGee",
    # "of Bank of America" (a name may contain "and" and "of"; the relations never start upper-case)
    entity, rel_text, owned = "", "", ""
    for m_of in re.finditer(r"\bof\s+(?:the\s+)?(?:(?:%s)\s+(?=[A-Z\"]))?" % "|".join(TITLE_NOUNS), body):
        tail = body[m_of.end() :].strip(' "')
        pos = re.match(r"(.+?)'s? ([a-z][a-z ]{1,30})$", tail)  # "of Gloria in D Major's composer"
        name = pos.group(1).strip('"') if pos else tail
        if looks_like_name(name):
            entity, rel_text, owned = name, body[: m_of.start()], (pos.group(2) if pos else "")
            break
    if not entity:
        return None
    rels = [r.strip().replace("_of_", " of ") for r in re.split(r"\s+of\s+(?:the\s+)?", rel_text.strip())]
    rels = [r for r in rels if r] + ([owned] if owned else [])
    if not rels or any(len(r.split()) > 3 or r[0].isupper() for r in rels):
        return None
    if event:
        rels.insert(0, event.group(1))
    triplets, subject = [], entity
    for i, rel in enumerate(reversed(rels)):
        last = i == len(rels) - 1
        ph = "?answer" if last else slug(rel)
        triplets.append((subject, rel, ph))
        subject = ph
    return QuestionShape("chain", triplets, entities=[entity], wh=wh_word(q))


def parse_possessive(q: str) -> QuestionShape | None:
    """ "Who is Konrad V Kantner's paternal grandfather?" -> (Konrad V Kantner, paternal grandfather, ?answer)"""
    m = re.match(rf"(?:{WH})\s+(?:is|was|are|were)\s+(?:the\s+)?(.+?)'s? ([a-z][a-z ]{{1,40}})$", q, re.I)
    if not m or not looks_like_name(m.group(1).strip('"')):
        return None
    if set(m.group(2).split()) & (set(EVENT_VERBS) | {"born", "die"}):
        return None  # "When was X's birthplace founded": the birthplace is a hop (questions/nested.py)
    entity = m.group(1).strip('"')
    return QuestionShape("chain", [(entity, m.group(2).strip(), "?answer")], entities=[entity], wh=wh_word(q))


def parse_relative(q: str) -> QuestionShape | None:
    """ "Who directed the film that was shot in Leland?" """
    m = re.match(rf"({WH})\s+([a-z]+(?: [a-z]+)?)\s+the\s+([a-z]+)\s+(?:that|which|who|where)\s+(.+)$", q, re.I)
    if not m or m.group(2).split()[0] in AUX:
        return None
    clause = re.sub(r"^(?:was|were|is|are|has been|had been)\s+", "", m.group(4))
    spans = find_spans(clause, ("quote", "name", "date"))
    if not spans:
        return None
    noun = "?" + m.group(3).lower()
    rel = clause[: spans[0].start].strip() or "related to"
    entity = place_text(spans[0], spans, clause)
    # "Who directed the film": the film is "directed by" the answer, the form the extractor writes
    verb = m.group(2)
    pred = f"{verb} by" if m.group(1).lower() == "who" and verb.endswith(("ed", "en")) else verb
    return QuestionShape("relative", [(noun, rel, entity), (noun, pred, "?answer")], entities=[entity], wh=wh_word(q))


RELATIVE_WORDS = ("that", "which", "who", "whose", "where", "whom")
#: a word after a noun phrase that opens what the phrase is said to be: "an NFL team *based* in"
_NP_FOLLOWER = (
    r"(?:that|which|who|whose|where|based|located|known|developed|founded|created|formed|directed|"
    r"written|owned|headquartered|published|produced|released|named|of|in|on|at|by|from|with)"
)
_BRIDGE_NP = re.compile(
    r"\b(?:an?|the)\s+((?:(?!(?:an?|the)\b)[\w\-']+\s+){0,4}?([a-z][\w\-]*))\s+(?=%s\b)" % _NP_FOLLOWER
)
_TRAILING_WH = re.compile(r"\b(what|which|who|whom|where|when|how many|how much)\b(?:\s+[a-z]+){0,2}\s*$", re.I)
_LEADING_OF = re.compile(
    r"(?:^|,\s*)(?:what|which)\s+(?:is|was|were|are)\s+(?:the|he)\s+([a-z][a-z ]{0,30}?)\s+of\s+"
    r"the\s+([a-z]+)\s+(where|in which|that|which|who)\s+(.+)$",
    re.I,
)
_AUX_WORDS = AUX | {"be", "been", "being", "and"}


def _relation_words(text: str) -> str:
    """ "who has worked with" -> "worked with": the words after the last relative word, auxiliaries and
    possessive marks dropped."""
    words = re.findall(r"[\w\-]+", text.replace("'s ", " "))
    cut = max((i for i, w in enumerate(words) if w.lower() in RELATIVE_WORDS), default=-1)
    return " ".join(w for w in words[cut + 1 :] if w.lower() not in _AUX_WORDS and w.lower() != "s")


def parse_bridge(q: str) -> QuestionShape | None:
    """Two hops through a described noun: the question names an entity, a relation to something it
    describes but does not name (the bridge), and asks for a property of the bridge."""
    m = _LEADING_OF.search(q)
    if m:  # "what was the population of the city where Kerry Saxby-Junna was born"
        rel2, noun, rel_word, clause = m.groups()
        spans = find_spans(clause, ("quote", "name"))
        if not spans:
            return None
        entity = spans[0].text
        verb = _relation_words(clause[spans[0].end :])
        rel1 = f"{verb} in" if rel_word.lower() in ("where", "in which") and verb else (verb or "related to")
        ph = "?" + noun.lower()
        return QuestionShape(
            "bridge", [(entity, rel1, ph), (ph, rel2.strip(), "?answer")], entities=[entity], wh=wh_word(q)
        )
    wh = _TRAILING_WH.search(q)
    if not wh or wh.start() == 0:
        return None
    pre = q[: wh.start()]
    nps = [
        n
        for n in _BRIDGE_NP.finditer(pre)
        # "is a consultant who ...": a description of the entity itself, not a bridge
        if not re.search(r"\b(?:is|was|are|were)\s*$", pre[: n.start()])
    ]
    for np_m in reversed(nps):
        before = pre[: np_m.start()]
        spans = find_spans(before, ("quote", "name"))
        if not spans:
            continue
        # the longest name, the later one on a tie ("Notable speakers at the Brisbane Institute")
        ent = max(reversed(spans), key=lambda sp: len(sp.text.split()))
        rel1 = _relation_words(before[ent.end :])
        rel2 = _relation_words(pre[np_m.end() :])
        if not rel1:
            continue
        head = np_m.group(2).lower()
        rel2 = f"{head} {rel2}" if rel2 in ("", "of", "in", "for", "to") else rel2
        ph = "?" + head
        # "includes the Adelaide team that ...": a place or name modifying the bridge noun is part of
        # the bridge's own name, so the first hop searches for it too (not a nationality, "an
        # English singer", nor an acronym, "an NFL team": those describe it)
        modifier = np_m.group(1)[: np_m.start(2) - np_m.start(1)].split()
        if modifier and all(w[:1].isupper() and not w.isupper() and not DEMONYM.search(w) for w in modifier):
            rel1 = f"{rel1} {' '.join(modifier)} {head}"
        return QuestionShape(
            "bridge",
            [(ent.text.removesuffix("'s"), rel1, ph), (ph, rel2.strip(), "?answer")],
            entities=[ent.text.removesuffix("'s")],
            wh=wh_word(q),
        )
    return None
