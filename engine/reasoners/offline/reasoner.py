"""The offline reasoner: the four jobs done by rules, so every screen and test runs with no model.

A floor, not a research result. It is deterministic and labelled `offline-rules` in every trace
record (tokens 0, cost 0). Where a rule is unsure it leaves things open rather than guessing:
precision over recall. This module holds the jobs; the rules live beside it: `spans.py` and
`rules.py` (sentences -> triplets), `questions/` (question -> shape and query triplets),
`match.py` (fuzzy entities, relation similarity, dates), `values.py` (the best value of a
relation among the evidence's facts, typed by its placeholder), `answering.py` (the answer step's
readings) and `synthesis.py` (a chained question's answer is its final placeholder's value, or
empty with the unfilled hop as the reason).

Formats agreed with the methods:

* `solve` reads `Evidence.propositions` ("s p o" strings) and re-extracts triplets from
  `Evidence.chunks` texts with the same rules as `extract`.
* `answer(facts=...)`: each fact is a resolved triplet written "s | p | o" (preferred), or a
  proposition "s p o". Facts are used before the context; the context is used when the facts do
  not settle the question.
"""

from __future__ import annotations

import json
import time
from typing import Any

from engine.core.textnorm import normalize_entity
from engine.core.triplet_rules import filter_triplets
from engine.llm.base import OFFLINE_MODEL, LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult, is_placeholder
from engine.reasoners.offline.answering import (
    compare,
    drop_asked_type,
    fit_to_wh,
    from_context,
    from_facts,
    parse_fact,
    walk,
    what_it_means,
)
from engine.reasoners.offline.match import Fact, RelationScorer
from engine.reasoners.offline.questions import parse_question
from engine.reasoners.offline.rules import extract_triplets
from engine.reasoners.offline.synthesis import chained_answer, common_name, is_chained
from engine.reasoners.offline.values import (
    BIND_THRESHOLD,
    best_value,
    context_triplets,
    evidence_facts,
    placeholder_type,
    sentence_value,
)

MODEL = OFFLINE_MODEL


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
    def solve(
        self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet], evidence: Evidence
    ) -> tuple[SolveResult, LLMCall]:
        t0 = time.perf_counter()
        known = [p for t in open_triplets for p in (t.subject, t.object) if not is_placeholder(p)]
        # facts already resolved in earlier rounds count as evidence too
        facts = [Fact(*t.parts, t.text()) for t in resolved if not t.placeholders] + evidence_facts(evidence, known)
        bindings: dict[str, str] = {}
        sources: dict[str, str] = {}
        filled: list[QueryTriplet] = []
        notes: list[dict] = []
        asked = parse_question(question)
        wh = asked.wh
        for t in open_triplets:
            if len(t.placeholders) != 1 or is_placeholder(t.predicate):
                continue
            forward = is_placeholder(t.object) and not is_placeholder(t.subject)
            entity, ph = (t.subject, t.object) if forward else (t.object, t.subject)
            if ph in bindings or not entity:
                continue
            kind = placeholder_type(ph, wh)  # ?town takes a place, ?founder a person, "when"'s ?answer a date
            if not kind and asked.qtype == "comparison" and asked.op in ("earlier", "later"):
                kind = "date"  # "which was published first, A or B": each side's value is a date
            like = asked.like if ph == "?answer" else ""  # "If Gallu is a demon, Lilu is what?"
            value, source, score = best_value(self.scorer, entity, t.predicate, facts, forward, ph, kind, like)
            # the reverse reading: (Bobby McGee, performer, ?) stated as (?, performed, Bobby McGee)
            if score < BIND_THRESHOLD:
                v2, s2, sc2 = best_value(self.scorer, entity, t.predicate, facts, not forward, ph, kind)
                if sc2 * 0.9 > score:
                    value, source, score = v2, s2, sc2 * 0.9
            if score < BIND_THRESHOLD and evidence.chunks and ph != "?answer":
                # a hop no triplet states: read the sentences (the answer itself is the answer step's)
                v3, s3, sc3 = sentence_value(self.scorer, entity, t.predicate, evidence.chunks, forward, kind)
                if v3 and normalize_entity(v3) not in normalize_entity(question):
                    value, source, score = v3, s3, sc3
            notes.append({"triplet": t.text(), "type": kind, "value": value, "score": round(score, 3)})
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
        fact_list = [f for f in (parse_fact(x, shape) for x in (facts or [])) if f]
        prompt = f"answer: {question} (context {len(context)} chars, {len(fact_list)} fact(s))"
        if not fact_list and not context.strip():
            # nothing to read: no guess, not even a default "no" for a yes/no question
            parsed = {"answer": "", "type": shape.qtype, "how": ""}
            if facts is not None:
                # a clue-only answer step (T2RAG's paper preset at a forced stop) whose clues all
                # still hold a placeholder: an honest "no answer", not a failed call (an LLM would
                # answer from memory; these rules have none)
                parsed["why"] = "no clue holds a value and no passage was given: nothing to read"
                return "", self._call("answer", prompt, {"answer": ""}, parsed, t0)
            return "", self._call("answer", prompt, {"answer": ""}, parsed, t0, "no evidence")
        # the context also feeds comparisons and yes/no checks, as facts about the named entities
        ctx_facts = [Fact(s, p, o, f"{s} {p} {o}") for s, p, o in context_triplets(context)]
        how = reason = ""
        if shape.qtype in ("comparison", "yesno"):
            answer, how = compare(self.scorer, shape, fact_list + ctx_facts)
        elif is_chained(shape):
            # only the final placeholder answers: never the town when the question asks for its mayor
            answer, how, reason = chained_answer(self.scorer, shape, question, fact_list, ctx_facts, context)
            answer = fit_to_wh(answer, shape.wh)
        else:
            answer, how = from_facts(self.scorer, shape, question, fact_list)
            if not answer:
                answer, how = walk(self.scorer, shape, ctx_facts)
            if not answer:
                answer, how = from_context(self.scorer, shape, question, context)
            answer = fit_to_wh(answer, shape.wh)
        answer = drop_asked_type(common_name(answer, context), question)
        if shape.like:  # an analogy asks what the thing is: "a word for a spirit" is a spirit
            answer = what_it_means(answer)
        # an unfilled final hop is an answer of "not found" with its reason, not a failed call
        parsed = {"answer": answer, "type": shape.qtype, "how": how, "why": reason}
        return answer, self._call("answer", prompt, {"answer": answer}, parsed, t0)

    def chat(self, job: str, messages: list[dict[str, str]]) -> tuple[str, LLMCall]:
        raise NotImplementedError(
            "free-form reasoning (IRCoT, chat) needs a real LLM: set a model in the "
            "sidebar or TRIPLET_LENS_MODEL; the offline reasoner only runs the four jobs"
        )
