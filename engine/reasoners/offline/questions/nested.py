"""Questions whose entity is itself described by a clause: "the mayor of *the town Orla Vennick was
born in*", "the director of *the film that was shot in Elsmere*", "*Teodor Halm's birthplace* was
founded when".

The rule reduces the innermost described noun phrase to a placeholder named after its noun
(`?town`, `?film`, `?birthplace`) with the triplet the clause states, then parses what is left of
the question as usual, with the placeholder standing where the noun phrase stood:

    "Who is the mayor of the town Orla Vennick was born in?"
    -> inner (Orla Vennick, born in, ?town); outer "Who is the mayor of ?town" -> (?town, mayor, ?answer)

Clause forms (each a noun phrase; none names an entity, every word list is grammar):

* contact clause   "the town X was born in", "the film X directed"       -> (X, born in, ?town)
* subject relative "the film that was shot in X", "the studio that produced X" -> (?film, shot in, X)
* object relative  "the film that X directed"                              -> (X, directed, ?film)
* where / in which "the city where X is based"                             -> (X, based in, ?city)
* possessive noun  "X's birthplace", "X's religious denomination"         -> (X, birthplace, ?birthplace)
* role noun        "the creator of X", "the actress in X"                  -> (X, creator, ?creator)
* name + role      "the X performer"                                       -> (X, performer, ?performer)

The outer question is parsed by the usual shapes; when only the fallback reads it, the placeholder
is its subject ("Who did ?creator follow" -> (?creator, follow, ?answer)).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.reasoners.offline.questions.fallback import parse_fallback
from engine.reasoners.offline.questions.shape import AUX, QuestionShape
from engine.reasoners.offline.spans import find_spans

#: The stand-in the outer question is parsed with: one capitalised token, so the span rules read it
#: as a name, and no word a question would contain.
SENTINEL = "Qxzvplaceholder"
_PREP = r"(?:in|at|from|for|by|with|to|on|of|into|under|as)"
_AUXW = r"(?:was|were|is|are|has been|had been|have been|had|has|have|did|does|do)"
#: a finite verb (past forms and third person): a clause's verb, never an "-ing" form
_VERB = r"[a-z]+(?:ed|en|wn|lt|pt|ft|ght|ote|ade|ang|ung|ew|ore|orn|on|un|ook|ot|ks|ys|ns|rs|ts|ds|es)"
_NOUN = r"(?!(?:first|same|other|most|only|for|in|of|to|on|at|by|with|from|and|or|as)\b)[a-z][a-z\-]+"
#: "the city of Paris", "the island of Oahu": the noun and the name are one place, not a hop
_APPOSITIVE_NOUNS = set(
    """city town state island county province village district region borough kingdom republic isle
municipality commune parish lake river mount port""".split()
)
#: words that keep a possessed noun phrase going: "Joseph Strickland's religious denomination"
_MODIFIER = re.compile(r"[a-z]+(?:al|ous|ic|ive|ful|ary|ian|est|ing)$")


def _name_at(text: str, pos: int) -> tuple[str, int] | None:
    """The named span starting at `pos` of `text` (quotes, names), with its end."""
    for s in find_spans(text, ("quote", "name")):
        if s.start in (pos, pos + 1) and SENTINEL not in s.text:
            end = s.end + (1 if text[s.end : s.end + 1] == '"' else 0)
            return s.text, end
    return None


def _relation(verb_words: str, prep: str, where: bool = False) -> str:
    words = [w for w in verb_words.split() if w not in AUX and w not in ("been", "being")]
    rel = " ".join(words)
    if prep:
        rel = f"{rel} {prep}".strip()
    elif where and rel:
        rel = f"{rel} in"  # "the city where X is based" -> based in
    return rel


def _contact(q: str) -> tuple[int, int, str, tuple[str, str, str]] | None:
    """ "the town Orla Vennick was born in": noun, a name, a verb (and its preposition)."""
    for m in re.finditer(rf"\bthe ({_NOUN}) ", q):
        named = _name_at(q, m.end())
        if not named:
            continue
        name, end = named
        v = re.match(rf"\s+((?:{_AUXW}\s+)?{_VERB})(?:\s+({_PREP}))?(?=\s|$)", q[end:])
        if not v or v.group(1).split()[-1] in AUX:
            continue
        noun = m.group(1).lower()
        return m.start(), end + v.end(), noun, (name, _relation(v.group(1), v.group(2) or ""), "?" + noun)
    return None


#: "the (body of) water where", "the film that": up to three words before the noun, none an article
_RELATIVE = re.compile(rf"\bthe (?:(?!the\b|an?\b)[a-z][a-z\-]* ){{0,3}}?({_NOUN}) (that|which|who|where|in which) ")


def _relative(q: str) -> tuple[int, int, str, tuple[str, str, str]] | None:
    """ "the film that was shot in Elsmere", "the film that Piet Morrow directed", "the city where X is based"."""
    for m in _RELATIVE.finditer(q):
        noun, rel_word, rest_at = m.group(1).lower(), m.group(2).lower(), m.end()
        ph = "?" + noun
        lead = re.match(r"the ", q[rest_at:])
        named = _name_at(q, rest_at + (lead.end() if lead else 0))
        if named:  # object relative / where: the clause's subject is named
            name, end = named
            v = re.match(rf"\s+((?:{_AUXW}\s+)?{_VERB}|{_AUXW}\s+[a-z]+)(?:\s+({_PREP}))?(?=\s|$|,)", q[end:])
            if v:
                rel = _relation(v.group(1), v.group(2) or "", where=rel_word in ("where", "in which"))
                return m.start(), end + v.end(), noun, (name, rel, ph)
            continue
        if rel_word in ("where", "in which"):
            continue
        # subject relative: "that (was) shot in Elsmere", "that produced The Glass Orchard"
        v = re.match(
            rf"((?:{_AUXW}\s+)?(?:first\s+|[a-z]+ly\s+)?{_VERB})(?:\s+({_PREP}))?\s+(?:the\s+|an?\s+)?", q[rest_at:]
        )
        if not v:
            continue
        rel = _relation(re.sub(r"\b(?:first|[a-z]+ly)\s+", "", v.group(1)), v.group(2) or "")
        named = _name_at(q, rest_at + v.end())
        if named:
            return m.start(), named[1], noun, (ph, rel, named[0])
    return None


#: Role nouns that hang off a name: "the actress in My Fair Lady", "the creator of X", "the star of X".
_ROLE_OF = re.compile(rf"\bthe ((?:[a-z][a-z\-]* ){{0,2}}{_NOUN}) (?:of|in|from|behind|for|on) (?:the )?")


def _role(q: str) -> tuple[int, int, str, tuple[str, str, str]] | None:
    """ "the creator of Derech Mitzvosecha", "the actress in My Fair Lady" -> (X, creator, ?creator)."""
    for m in _ROLE_OF.finditer(q):
        named = _name_at(q, m.end())
        if not named or re.search(r"\b(?:first|same|most|one|two)\b", m.group(1)):
            continue
        noun = m.group(1).split()[-1].lower()
        if noun in _APPOSITIVE_NOUNS:
            continue
        return m.start(), named[1], noun, (named[0], m.group(1).lower(), "?" + noun)
    return None


#: Nouns a name can modify: "the 1979-80 European Cup winner", "the Thinking About You performer".
ROLE_NOUNS = set(
    """winner performer singer director author founder creator owner star producer writer composer
