"""The offline reasoner: the four jobs done by rules, so every screen and test runs with no model.

A floor, not a research result. It is deterministic and labelled `offline-rules` in every trace
record (tokens 0, cost 0). Where a rule is unsure it leaves things open rather than guessing:
precision over recall. The patterns live in `offline_patterns.py` (sentences -> triplets),
`offline_questions.py` (question -> shape and query triplets) and `offline_match.py` (fuzzy
entities, relation similarity, dates).

Formats agreed with the methods:

* `solve` reads `Evidence.propositions` ("s p o" strings) and re-extracts triplets from
  `Evidence.chunks` texts with the same rules as `extract`.
* `answer(facts=...)`: each fact is a resolved triplet written "s | p | o" (preferred), or a
  proposition "s p o". Facts are used before the context; the context is used when the facts do
  not settle the question.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from engine.llm.base import LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult, is_placeholder, source_label
from engine.reasoners.offline.match import (
    DATE_RELATIONS,
    NATIONALITY,
    Fact,
    RelationScorer,
    demonym,
    entity_score,
    parse_date,
    parse_number,
    relation_key,
    same_value,
    split_proposition,
)
from engine.reasoners.offline.patterns import extract_triplets, find_spans, split_sentences
from engine.reasoners.offline.questions import QuestionShape, parse_question
from engine.textnorm import normalize_entity
from engine.triplet_rules import filter_triplets

MODEL = "offline-rules"
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
#: A binding needs entity match x relation similarity at least this high (see tests for examples).
BIND_THRESHOLD = 0.45


class OfflineReasoner:
    """Rule-based `Reasoner`. `embedder` (optional) sharpens relation and sentence matching;
    without it, word overlap is used."""

    name = MODEL
    supports_free_text = False

    def __init__(self, embedder=None):
        self.embedder = embedder
        self.scorer = RelationScorer(embedder)

    # -- bookkeeping -------------------------------------------------------------------------
    def _call(self, job: str, prompt: str, output: Any, parsed: Any, started: float, error: str = "") -> LLMCall:
        return LLMCall(
            job=job,
            model=MODEL,
            messages=[{"role": "user", "content": prompt}],
            response=json.dumps(output, ensure_ascii=False, default=str),
            parsed=parsed,
            prompt_tokens=0,
            completion_tokens=0,
            cost=0.0,
            latency=time.perf_counter() - started,
            error=error,
        )

    # -- 1. extract --------------------------------------------------------------------------
    def extract(self, title: str, text: str) -> tuple[list[tuple[str, str, str]], LLMCall]:
        t0 = time.perf_counter()
        triplets = filter_triplets(extract_triplets(title, text), text)
        out = [list(t) for t in triplets]
        return triplets, self._call(
            "extract", f"extract triplets from chunk {title!r} ({len(text)} chars)", {"triples": out}, out, t0
        )

    # -- 2. decompose ------------------------------------------------------------------------
    def decompose(self, question: str) -> tuple[list[QueryTriplet], LLMCall]:
        t0 = time.perf_counter()
        shape = parse_question(question)
        triplets = [QueryTriplet(*t) for t in shape.triplets]
        error = "" if triplets else "no entity found in the question"
        return triplets, self._call(
            "decompose", f"decompose question: {question}", shape.to_dict(), shape.to_dict(), t0, error
        )

    # -- 3. solve ----------------------------------------------------------------------------
    def _facts(self, evidence: Evidence, entities: list[str]) -> list[Fact]:
        """Triplets from the evidence: re-extracted from chunk texts, and propositions split around
        the entities the open triplets name."""
        facts: list[Fact] = []
        # a fact's source is the label the evidence has in the solve prompt (C2, P3): the binding's source
        for i, (_cid, text) in enumerate(evidence.chunks):
            title = _chunk_title(text)
            for s, p, o in extract_triplets(title, _strip_title_prefix(text)):
                facts.append(Fact(s, p, o, source_label("C", i)))
        for i, prop in enumerate(evidence.propositions):
            for ent in entities:
                parts = split_proposition(prop, ent)
                if parts:
                    facts.append(Fact(*parts, source_label("P", i)))
        return facts

    def _best_value(
        self, entity: str, relation: str, facts: list[Fact], forward: bool, placeholder: str = ""
    ) -> tuple[str, str, float]:
        """The value of `relation` for `entity` (forward: entity is the subject) with its source. A named
        placeholder types the value: `?city` wants a place, `?year` a date ("born in" alone is either)."""
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
        sims = self.scorer.score(relation, [f.predicate for f, _ in cands])
        # "born" / "died" / "formed" want a date, "place of death" a place: "born in London" is
        # not a birth date, and a comparison of dates must not be handed a city
        noun = placeholder.lstrip("?").lower()
        wants_place = bool(PLACE_WORDS & (set(relation.lower().split()) | {noun}))
        wants_date = (rel_key in DATE_RELATIONS or noun in ("year", "date")) and not wants_place
        best = ("", "", 0.0)
        for (f, e), sim in zip(cands, sims):
            value = f.object if forward else f.subject
            if forward and ((wants_date and not parse_date(value)) or (wants_place and find_spans(value, ("date",)))):
                continue
            score = e * sim
            if score > best[2] and entity_score(entity, value) < 0.9:
                best = (value, f.source, score)
        return best

    def solve(
        self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet], evidence: Evidence
    ) -> tuple[SolveResult, LLMCall]:
        t0 = time.perf_counter()
        known = [p for t in open_triplets for p in (t.subject, t.object) if not is_placeholder(p)]
        # facts already resolved in earlier rounds count as evidence too
        facts = [Fact(*t.parts, t.text()) for t in resolved if not t.placeholders] + self._facts(evidence, known)
        bindings: dict[str, str] = {}
        sources: dict[str, str] = {}
        filled: list[QueryTriplet] = []
        notes: list[dict] = []
        for t in open_triplets:
            if len(t.placeholders) != 1 or is_placeholder(t.predicate):
                continue
            forward = is_placeholder(t.object) and not is_placeholder(t.subject)
            entity, ph = (t.subject, t.object) if forward else (t.object, t.subject)
            if ph in bindings or not entity:
                continue
            value, source, score = self._best_value(entity, t.predicate, facts, forward, ph)
            # the reverse reading: (Bobby McGee, performer, ?) stated as (?, performed, Bobby McGee)
            if score < BIND_THRESHOLD:
                v2, s2, sc2 = self._best_value(entity, t.predicate, facts, not forward, ph)
                if sc2 * 0.9 > score:
                    value, source, score = v2, s2, sc2 * 0.9
            notes.append({"triplet": t.text(), "value": value, "score": round(score, 3)})
            if score >= BIND_THRESHOLD and value and normalize_entity(value) != normalize_entity(entity):
                bindings[ph] = value
                sources[ph] = source
                filled.append(
                    QueryTriplet(value if not forward else t.subject, t.predicate, value if forward else t.object)
                )
        result = SolveResult(bindings=bindings, triplets=tuple(filled), sources=sources)
        parsed = {
            "bindings": bindings,
            "triplets": [list(x.parts) for x in filled],
            "sources": sources,
            "candidates": notes,
        }
        prompt = (
            f"solve: {len(open_triplets)} open triplet(s) against {len(evidence.propositions)} "
            f"proposition(s) and {len(evidence.chunks)} chunk(s)"
        )
        return result, self._call("solve", prompt, {"bindings": bindings}, parsed, t0)

    # -- 4. answer ---------------------------------------------------------------------------
    def answer(self, question: str, context: str, *, facts: list[str] | None = None) -> tuple[str, LLMCall]:
        t0 = time.perf_counter()
        shape = parse_question(question)
        fact_list = [f for f in (_parse_fact(x, shape) for x in (facts or [])) if f]
        prompt = f"answer: {question} (context {len(context)} chars, {len(fact_list)} fact(s))"
        if not fact_list and not context.strip():
            # nothing to read: no guess, not even a default "no" for a yes/no question
            return "", self._call(
                "answer", prompt, {"answer": ""}, {"answer": "", "type": shape.qtype, "how": ""}, t0, "no evidence"
            )
        # the context also feeds comparisons and yes/no checks, as facts about the named entities
        ctx_facts = [Fact(s, p, o, f"{s} {p} {o}") for s, p, o in _context_triplets(context)]
        how = ""
        if shape.qtype in ("comparison", "yesno"):
            answer, how = self._compare(shape, fact_list + ctx_facts)
        else:
            answer, how = self._from_facts(shape, question, fact_list)
            if not answer:
                answer, how = self._walk(shape, ctx_facts)
            if not answer:
                answer, how = self._from_context(shape, question, context)
            answer = _fit_to_wh(answer, shape.wh)
        return answer, self._call(
            "answer", prompt, {"answer": answer}, {"answer": answer, "type": shape.qtype, "how": how}, t0
        )

    def _compare(self, shape: QuestionShape, facts: list[Fact]) -> tuple[str, str]:
        values: list[str] = []
        pred = shape.triplets[1 if shape.via else 0][1]
        for ent in shape.entities:
            if shape.via:  # "whose director is younger": compare the directors' birth dates
                ent, _src, score = self._best_value(ent, shape.via, facts, True)
                if score < BIND_THRESHOLD:
                    values.append("")
                    continue
            v, _src, score = self._best_value(ent, pred, facts, True)
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
            words = _content_words(shape.attribute)
            described = [
                set().union(
                    *[
                        _content_words(f.object)
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

    def _walk(self, shape: QuestionShape, facts: list[Fact]) -> tuple[str, str]:
        """Fill the question's triplets in order from the context's rule triplets, as `solve` would."""
        bound: dict[str, str] = {}
        for s, p, o in shape.triplets:
            s, o = bound.get(s, s), bound.get(o, o)
            if is_placeholder(s) == is_placeholder(o):
                continue
            forward = is_placeholder(o)
            value, source, score = self._best_value(s if forward else o, p, facts, forward)
            if score < BIND_THRESHOLD or not value:
                return "", ""
            bound[o if forward else s] = value
            if "?answer" in bound:
                return bound["?answer"], f"context triplet {source!r} ({score:.2f})"
        return "", ""

    def _from_facts(self, shape: QuestionShape, question: str, facts: list[Fact]) -> tuple[str, str]:
        """The value of the question's last relation among resolved facts, not already in the question."""
        if not facts:
            return "", ""
        final = next((t for t in reversed(shape.triplets) if "?answer" in t), None)
        relation = final[1] if final else " ".join(_content_words(question))
        qn = normalize_entity(question)
        sims = self.scorer.score(relation, [f.predicate for f in facts])
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

    def _from_context(self, shape: QuestionShape, question: str, context: str) -> tuple[str, str]:
        """The best-typed span of the sentence most similar to the question, not in the question."""
        sentences = [s for s in split_sentences(context) if s.strip()]
        if not sentences:
            return "", "no context"
        scores = self.scorer.sentence_scores(question, sentences)
        qwords = set(normalize_entity(question).split())
        ranked = sorted(zip(scores, sentences), key=lambda x: -x[0])[:3]
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

    def chat(self, job: str, messages: list[dict[str, str]]) -> tuple[str, LLMCall]:
        raise NotImplementedError(
            "free-form reasoning (IRCoT, chat) needs a real LLM: set a model in the "
            "sidebar or TRIPLET_LENS_MODEL; the offline reasoner only runs the four jobs"
        )


