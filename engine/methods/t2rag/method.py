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

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.llm.base import LLMCall, LLMError
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.common import clean_call
from engine.methods.inputs import PaperInputs
from engine.methods.presets import describe, prompted
from engine.methods.t2rag import departures
from engine.methods.t2rag.retrieval import chunk_for_solver, retrieve_round
from engine.methods.t2rag.sources import attribute_bindings
from engine.methods.t2rag.state import State, UpdateOutcome, apply_solve, classify, fact_text
from engine.methods.t2rag.trace import (
    STOP_REASONS,
    DecompositionTrace,
    RoundTiming,
    RoundTrace,
    ShownChunk,
    StateTriplet,
    SynthesisTrace,
    T2RAGSettings,
    T2RAGTrace,
)
from engine.reasoners.base import Evidence, SolveResult
from engine.store.protocol import CorpusView

__all__ = ["T2RAG", "T2RAGSettings", "T2RAGTrace"]


NO_TRIPLETS = (
    "this corpus has no triplets yet: run the triplet extraction first (T2RAG retrieves through the proposition index)"
)


class _ProviderFailure(Exception):
    def __init__(self, call: LLMCall, exc: LLMError):
        super().__init__(str(exc))
        self.call = call


class _NoDecomposition(Exception):
    """`decompose_retry`: neither the decomposition nor its fix-up gave a triplet (the reference raises)."""


def prompt_set_name(settings: T2RAGSettings, *, fixup: bool = False) -> str:
    """The reasoner's prompt set for `settings` (engine.reasoners.prompts.prompt_set): the reference
    prompts read strictly or tolerantly, and for the retry their fix-up decomposition prompt."""
    if settings.prompts != "paper":
        return "tuned"
    return "t2rag-paper" + ("+tolerant" if settings.tolerant_replies else "") + ("+fixup" if fixup else "")


class T2RAG(MethodDefaults):
    name = "t2rag"
    settings_cls = T2RAGSettings
    trace_cls = T2RAGTrace
    whatif_knobs = {"k": (1, 20), "rounds": (1, 6)}
    preset_reasons = departures.REASONS
    preset_fixes = departures.FIXES
    run_departures = departures.RUN_DEPARTURES
    paper_inputs = PaperInputs(
        embedder=("nvidia/NV-Embed-v2",),
        triplets=("gpt-4o-mini", "gemini-2.5-flash"),
        reasoner=("gpt-4o-mini", "gemini-2.5-flash"),
        source="rockcor/T2RAG main.py (--embedding_name, --llm_name; OpenIE by the same LLM), main_gemini.py",
    )

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
        # the paper's prompts: the same reasoner building the reference code's prompts
        variant = prompted(self.reasoner, prompt_set_name(settings))
        if variant is not self.reasoner:
            return T2RAG(variant)._answer(question, corpus, settings, on_step)
        return self._answer(question, corpus, settings, on_step)

    def _answer(
        self, question: str, corpus: CorpusView, settings: T2RAGSettings, on_step: StepCallback | None
    ) -> Result:
        step = on_step or (lambda label, payload: None)
        start = time.perf_counter()
        trace = T2RAGTrace(settings=settings, reasoner=str(getattr(self.reasoner, "name", "")), question=question)
        trace.preset, trace.departures = describe(self.name, settings)
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
        except _NoDecomposition as fail:
            error, trace.stop_reason = str(fail), "no_decomposition"
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
        elif call.job == "decompose":
            trace.decomposition.retry_call, trace.decomposition.failure = call, call.error
        elif call.job == "answer":
            if trace.synthesis is None:
                trace.synthesis = SynthesisTrace(mode="failed")
            trace.synthesis.call = call
        elif trace.rounds and trace.rounds[-1].solve_call is None:
            trace.rounds[-1].solve_call = call

    def _run(
        self, question: str, corpus: CorpusView, settings: T2RAGSettings, trace: T2RAGTrace, step: StepCallback
    ) -> None:
        state = self._decompose(question, trace, step, settings)  # 1-2
        loop = _Loop(nothing_open=not state.triplets)
        if loop.nothing_open and state.resolved and not settings.retrieve_when_resolved:
            # the reference code's loop runs while a clue is open: with none, no round, and the
            # answer reads the decomposition's clues (nothing retrieved, so nothing is evidence)
            trace.stop_reason = "nothing_to_fill"
            step("nothing to fill: no round", None)
            self._synthesize(question, state, loop.shown, trace, step, settings)
            return
        for index in range(1, settings.rounds + 1):
            stop = self._round(index, question, corpus, settings, state, loop, trace, step)  # 3-6
            if stop:
                trace.stop_reason = stop
                break
        else:
            trace.stop_reason = "round_cap"
        self._synthesize(question, state, loop.shown, trace, step, settings)  # 7

    # 1-2. decompose and classify
    def _decompose(self, question: str, trace: T2RAGTrace, step: StepCallback, settings: T2RAGSettings) -> State:
        triplets, call, secs = self._call("decompose", lambda: self.reasoner.decompose(question), [])
        trace.decomposition = DecompositionTrace(call=call, seconds=secs)
        if not triplets and settings.decompose_retry:
            # the reference code asks again with its fix-up prompt, and raises when that fails too
            fixer = prompted(self.reasoner, prompt_set_name(settings, fixup=True))
            triplets, retry, more = self._call("decompose", lambda: fixer.decompose(question), [])
            trace.decomposition.retry_call, secs = retry, secs + more
        state = State.from_decomposition(list(triplets or []))
        last = trace.decomposition.retry_call or call
        failure = last.error or ("" if triplets else "the decomposition returned no triplet")
        trace.decomposition.triplets = list(state.resolved) + list(state.triplets)
        trace.decomposition.state, trace.decomposition.failure = state.snapshot(), failure
        trace.decomposition.seconds = secs
        step(f"decompose: {state.snapshot().counts()}" + (f" ({failure})" if failure else ""), trace.decomposition)
        if not triplets and settings.decompose_retry:
            raise _NoDecomposition(
                "the decomposition gave no query triplet, nor did the fix-up prompt "
                f"({failure}): the reference code ends the question here"
            )
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
        got = retrieve_round(corpus, question, index, state, settings, loop.asked, loop.seen, rnd.timing)
        rnd.queries, rnd.pool_size, rnd.walked, rnd.chunks = got.queries, got.pool_size, got.walked, got.chunks
        loop.shown += [c for c in got.chunks if c.chunk_id not in loop.seen]
        loop.seen.update(c.chunk_id for c in got.chunks)
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
        outcome = _fold(state, solved if isinstance(solved, SolveResult) else SolveResult(), settings, rnd)
        attribute_bindings(outcome.bindings, solved, rnd.walked, rnd.chunks if settings.include_chunk_text else [])
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
        if settings.early_stop and not outcome.new_searchable and not state.fuzzy:
            return "early_stop"
        return ""

    # 7. synthesize
    def _synthesize(
        self,
        question: str,
        state: State,
        shown: list[ShownChunk],
        trace: T2RAGTrace,
        step: StepCallback,
        settings: T2RAGSettings,
    ) -> None:
        facts = state.facts()
        if trace.stop_reason in ("complete", "nothing_to_fill"):
            mode, context = "complete", ""
        elif settings.forced_context == "paper" and trace.stop_reason != "no_open_triplets":
            # the reference code's final step reads the clues only: resolved and remaining searchable
            mode, context = "forced", ""
            facts = facts + [fact_text(t) for t in state.searchable]
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
            # every round's chunks, in the order shown (ours: SPEC's forced stop reads the last round's
            # only, and a round that repeats its queries shows the chunks ranked below the best ones)
            context = "\n".join(lines + ([""] if lines else []) + [chunk_for_solver(c) + "\n" for c in shown])
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
            lines.append(
                f"decompose: {d.state.counts()}, {_tokens(d.call)}"
                + (f"; fix-up retry {_tokens(d.retry_call)}" if d.retry_call else "")
                + (f" [{d.failure}]" if d.failure else "")
            )
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
    """What the rounds of one question remember: chunks shown (ids, and the chunks in the order
    first shown, for a forced answer), query texts asked (a round asks only what is new), what the
    solver was shown (never the same thing twice)."""

    nothing_open: bool
    seen: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)
    prompts: set[tuple] = field(default_factory=set)
    shown: list[ShownChunk] = field(default_factory=list)