actor actress player coach captain member artist designer publisher developer album film song band
team label company""".split()
)


def _premodified(q: str) -> tuple[int, int, str, tuple[str, str, str]] | None:
    """ "the Thinking About You performer" -> (Thinking About You, performer, ?performer)."""
    for m in re.finditer(r"\bthe ", q):
        named = _name_at(q, m.end())
        if not named:
            continue
        r = re.match(r" ([a-z]+)\b", q[named[1] :])
        if r and r.group(1) in ROLE_NOUNS:
            noun = r.group(1)
            return m.start(), named[1] + r.end(), noun, (named[0], noun, "?" + noun)
    return None


def _possessive(q: str) -> tuple[int, int, str, tuple[str, str, str]] | None:
    """ "X's birthplace" with more of the question after it ("... founded")."""
    for s in find_spans(q, ("quote", "name")):
        name = re.sub(r"'s?$", "", s.text)  # the name rule keeps "Halm's" as one token
        after = s.start + len(name)
        m = re.match(rf"'s? ((?:{_NOUN} ?){{1,4}})", q[after:])
        if not m or SENTINEL in name:
            continue
        words = m.group(1).split()
        # modifiers, then the noun that closes the phrase: "religious denomination", "sibling"
        n = next((i for i, w in enumerate(words) if not _MODIFIER.match(w) or i == len(words) - 1), 0)
        words = words[: n + 1]
        if len(words) > 1 and _MODIFIER.match(words[-1]):
            continue  # "Germany's best selling": no noun closes the phrase
        end = after + q[after:].index(words[-1]) + len(words[-1])
        return s.start, end, words[-1], (name, " ".join(words), "?" + words[-1])
    return None


def parse_nested(q: str, outer: Callable[[str], QuestionShape]) -> QuestionShape | None:
    """Reduce the question's described noun phrase to a placeholder and parse the rest with `outer`."""
    for finder in (_relative, _contact, _possessive, _role, _premodified):
        found = finder(q)
        if not found:
            continue
        start, end, _noun, inner = found
        if not inner[1]:
            continue
        ph = inner[2] if inner[2].startswith("?") else inner[0]
        rest = q[:start] + SENTINEL + q[end:]
        shape = outer(rest)
        if shape.qtype == "fallback":  # the described noun is what the rest of the question is about
            shape = parse_fallback(rest, entity=SENTINEL)
        if not shape.triplets or not any(SENTINEL in part for t in shape.triplets for part in t):
            continue
        # the outer question must still ask something of the placeholder: "When was the band Queen
        # formed" reduced to "When was ?band" asks nothing, so "the band Queen" was a title, not a clause
        if any(SENTINEL in (t[0], t[2]) and t[1] in ("", "related to", "is") for t in shape.triplets):
            continue
        triplets = [tuple(ph if p == SENTINEL else p.replace(SENTINEL, ph) for p in t) for t in shape.triplets]
        if any(not t[1].strip() for t in triplets):
            continue
        known = [inner[0] if inner[2] == ph else inner[2]]
        others = [e for e in shape.entities if e != SENTINEL]
        return QuestionShape(
            "nested" if shape.qtype in ("chain", "fallback", "relative", "bridge", "nested") else shape.qtype,
            [inner, *triplets],  # type: ignore[list-item]
            op=shape.op,
            attribute=shape.attribute,
            entities=others or known,
            wh=shape.wh,
            via=shape.via,
        )
    return None