def _fit_to_wh(answer: str, wh: str) -> str:
    """ "what state" / "what country" asks for the last part of "Philadelphia, Pennsylvania"."""
    parts = [p.strip() for p in answer.split(",")]
    if wh in ("what state", "what country") and len(parts) > 1 and all(parts):
        return parts[-1]
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


def _content_words(text: str) -> set[str]:
    """Lowercase content words, plural 's' dropped: "film directors" -> {"film", "director"}."""
    from engine.reasoners.offline.patterns import STOPWORDS

    out = set()
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in STOPWORDS or len(w) < 3:
            continue
        out.add(w[:-1] if w.endswith("s") and not w.endswith("ss") else w)
    return out


def _parse_fact(text: str, shape: QuestionShape) -> Fact | None:
    """A fact as "s | p | o" or as a proposition split around an entity of the question."""
    parts = [p.strip() for p in text.split("|")]
    if len(parts) == 3 and all(parts):
        return Fact(parts[0], parts[1], parts[2], text)
    for ent in shape.entities + [t[0] for t in shape.triplets if not is_placeholder(t[0])]:
        split = split_proposition(text, ent)
        if split:
            return Fact(*split, text)
    words = text.split()
    return Fact(words[0], " ".join(words[1:-1]), words[-1], text) if len(words) >= 3 else None


def _context_triplets(context: str) -> list[tuple[str, str, str]]:
    """Rule triplets of the context paragraphs (blank-line separated, each under its title)."""
    if not context.strip():
        return []
    out: list[tuple[str, str, str]] = []
    for para in re.split(r"\n\s*\n", context):
        para = para.strip()
        if para:
            out.extend(extract_triplets(_chunk_title(para), _strip_title_prefix(para)))
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


def _chunk_title(text: str) -> str:
    """The chunk's topic: its title prefix, else the first name of its first sentence."""
    m = _title_prefix(text)
    if m:
        return m.group(1).strip()
    spans = find_spans(text[:200], ("quote", "name"))
    return spans[0].text if spans else ""


def _strip_title_prefix(text: str) -> str:
    m = _title_prefix(text)
    return text[m.end() :] if m else text
