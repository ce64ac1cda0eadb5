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
* nested      "Who is the mayor of the town Orla Vennick was born in?" (questions/nested.py)
              -> (Orla Vennick, born in, ?town), (?town, mayor, ?answer)
* fallback    (main entity, remaining content words, ?answer); with no entity, the head noun and
              verb of a definitional question (questions/fallback.py)

`QuestionShape` keeps what `answer` needs later (the operation and the two compared entities), so the
answer step re-parses the question rather than depending on state kept between calls.

`shape.py` the shape and shared question words, `compare.py` the two-entity shapes (comparison,
yes/no), `hops.py` the multi-hop shapes (chain, possessive, relative, bridge).
"""

from __future__ import annotations

import re

from engine.reasoners.offline.questions.compare import parse_comparison, parse_yesno
from engine.reasoners.offline.questions.fallback import parse_fallback
from engine.reasoners.offline.questions.hops import parse_bridge, parse_chain, parse_possessive, parse_relative
from engine.reasoners.offline.questions.nested import parse_nested
from engine.reasoners.offline.questions.shape import QuestionShape, clean_question, wh_word

__all__ = ["QuestionShape", "parse_fallback", "parse_question"]


def _parse(q: str, nested: bool) -> QuestionShape:
    parsers: list = [parse_comparison, parse_yesno, parse_possessive, parse_chain, parse_relative, parse_bridge]
    if nested:  # one level: the outer question of a reduced clause is parsed without it
        parsers.append(lambda text: parse_nested(text, lambda rest: _parse(rest, nested=False)))
    for parser in parsers:
        shape = parser(q)
        if shape and shape.triplets:
            shape.wh = shape.wh or wh_word(q)
            return shape
    return parse_fallback(q)


#: A participial aside between commas ("X, known for taking images of celebrities, is father to which
#: actress"): it describes the subject and asks nothing, so the question is parsed without it. A
#: "who"/"which" clause is kept: in a multi-hop question it is often a hop ("The German priest, who
#: wanted X's denomination to reform, preached ...").
_ASIDE = re.compile(r",\s*(?:(?:also|best|well)\s+)?(?:known|famous|noted|remembered|born)\b[^,]*,\s*", re.I)


def strip_asides(q: str) -> str:
    """The question without its non-restrictive clauses, when a clause is left after each."""
    out = _ASIDE.sub(" ", q)
    return out if len(out.split()) >= 4 else q


#: A leading condition that sets up an analogy ("If Gallu is a demon, Lilu is what?"): it names what
#: the compared thing is, and the question proper is the clause after it.
_CONDITION = re.compile(
    r"^(?i:if|given that|assuming)\s+[^,?]+?\s(?:is|are|was|were)\s+(?:an?|the)\s+([a-z][\w-]*),?\s+(?=[A-Z])"
)


def strip_condition(q: str) -> tuple[str, str]:
    """(the question without a leading analogy condition, the condition's category noun), when a
    question of 3+ words is left; else (q, "")."""
    m = _CONDITION.match(q.strip())
    out = q.strip()[m.end() :] if m else ""
    return (out, m.group(1)) if m and len(out.split()) >= 3 else (q, "")


def parse_question(question: str) -> QuestionShape:
    q, like = strip_condition(strip_asides(clean_question(question)))
    shape = _parse(q, nested=True)
    shape.like = like  # "what" Lilu is, in the sense the condition gives Gallu's ("a demon")
    return shape