def _fold(state: State, solved: SolveResult, settings: T2RAGSettings, rnd: RoundTrace) -> UpdateOutcome:
    """The solver's reply folded into the state; with `adopt_proposed`, its new triplets too."""
    outcome = apply_solve(state, solved)
    if settings.adopt_proposed:
        rnd.adopted = _adopt_proposed(state, solved, outcome)
    return outcome


def _adopt_proposed(state: State, solved: SolveResult, outcome: UpdateOutcome) -> list[str]:
    """The reference code's "newly traceable" clues: a triplet the solver returned that rewrites no
    open triplet enters the state, searchable with one placeholder or resolved with none (two or
    more: left out, as the reference keeps only one-placeholder clues). Returns the new state ids."""
    unmatched = set(outcome.unmatched)
    known = {fact_text(t).lower() for t in state.triplets + state.resolved}
    n = len(state.triplets) + len(state.resolved)
    taken = {t.id for t in state.triplets + state.resolved}
    adopted: list[str] = []
    for r in solved.triplets:
        if r.text() not in unmatched or fact_text(r).lower() in known:
            continue
        n += 1
        while f"t{n}" in taken:
            n += 1
        t = StateTriplet(f"t{n}", r.subject.strip(), r.predicate.strip(), r.object.strip())
        kind = classify(t)
        if kind == "fuzzy":
            continue
        taken.add(t.id)
        known.add(fact_text(t).lower())
        if kind == "resolved":
            state.resolved.append(t)
            outcome.newly_resolved.append(t.id)
        else:
            state.triplets.append(t)
            outcome.new_searchable.append(t.id)
        adopted.append(t.id)
    return adopted


def _tokens(call: LLMCall | None) -> str:
    if call is None:
        return "no call"
    return f"{call.prompt_tokens}+{call.completion_tokens} tokens" + (" (cached)" if call.cached else "")


register_trace("t2rag", T2RAGTrace)
