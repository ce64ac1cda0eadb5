"""T2RAG (triplet-driven thinking): decompose -> rounds of retrieve + solve -> synthesize.

    method = T2RAG(reasoner)
    result = method.answer("Who is the child of the performer of Me and Bobby McGee?", corpus)

The question becomes query triplets with placeholders; each round retrieves propositions for the
searchable ones (no LLM call), the solver fills placeholders, and the engine folds the reply into a
monotone state (engine/methods/t2rag/state.py). Compact triplets, not chain-of-thought, pass
between rounds, so a question costs about 3 to 5 LLM calls. Every step lands in a `T2RAGTrace`.

A failed or unparseable reasoner reply never crashes a question: the call is recorded with its
error and the method continues with the documented fallback. A provider failure (`LLMError`:
bad key, unknown model, unreachable server) ends the question with `Result.error`, since further
calls would fail the same way.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine.llm.base import LLMCall, LLMError
from engine.methods.base import Result, StepCallback, Usage, register_trace
from engine.methods.common import clean_call
from engine.methods.t2rag.retrieval import build_queries, chunk_for_solver, retrieve
from engine.methods.t2rag.state import State, apply_solve, fact_text
from engine.methods.t2rag.trace import (
    STOP_REASONS,
    BindingRecord,
    DecompositionTrace,
    RoundTiming,
    RoundTrace,
    ShownChunk,
    SynthesisTrace,
    T2RAGSettings,
    T2RAGTrace,
    WalkedProposition,
)
from engine.reasoners.base import Evidence, SolveResult, parse_source_label
from engine.store.protocol import CorpusView

__all__ = ["T2RAG", "T2RAGSettings", "T2RAGTrace"]


NO_TRIPLETS = (
    "this corpus has no triplets yet: run the triplet extraction first (T2RAG retrieves through the proposition index)"
)


class _ProviderFailure(Exception):
    def __init__(self, call: LLMCall, exc: LLMError):
        super().__init__(str(exc))
        self.call = call


class T2RAG:
    name = "t2rag"
    settings_cls = T2RAGSettings

    def __init__(self, reasoner: Any):
        self.reasoner = reasoner

    # --- one reasoner call, never raising -------------------------------------------------------

    def _call(self, job: str, fn: Callable[[], tuple[Any, LLMCall]], empty: Any) -> tuple[Any, LLMCall, float]:
        t0 = time.perf_counter()
        try:
            value, call = fn()
        except LLMError as exc:
            call = LLMCall(job=job, model=self.reasoner.name, error=f"{exc.kind}: {exc}")
            raise _ProviderFailure(call, exc) from None
        except Exception as exc:  # a reasoner bug or odd reply must not lose the question
            value, call = empty, LLMCall(job=job, model=self.reasoner.name, error=f"{type(exc).__name__}: {exc}")
        return value, clean_call(call), time.perf_counter() - t0

    # --- the method -----------------------------------------------------------------------------

    def answer(
        self,
        question: str,
        corpus: CorpusView,
        settings: T2RAGSettings | None = None,
        on_step: StepCallback | None = None,
    ) -> Result:
        settings = settings or T2RAGSettings()
        step = on_step or (lambda label, payload: None)
        start = time.perf_counter()
        trace = T2RAGTrace(settings=settings, reasoner=str(getattr(self.reasoner, "name", "")), question=question)
        error = ""
        counts = corpus.counts() if hasattr(corpus, "counts") else None
        try:
            if counts is not None and counts.triplets == 0:
                # every round searches propositions: without triplets the LLM calls would be wasted
                error, trace.stop_reason = NO_TRIPLETS, "no_triplets"
                step(error, None)
            else:
                self._run(question, corpus, settings, trace, step)
        except _ProviderFailure as fail:
            error = f"the LLM call failed: {fail}"
            trace.stop_reason = "llm_error"
            self._attach_failed_call(trace, fail.call)
            step(f"stopped: {error}", None)
        trace.total_seconds = time.perf_counter() - start
        answer = trace.synthesis.answer if trace.synthesis else ""
        if not error and trace.synthesis and trace.synthesis.call and trace.synthesis.call.error and not answer:
            error = f"the answer step failed: {trace.synthesis.call.error}"
        return Result(
            method=self.name,
            question=question,
            answer=answer,
            usage=Usage.from_calls(trace.calls(), trace.total_seconds),
            evidence_chunk_ids=trace.chunk_ids_shown(),
            stop_reason=trace.stop_reason,
            error=error,
            reasoner=trace.reasoner,
            trace=trace,
        )

    @staticmethod
    def _attach_failed_call(trace: T2RAGTrace, call: LLMCall) -> None:
        if trace.decomposition is None:
            trace.decomposition = DecompositionTrace(call=call, failure=call.error)
        elif call.job == "answer":
            if trace.synthesis is None:
                trace.synthesis = SynthesisTrace(mode="failed")
            trace.synthesis.call = call
        elif trace.rounds and trace.rounds[-1].solve_call is None:
            trace.rounds[-1].solve_call = call

    def _run(
        self, question: str, corpus: CorpusView, settings: T2RAGSettings, trace: T2RAGTrace, step: StepCallback
    ) -> None:
        state = self._decompose(question, trace, step)  # 1-2
        loop = _Loop(nothing_open=not state.triplets)
        for index in range(1, settings.rounds + 1):
            stop = self._round(index, question, corpus, settings, state, loop, trace, step)  # 3-6
            if stop:
                trace.stop_reason = stop
                break
        else:
            trace.stop_reason = "round_cap"
        self._synthesize(question, state, loop.last_chunks, trace, step)  # 7

    # 1-2. decompose and classify
    def _decompose(self, question: str, trace: T2RAGTrace, step: StepCallback) -> State:
        triplets, call, secs = self._call("decompose", lambda: self.reasoner.decompose(question), [])
        state = State.from_decomposition(list(triplets or []))
        failure = call.error or ("" if triplets else "the decomposition returned no triplet")
        trace.decomposition = DecompositionTrace(
            call=call,
            triplets=list(state.resolved) + list(state.triplets),
            state=state.snapshot(),
            failure=failure,
            seconds=secs,
        )
        step(f"decompose: {state.snapshot().counts()}" + (f" ({failure})" if failure else ""), trace.decomposition)
        return state

    # 3-6. one round: retrieve (no LLM call), solve, update the state, decide whether to stop
    def _round(
        self,
        index: int,
        question: str,
        corpus: CorpusView,
        settings: T2RAGSettings,
        state: State,
        loop: _Loop,
        trace: T2RAGTrace,
        step: StepCallback,
    ) -> str:
        """The round's stop reason, or "" to go on."""
        rnd = RoundTrace(index=index, state_before=state.snapshot(), timing=RoundTiming())
        trace.rounds.append(rnd)
        queries = build_queries(state, question, settings, loop.asked)
        repeat = all(q.text.lower() in loop.asked for q in queries if q.kind != "question_stripped")
        got = retrieve(
            corpus, queries, replace(settings, skip_seen_chunks=True) if repeat else settings, loop.seen, rnd.timing
        )
        loop.asked.update(q.text.lower() for q in queries)
        rnd.queries, rnd.pool_size, rnd.walked, rnd.chunks = got.queries, got.pool_size, got.walked, got.chunks
        loop.seen.update(c.chunk_id for c in got.chunks)
        loop.last_chunks = got.chunks
        if loop.nothing_open:
            # nothing to fill: the retrieved chunks go straight to the answer step
            rnd.solve_skipped, rnd.state_after = "no open triplet", state.snapshot()
            step(f"round {index}: {len(rnd.chunks)} chunks (question query)", rnd)
            return "no_open_triplets"
        evidence = Evidence(
            propositions=tuple(w.text for w in rnd.walked),
            chunks=tuple((c.chunk_id, chunk_for_solver(c)) for c in rnd.chunks) if settings.include_chunk_text else (),
        )
        resolved_q, open_q = [t.query for t in state.resolved], [t.query for t in state.triplets]
        shown = (tuple(t.text() for t in resolved_q), tuple(t.text() for t in open_q), evidence)
        if shown in loop.prompts or not (rnd.walked or rnd.chunks):
            # the solver would see exactly what it saw before (or nothing): its answer cannot change
            rnd.solve_skipped = "no new evidence" if rnd.walked or rnd.chunks else "nothing retrieved"
            rnd.state_after = state.snapshot()
            step(f"round {index}: no new evidence, stop", rnd)
            return "no_new_evidence"
        loop.prompts.add(shown)
        solved, call, secs = self._call_solve(question, resolved_q, open_q, evidence)
        rnd.solve_call, rnd.timing.solve = call, secs
        t0 = time.perf_counter()
        outcome = apply_solve(state, solved if isinstance(solved, SolveResult) else SolveResult())
        _attribute_bindings(outcome.bindings, solved, rnd.walked, rnd.chunks if settings.include_chunk_text else [])
        rnd.bindings, rnd.unmatched = outcome.bindings, outcome.unmatched
        rnd.newly_resolved, rnd.new_searchable = outcome.newly_resolved, outcome.new_searchable
        rnd.state_after = state.snapshot()
        rnd.timing.update = time.perf_counter() - t0
        step(
            f"round {index}: {len(rnd.chunks)} chunks, {sum(1 for b in rnd.bindings if b.applied_to)} "
            f"bindings -> {rnd.state_after.counts()}",
            rnd,
        )
        if not state.triplets:
            return "complete"
        if not outcome.new_searchable and not state.fuzzy:
            return "early_stop"
        return ""

    # 7. synthesize
    def _synthesize(
        self, question: str, state: State, last_chunks: list[ShownChunk], trace: T2RAGTrace, step: StepCallback
    ) -> None:
        facts = state.facts()
        if trace.stop_reason == "complete":
            mode, context = "complete", ""
        else:
            mode = "forced"
            lines = [f"Still unresolved: {fact_text(t)}" for t in state.searchable + state.fuzzy]
            if not getattr(self.reasoner, "supports_free_text", True):
                # the offline rules read the context as prose and would take a word of these lines
                # ("Still", a bridge entity) for the answer; an LLM reads them as the open questions
                lines = []
            if trace.stop_reason == "no_open_triplets":
                # placeholder-free triplets straight from the decomposition restate the question's own
                # claims ("X is American"); nothing verified them, so they are context, not facts
                lines = [f"Claim in the question: {f}" for f in facts]
                facts = []
            context = "\n".join(lines + ([""] if lines else []) + [chunk_for_solver(c) + "\n" for c in last_chunks])
            context = context.strip()
        t0 = time.perf_counter()
        trace.synthesis = SynthesisTrace(mode=mode, facts=facts, context=context)
        text, call, _ = self._call("answer", lambda: self.reasoner.answer(question, context, facts=facts), "")
        trace.synthesis.call, trace.synthesis.answer = call, str(text or "").strip()
        trace.synthesis.seconds = time.perf_counter() - t0
        step(f"answer ({mode}): {trace.synthesis.answer or '(none)'}", trace.synthesis)

    def _call_solve(self, question, resolved_q, open_q, evidence):
        return self._call("solve", lambda: self.reasoner.solve(question, resolved_q, open_q, evidence), SolveResult())

    # --- CLI ------------------------------------------------------------------------------------

    @staticmethod
    def summarize(result: Result) -> list[str]:
        trace: T2RAGTrace | None = result.trace
        if trace is None:
            return [f"error: {result.error}"] if result.error else []
        lines = []
        if trace.decomposition is not None:
            d = trace.decomposition
            lines.append(f"decompose: {d.state.counts()}, {_tokens(d.call)}" + (f" [{d.failure}]" if d.failure else ""))
        for r in trace.rounds:
            solve = _tokens(r.solve_call) if r.solve_call else f"no solve ({r.solve_skipped})"
            if r.pool_size == 0:
                solve += "; no proposition matched"
            bound = ", ".join(f"{b.placeholder}={b.value}" for b in r.bindings if b.applied_to)
            lines.append(
                f"round {r.index}: {r.state_before.counts()} -> {r.state_after.counts()}; "
                f"{len(r.queries)} queries, {len(r.walked)} propositions, {len(r.chunks)} chunks; "
                f"{solve}"
                + (f"; {bound}" if bound else "")
                + (f" [{r.solve_call.error}]" if r.solve_call and r.solve_call.error else "")
            )
        lines.append(f"stop: {trace.stop_reason} ({STOP_REASONS.get(trace.stop_reason, '')})")
        if trace.synthesis is not None:
            s = trace.synthesis
            lines.append(
                f"answer ({s.mode}, {len(s.facts)} facts): {s.answer!r}, {_tokens(s.call)}"
                + (f" [{s.call.error}]" if s.call and s.call.error else "")
            )
        return lines


