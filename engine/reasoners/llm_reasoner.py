"""`LLMReasoner`: the four jobs (extract, decompose, solve, answer) plus free chat over any `LLM`.

Each job builds its prompt (engine/reasoners/prompts/), calls the LLM, parses the reply
(engine/reasoners/parsing.py) and returns `(parsed, LLMCall)`. A bad reply or a transient provider
failure never raises: the job returns an empty or neutral result and sets `LLMCall.error`, so the
method continues with its documented fallback and the trace shows why. Failures that would repeat
on every call (bad key, unknown model, server down) do raise `LLMError`, so a run stops at once
with one clear message instead of filling a trace with the same error.
"""

from __future__ import annotations

import copy

from engine.core.triplet_rules import filter_triplets
from engine.llm.base import LLM, Completion, LLMCall, LLMError
from engine.reasoners import prompts
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult
from engine.reasoners.free_text import (
    parse_answer_paper,
    parse_clues,
    parse_clues_paper,
    parse_decomposition_paper,
    parse_fixup_paper,
    parse_reasoned_triples,
)
from engine.reasoners.parsing import (
    parse_answer,
    parse_entities,
    parse_kg2rag,
    parse_solve,
    parse_solve_sources,
    parse_stepwise_answer,
    parse_triples,
)

#: Errors re-raised by every job; the rest are recorded in `LLMCall.error`.
STYLES = ("json", "json+ner", "kg2rag")


