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

`shape.py` the shape and shared question words, `compare.py` the two-entity shapes (comparison,
yes/no), `hops.py` the multi-hop shapes (chain, possessive, relative, bridge).
"""

from __future__ import annotations

import re

from engine.reasoners.offline.questions.compare import parse_comparison, parse_yesno
from engine.reasoners.offline.questions.hops import parse_bridge, parse_chain, parse_possessive, parse_relative
from engine.reasoners.offline.questions.shape import QuestionShape, clean_question, named_spans, wh_word
from engine.reasoners.offline.spans import STOPWORDS, find_spans

__all__ = ["QuestionShape", "parse_question"]


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
