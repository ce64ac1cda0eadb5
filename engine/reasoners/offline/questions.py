"""Question patterns for the offline reasoner: recognise the question's shape, produce query triplets.

Shapes, tried in this order (the first that matches wins):

* comparison  "Which band was formed first, The Exies or Circus Diablo?"
              -> (The Exies, formed, ?a), (Circus Diablo, formed, ?b); op = earlier
* yes/no      "Were Scott Derrickson and Ed Wood of the same nationality?"
              -> (Scott Derrickson, nationality, ?a), (Ed Wood, nationality, ?b); op = same
              "Are Christopher Nolan and Sathish Kalathil both film directors?" -> (A, is, ?a), (B, is, ?b); op = both
* chain       "What is the nationality of the director of Inception?"
              -> (Inception, director, ?director), (?director, nationality, ?answer)
              "When was the director of Inception born?" -> (..., ?director), (?director, born, ?answer)
* relative    "Who directed the film that was shot in Leland?"
              -> (?film, shot in, Leland), (?film, directed by, ?answer)
* bridge      "From 1945-1949 Dick Humbert played for an NFL team based in what state?"
              -> (Dick Humbert, played for, ?team), (?team, based in, ?answer)
              "What was the population of the city where Kerry Saxby-Junna was born?"
              -> (Kerry Saxby-Junna, born in, ?city), (?city, population, ?answer)
* fallback    (main entity, remaining content words, ?answer)

`QuestionShape` keeps what `answer` needs later (the operation and the two compared entities), so the
answer step re-parses the question rather than depending on state kept between calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.reasoners.offline.patterns import NAME_CONNECTORS, STOPWORDS, TITLE_NOUNS, find_spans, place_text

WH = r"(?:what|who|whom|which|where|when|how|whose)"
#: comparison keyword -> (operation, attribute used when the question names none)
COMPARATIVES = {
    "first": ("earlier", "date"),
    "earlier": ("earlier", "date"),
    "earliest": ("earlier", "date"),
    "before": ("earlier", "date"),
    "older": ("earlier", "born"),
    "oldest": ("earlier", "born"),
    "later": ("later", "date"),
    "last": ("later", "date"),
    "latest": ("later", "date"),
    "recently": ("later", "date"),
    "recent": ("later", "date"),
    "newer": ("later", "date"),
    "younger": ("later", "born"),
    "youngest": ("later", "born"),
    "larger": ("larger", "size"),
    "largest": ("larger", "size"),
    "bigger": ("larger", "size"),
    "more": ("larger", "number"),
    "most": ("larger", "number"),
    "higher": ("larger", "height"),
    "taller": ("larger", "height"),
    "longer": ("larger", "length"),
    "longest": ("larger", "length"),
    "smaller": ("smaller", "size"),
    "fewer": ("smaller", "number"),
    "less": ("smaller", "number"),
    "shorter": ("smaller", "length"),
    "lower": ("smaller", "height"),
}
#: verbs whose date a comparison is about: "formed first" compares formation dates
EVENT_VERBS = (
    "born",
    "founded",
    "formed",
    "established",
    "released",
    "published",
    "opened",
    "created",
    "built",
    "started",
    "founded",
    "launched",
    "debuted",
    "died",
    "written",
    "produced",
    "made",
    "introduced",
    "invented",
    "discovered",
    "elected",
    "signed",
    "completed",
    "premiered",
)
COMPOUND_RELATIONS = (
    "place of birth",
    "place of death",
    "date of birth",
    "date of death",
    "cause of death",
    "country of origin",
    "country of citizenship",
    "place of burial",
)
AUX = {"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would"}


@dataclass
class QuestionShape:
    """What the rules recognised. `entities` are the compared/checked entities (comparison, yes/no)."""

    qtype: str  # comparison | yesno | chain | relative | bridge | fallback
    triplets: list[tuple[str, str, str]] = field(default_factory=list)
    op: str = ""  # earlier | later | larger | smaller | match | same | both | check
    attribute: str = ""  # what is compared or checked ("formed", "nationality", "film directors")
    entities: list[str] = field(default_factory=list)
    wh: str = ""  # who | when | where | how many | ...
    via: str = ""  # comparison of a related entity's value: "director" in "whose director is younger"

    def to_dict(self) -> dict:
        return {
            "type": self.qtype,
            "op": self.op,
            "attribute": self.attribute,
            "entities": self.entities,
            "via": self.via,
            "wh": self.wh,
            "triplets": [list(t) for t in self.triplets],
        }


def clean_question(q: str) -> str:
    q = q.replace("“", '"').replace("”", '"').replace("’", "'")
    return re.sub(r"\s+", " ", q).strip().rstrip("?").strip()


def wh_word(q: str) -> str:
    low = q.lower()
    for key in (
        "how many",
        "how much",
        "how long",
        "how old",
        "what year",
        "which year",
        "in what year",
        "what city",
        "what state",
        "what country",
        "what nationality",
    ):
        if key in low:
            return key
    m = re.search(rf"\b({WH})\b", low)
    return m.group(1) if m else ""


def named_spans(q: str) -> list[str]:
    """Entities of a question: quoted titles first, then capitalised runs (the wh-word excluded)."""
    return [s.text for s in find_spans(q, ("quote", "name", "date"))]


def _slug(words: str) -> str:
    w = [x for x in re.findall(r"[a-z0-9]+", words.lower()) if x not in STOPWORDS]
    return "?" + (w[-1] if w else "x")


def _pair(q: str) -> tuple[str, str] | None:
    """The two sides of "A or B" / "A and B", preferring named spans that touch the conjunction."""
    spans = find_spans(q, ("quote", "name"))
    for conj in ("or", "and"):
        for a, b in zip(spans, spans[1:]):
            if q[a.end : b.start].strip(' ",').lower() in (conj, conj + " the"):
                return a.text, b.text
    # no capitalised spans: split the clause after the last comma ("..., the Pterocarya or the Cotula")
    tail = q.rsplit(",", 1)[-1]
    m = re.search(r"(?:^|\b)(?:the )?([\w'\-. ]+?) or (?:the )?([\w'\-. ]+)$", tail.strip(), re.I)
    if m and len(m.group(1).split()) <= 6:
        return m.group(1).strip(), m.group(2).strip()
    return None


def _comparison_pair(q: str) -> tuple[str, str] | None:
    """ "..., A or B": the literal text after the last comma, so titles with small words survive
    ("Stands For Decibels", "King Arthur Was A Gentleman"); else named spans around "or"."""
    if "," in q:
        parts = q.rsplit(",", 1)[1].split(" or ")
        if len(parts) == 2 and all(1 <= len(p.split()) <= 8 for p in parts):
            a, b = (re.sub(r"^(?:the|a|an)\s+", "", p.strip(' "')) for p in parts)
            if a and b and (a[:1].isupper() or a[:1].isdigit()):
                return a, b
    return _pair(q)


#: "Which film has the director born earlier, A or B?": the compared value belongs to A's director
VIA_RE = re.compile(
    r"\b(?:whose|the|has the|with the)\s+(director|author|composer|performer|creator|producer|"
    r"writer|founder|singer|father|mother|spouse|husband|wife)\b"
)


def parse_comparison(q: str) -> QuestionShape | None:
    low = q.lower()
    if " or " not in low:
        return None
    pair = _comparison_pair(q)
    if not pair:
        return None
    a, b = pair
    words = re.findall(r"[a-z]+", low[: low.find(a.lower())] if a.lower() in low else low)
    op, attr = "", ""
    # "more recently" compares dates; "more" alone is the weakest hint, used only when nothing else is
    for w in sorted((w for w in words if w in COMPARATIVES), key=lambda w: w in ("more", "most")):
        op, attr = COMPARATIVES[w]
        break
    verb = next((w for w in words if w in EVENT_VERBS), "")
    if verb:
        attr = verb if verb != "born" or not op else "born"
        op = op or "earlier"
    if not op:
        # "Which singer is American, Mark King or Nick Hexum?": the property to match
        m = re.search(r"\b(?:is|was|are|were)\s+(?:an?\s+|the\s+)?([\w\- ]+?)\s*,", q)
        op, attr = "match", (m.group(1) if m else "")
    pred = {"born": "born on", "date": "date"}.get(attr, attr or "is")
    if op == "match":
        pred = "is"
    via = VIA_RE.search(low[: low.find(a.lower())] if a.lower() in low else low)
    if via and op != "match":
        rel = via.group(1)
        triplets = [(a, rel, f"?{rel}_a"), (f"?{rel}_a", pred, "?a"), (b, rel, f"?{rel}_b"), (f"?{rel}_b", pred, "?b")]
        return QuestionShape("comparison", triplets, op=op, attribute=attr, entities=[a, b], wh=wh_word(q), via=rel)
    return QuestionShape(
        "comparison", [(a, pred, "?a"), (b, pred, "?b")], op=op, attribute=attr, entities=[a, b], wh=wh_word(q)
    )


def parse_yesno(q: str) -> QuestionShape | None:
    first = q.split()[0].lower() if q.split() else ""
    low = q.lower()
    # "Do Lafzon Ki Kahani, ... released in which year": a name that starts like a yes/no question
    if first not in AUX or re.search(rf"\b{WH}\b", low):
        return None
    spans = named_spans(q)
    pair = _pair(q)
    if pair:
        spans = list(pair) + [s for s in spans if s not in pair]
    same = re.search(r"\bsame ([a-z]+(?: [a-z]+)?)", low)
    both = re.search(r"\bboth\s+(?:an?\s+|the\s+)?([a-z][\w\- ]*)$", low)
    if not both and " both " in f" {low} " and len(spans) >= 2:
        # "Are both magazines, A and B, British publications?": the attribute follows the pair
        both = re.search(rf"{re.escape(spans[1].lower())}[\s,]+(?:an?\s+|the\s+)?([a-z][\w\- ]*)$", low)
    if same and len(spans) >= 2:
        attr = same.group(1)
        return QuestionShape(
            "yesno", [(spans[0], attr, "?a"), (spans[1], attr, "?b")], op="same", attribute=attr, entities=spans[:2]
        )
    if both and len(spans) >= 2:
        attr = both.group(1).strip()
        return QuestionShape(
            "yesno", [(spans[0], "is", "?a"), (spans[1], "is", "?b")], op="both", attribute=attr, entities=spans[:2]
        )
    if spans:
        m = re.match(rf"\w+ {re.escape(spans[0])} (?:an?\s+|the\s+)?(.+)$", q)
        attr = m.group(1) if m else ""
        return QuestionShape("yesno", [(spans[0], "is", "?a")], op="check", attribute=attr, entities=spans[:1])
    return None


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
        if _looks_like_name(name):
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
        ph = "?answer" if last else _slug(rel)
        triplets.append((subject, rel, ph))
        subject = ph
    return QuestionShape("chain", triplets, entities=[entity], wh=wh_word(q))


def _looks_like_name(text: str) -> bool:
    words = text.split()
    return (
        bool(words)
        and words[0][:1].isupper()
        and all(w[:1].isupper() or w[:1].isdigit() or w in NAME_CONNECTORS | {"and", "&"} for w in words)
    )


def parse_possessive(q: str) -> QuestionShape | None:
    """ "Who is Konrad V Kantner's paternal grandfather?" -> (Konrad V Kantner, paternal grandfather, ?answer)"""
    m = re.match(rf"(?:{WH})\s+(?:is|was|are|were)\s+(?:the\s+)?(.+?)'s? ([a-z][a-z ]{{1,40}})$", q, re.I)
    if not m or not _looks_like_name(m.group(1).strip('"')):
        return None
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
_TRAILING_WH = re.compile(r"\b(what|which|who|whom|where|when|how many|how much)\b(?:\s+[a-z]+)?\s*$", re.I)
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
        return QuestionShape(
            "bridge",
            [(ent.text.removesuffix("'s"), rel1, ph), (ph, rel2.strip(), "?answer")],
            entities=[ent.text.removesuffix("'s")],
            wh=wh_word(q),
        )
    return None


def parse_fallback(q: str) -> QuestionShape:
    spans = named_spans(q)
    quoted = [s.text for s in find_spans(q, ("quote",))]
    # a demonym ("American", "Israeli") is rarely what the question is about
    spans = [
        s.removesuffix("'s").removesuffix("'")
        for s in spans
        if len(s.split()) > 1 or not re.search(r"(?:an|ese|ish|i)$", s)
    ] or spans
    entity = quoted[0] if quoted else (max(spans, key=lambda s: len(s.split())) if spans else "")
    rest = q.replace(entity, " ") if entity else q
    words = [
        w
        for w in re.findall(r"[A-Za-z0-9][\w'\-]*", rest)
        if w.lower() not in STOPWORDS and w.lower() not in ("many", "much", "year", "name")
    ]
    relation = " ".join(words[:6]) or "related to"
    if not entity:
        return QuestionShape("fallback", [], wh=wh_word(q))
    return QuestionShape("fallback", [(entity, relation, "?answer")], entities=[entity], wh=wh_word(q))


def parse_question(question: str) -> QuestionShape:
    q = clean_question(question)
    for parser in (parse_comparison, parse_yesno, parse_possessive, parse_chain, parse_relative, parse_bridge):
        shape = parser(q)
        if shape and shape.triplets:
            shape.wh = shape.wh or wh_word(q)
            return shape
    return parse_fallback(q)