class LLMReasoner:
    supports_free_text = True

    def __init__(
        self, llm: LLM, extraction_style: str = "json", *, temperature: float = 0.0, max_tokens: int | None = 2048
    ):
        if extraction_style not in STYLES:
            raise ValueError(f"extraction_style must be one of {', '.join(STYLES)}, got {extraction_style!r}")
        self.llm = llm
        self.name = llm.model
        self.extraction_style = extraction_style
        self.temperature = temperature
        self.max_tokens = max_tokens
        #: provider calls one `extract` makes; the extraction runner bills per call
        self.calls_per_extract = 2 if extraction_style == "json+ner" else 1
        #: the prompt set (engine.reasoners.prompts.prompt_set names it); see `with_prompt_set`
        self.prompt_set = "tuned"
        self._jobs = prompts.prompt_set("tuned")

    def with_prompt_set(self, name: str) -> LLMReasoner:
        """The same reasoner (model, cache, style) building its decompose, solve and answer prompts
        from the set `name`: "tuned" (ours), "t2rag-paper" or "kg2rag-paper" (the authors' code),
        with optional modifiers ("t2rag-paper+tolerant", "+fixup": engine.reasoners.prompts.SET_MODIFIERS)."""
        jobs = prompts.prompt_set(name)
        if name == self.prompt_set:
            return self
        variant = copy.copy(self)
        variant.prompt_set, variant._jobs = name, jobs
        return variant

    def _prompt(self, job: str) -> str:
        return self._jobs[job]

    @property
    def _strict(self) -> bool:
        """The authors' own reply parsing (the `paper` preset), not our tolerant one."""
        return self._jobs.get("parser") == "paper"

    def __repr__(self) -> str:
        return f"LLMReasoner({self.name!r}, extraction_style={self.extraction_style!r})"

    # -- plumbing ----------------------------------------------------------------------------
    def _complete(self, job: str, messages: list[dict[str, str]], json_mode: bool) -> tuple[Completion | None, LLMCall]:
        try:
            c = self.llm.complete(
                messages, temperature=self.temperature, max_tokens=self.max_tokens, json_mode=json_mode
            )
        except LLMError as err:
            if err.fatal or err.kind == "deadline":  # the question ends: every later call would fail too
                raise
            return None, LLMCall(
                job=job,
                model=self.name,
                messages=messages,
                cost=0.0,
                error=str(err),
                attempts=getattr(err, "attempts", 1),
            )
        return c, LLMCall.from_completion(job, messages, c)

    # -- jobs ----------------------------------------------------------------------------------
    def extract(self, title: str, text: str) -> tuple[list[tuple[str, str, str]], LLMCall]:
        if self.extraction_style == "kg2rag":
            messages = prompts.extract_kg2rag_messages(title, text)
            c, call = self._complete("extract", messages, json_mode=False)
            raw, err = parse_kg2rag(c.text) if c else ([], "")
        elif self.extraction_style == "json":
            messages = prompts.extract_json_messages(title, text)
            c, call = self._complete("extract", messages, json_mode=True)
            raw, err = parse_triples(c.text) if c else ([], "")
        else:
            return self._extract_with_ner(title, text)
        if c is None:
            return [], call
        triplets = filter_triplets(raw, f"{title}\n{text}")
        call.parsed = [list(t) for t in triplets]
        call.error = f"parse: {err}" if err else ""
        return triplets, call

    def _extract_with_ner(self, title: str, text: str) -> tuple[list[tuple[str, str, str]], LLMCall]:
        """Two calls; the returned LLMCall shows the second prompt (which lists the entities the
        first call found) and carries the tokens, cost and latency of both."""
        ner_msgs = prompts.ner_messages(title, text)
        c1, call1 = self._complete("extract", ner_msgs, json_mode=True)
        if c1 is None:
            return [], call1
        entities, _ = parse_entities(c1.text)  # an empty entity list still lets call 2 work
        messages = prompts.extract_json_messages(title, text, entities)
        c2, call2 = self._complete("extract", messages, json_mode=True)
        call = call2
        call.prompt_tokens += call1.prompt_tokens
        call.completion_tokens += call1.completion_tokens
        call.cost = None if (call1.cost is None or call2.cost is None) else call1.cost + call2.cost
        call.latency += call1.latency
        call.attempts += call1.attempts
        call.cached = call1.cached and call2.cached
        if c2 is None:
            return [], call
        raw, err = parse_triples(c2.text)
        triplets = filter_triplets(raw, f"{title}\n{text}")
        call.parsed = [list(t) for t in triplets]
        call.error = f"parse: {err}" if err else ""
        return triplets, call

    def decompose(self, question: str) -> tuple[list[QueryTriplet], LLMCall]:
        which = self._prompt("decompose")
        build = {
            "decompose_paper": prompts.decompose_paper_messages,
            "decompose_fixup_paper": prompts.decompose_fixup_paper_messages,
        }.get(which, prompts.decompose_messages)
        free_text = which != "decompose"
        messages = build(question)
        c, call = self._complete("decompose", messages, json_mode=not free_text)
        if c is None:
            call.parsed = []
            return [], call
        if not free_text:
            raw, err = parse_triples(c.text, keys=("triplets", "triples"))
        elif self._strict:
            raw, err = (parse_fixup_paper if which == "decompose_fixup_paper" else parse_decomposition_paper)(c.text)
        else:
            raw, err = parse_reasoned_triples(c.text)
        out = [QueryTriplet(*t) for t in raw]
        call.parsed = [list(t.parts) for t in out]
        if err or not out:
            call.error = f"parse: {err or 'no query triplets'}"
        return out, call

    def solve(
        self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet], evidence: Evidence
    ) -> tuple[SolveResult, LLMCall]:
        searchable = [t.parts for t in open_triplets if len(t.placeholders) == 1]
        fuzzy = [t.parts for t in open_triplets if len(t.placeholders) != 1]
        paper = self._prompt("solve") == "solve_paper"
        build = prompts.solve_paper_messages if paper else prompts.solve_messages
        messages = build(
            question, [t.parts for t in resolved], searchable, fuzzy, list(evidence.propositions), list(evidence.chunks)
        )
        c, call = self._complete("solve", messages, json_mode=not paper)
        if c is None:
            call.parsed = {"bindings": {}, "triplets": []}
            return SolveResult(), call
        if paper:
            return self._paper_solve(c.text, call, strict=self._strict)
        bindings, triples, err = parse_solve(c.text)
        sources = parse_solve_sources(c.text, bindings)
        result = SolveResult(bindings=bindings, triplets=tuple(QueryTriplet(*t) for t in triples), sources=sources)
        call.parsed = {"bindings": dict(bindings), "triplets": [list(t) for t in triples], "sources": sources}
        call.error = f"parse: {err}" if err else ""
        return result, call

    @staticmethod
    def _paper_solve(text: str, call: LLMCall, strict: bool = False) -> tuple[SolveResult, LLMCall]:
        """The reference reply's clues, as rewritten triplets: the engine reads the values off them
        (no binding map, no sources: the reference prompt asks for neither). `strict`: the authors'
        line parsing, else our tolerant one."""
        resolved, traceable, err = (parse_clues_paper if strict else parse_clues)(text)
        triples = resolved + traceable
        call.parsed = {"bindings": {}, "triplets": [list(t) for t in triples], "resolved": len(resolved)}
        call.error = f"parse: {err}" if err else ""
        return SolveResult(triplets=tuple(QueryTriplet(*t) for t in triples)), call

    def answer(self, question: str, context: str, *, facts: list[str] | None = None) -> tuple[str, LLMCall]:
        which = self._prompt("answer")
        if which == "t2rag_answer_paper":
            messages = prompts.t2rag_answer_paper_messages(question, facts)
        elif which == "kg2rag_answer_paper":
            messages = prompts.kg2rag_answer_paper_messages(question, context)
        else:
            messages = prompts.answer_messages(question, context, facts)
        c, call = self._complete("answer", messages, json_mode=False)
        if c is None:
            call.parsed = ""
            return "", call
        if which == "kg2rag_answer_paper":
            text, err = parse_stepwise_answer(c.text, question)
        elif which == "t2rag_answer_paper" and self._strict:
            text, err = parse_answer_paper(c.text)
        else:
            text, err = parse_answer(c.text, question)
        call.parsed = text
        call.error = f"parse: {err}" if err else ""
        return text, call

    def chat(self, job: str, messages: list[dict[str, str]]) -> tuple[str, LLMCall]:
        c, call = self._complete(job, messages, json_mode=False)
        text = c.text.strip() if c else ""
        call.parsed = text
        if c is not None and not text:
            call.error = "empty reply"
        return text, call