@dataclass
class _Loop:
    """What the rounds of one question remember: chunks shown, query texts asked (a round asks only
    what is new), what the solver was shown (never the same thing twice), the last round's chunks."""

    nothing_open: bool
    seen: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    prompts: set[tuple] = field(default_factory=set)
    last_chunks: list[ShownChunk] = field(default_factory=list)


def _tokens(call: LLMCall | None) -> str:
    if call is None:
        return "no call"
    return f"{call.prompt_tokens}+{call.completion_tokens} tokens" + (" (cached)" if call.cached else "")


def _attribute_bindings(
    bindings: list[BindingRecord], solved: Any, walked: list[WalkedProposition], chunks: list[ShownChunk]
) -> None:
    """Point each binding at the evidence it came from. The solver names a source per value ("P2",
    "C1": the labels it saw in the solve prompt); the engine checks that the named evidence states the
    value and quotes the sentence that does. With no source named, the value is looked up in the
    walked propositions and the link is marked `guessed`."""
    sources = solved.sources if isinstance(solved, SolveResult) else {}
    low_sources = {str(k).strip().lower(): str(v).strip() for k, v in sources.items()}
    for b in bindings:
        hint = low_sources.get(b.placeholder.lower(), "")
        label = parse_source_label(hint) if hint else None
        b.source = hint
        if label is not None:
            kind, i = label
            if kind == "P" and i < len(walked):
                _link_proposition(b, walked[i])
                b.source_kind, b.quote = "proposition", _quote(walked[i].text, b.value)
            elif kind == "C" and i < len(chunks):
                b.chunk_ids = [chunks[i].chunk_id]
                b.source_kind, b.quote = "chunk", _quote(chunks[i].text, b.value)
            else:
                b.source_kind = "unverified"
                b.note = b.note or f"source {hint} names no evidence shown in this round"
                continue
            if not b.quote:
                b.source_kind = "unverified"
                b.note = b.note or f"{hint} does not state {b.value!r}"
            continue
        match = None
        if hint:  # free text: a proposition's words
            match = next((w for w in walked if w.text.strip().lower() == hint.lower()), None) or next(
                (w for w in walked if hint.lower() in w.text.lower() or w.text.lower() in hint.lower()), None
            )
        if match is None and b.value:
            match = next((w for w in walked if b.value.lower() in w.text.lower()), None)
            if match is not None:
                b.source_kind = "guessed"
        elif match is not None:
            b.source_kind = "proposition"
        if match is not None:
            _link_proposition(b, match)
            b.quote = _quote(match.text, b.value)
        elif hint:
            b.proposition, b.source_kind = hint, "unverified"


def _link_proposition(b: BindingRecord, w: WalkedProposition) -> None:
    b.proposition, b.proposition_triplet_id, b.chunk_ids = w.text, w.triplet_id, list(w.chunk_ids)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _quote(text: str, value: str) -> str:
    """The sentence of `text` that contains `value` (case-insensitive), "" when none does."""
    want = _loose(value)
    if not want:
        return ""
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        if want in _loose(sentence):
            return sentence.strip()
    return ""


def _loose(text: str) -> str:
    """Lower case, punctuation as space, single spaces, padded: "Kubrick's" matches "kubrick s"."""
    return " " + " ".join(re.sub(r"[^\w]+", " ", text.lower()).split()) + " "


register_trace("t2rag", T2RAGTrace)
