"""IRCoT-style baseline: interleave one chain-of-thought sentence with one retrieval, then answer.

    result = IRCoT(reasoner).answer(question, corpus, IRCoTSettings(k=5, steps=3))

1. Retrieve the top-`k` chunks for the question.
2. Up to `steps` times: ask for the next reasoning sentence over every chunk collected so far (the
   IRCoT step prompt); stop when the sentence says "answer is"; otherwise retrieve the top-`k`
   chunks for that sentence and add the new ones.
3. Answer from the collected chunks and the reasoning (one more call).

Every step resends all collected passages plus the growing chain of thought: that token bill is
what T2RAG, passing compact triplets between rounds, claims to cut. The offline reasoner cannot
write free text, so IRCoT refuses to run on it instead of pretending.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from engine.llm.base import LLMCall, LLMError
from engine.methods.base import MethodDefaults, Result, StepCallback, Usage, register_trace
from engine.methods.common import clean_call
from engine.methods.t2rag.trace import ShownChunk
from engine.reasoners import prompts
from engine.store.protocol import CorpusView

UNAVAILABLE = "IRCoT needs a real LLM; the offline reasoner cannot write chain-of-thought"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_ANSWER_IS = re.compile(r"answer is", re.IGNORECASE)


@dataclass(frozen=True)
class IRCoTSettings:
    """IRCoT knobs; `steps` plays the role of T2RAG's round cap N."""

    k: int = 5
    """Chunks retrieved for the question and for each reasoning sentence."""

    steps: int = 3
    """Reasoning sentences at most (one LLM call each) before the final answer call."""

    def __post_init__(self) -> None:
        if self.k < 1 or self.steps < 1:
            raise ValueError(f"k and steps must be at least 1, got k={self.k}, steps={self.steps}")


@dataclass
class IRCoTRetrieval:
    query: str
    hits: list[tuple[str, float]] = field(default_factory=list)  # (chunk_id, score), best first
    new_chunk_ids: list[str] = field(default_factory=list)  # hits not collected before
    seconds: float = 0.0


@dataclass
class IRCoTStep:
    index: int  # 1-based
    call: LLMCall
    sentence: str = ""  # the one sentence kept from the reply
    retrieval: IRCoTRetrieval | None = None  # none after the final sentence
    llm_seconds: float = 0.0


@dataclass
class IRCoTTrace:
    settings: IRCoTSettings
    reasoner: str
    question: str
    initial: IRCoTRetrieval | None = None
    steps: list[IRCoTStep] = field(default_factory=list)
    chunks: list[ShownChunk] = field(default_factory=list)  # every collected chunk, in order
    #: answer_found | step_cap | cot_failed | unavailable | llm_error
    stop_reason: str = ""
    context: str = ""
    answer_call: LLMCall | None = None
    answer: str = ""
    total_seconds: float = 0.0

    def chunk_ids(self) -> list[str]:
        """Every chunk collected, in order."""
        return list(dict.fromkeys(c.chunk_id for c in self.chunks))

    def calls(self) -> list[LLMCall]:
        out = [s.call for s in self.steps]
        return out + ([self.answer_call] if self.answer_call is not None else [])


class _Abort(Exception):
    def __init__(self, call: LLMCall, message: str):
        super().__init__(message)
        self.call = call


def first_sentence(text: str) -> str:
    """IRCoT keeps one sentence per step; an "answer is" sentence is kept whole."""
    text = " ".join(text.split())
    m = _ANSWER_IS.search(text)
    if m:
        # keep up to the end of the answer sentence, even if the answer holds "Dr." or "U.S."
        return text[: m.start()].rsplit(". ", 1)[-1] + text[m.start() :].split("\n")[0]
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return parts[0] if parts else ""


class IRCoT(MethodDefaults):
    name = "ircot"
    settings_cls = IRCoTSettings
    trace_cls = IRCoTTrace
    whatif_knobs = {"k": (1, 20), "steps": (1, 6)}

    def __init__(self, reasoner: Any):
        self.reasoner = reasoner

    def _call(self, job: str, fn) -> tuple[Any, LLMCall, float]:
        t0 = time.perf_counter()
        try:
            value, call = fn()
        except LLMError as exc:
            call = LLMCall(job=job, model=self.reasoner.name, error=f"{exc.kind}: {exc}")
            raise _Abort(call, str(exc)) from None
        except Exception as exc:  # an odd reply must not lose the question
            value, call = "", LLMCall(job=job, model=self.reasoner.name, error=f"{type(exc).__name__}: {exc}")
        return value, clean_call(call), time.perf_counter() - t0

    def _retrieve(self, corpus: CorpusView, query: str, k: int, trace: IRCoTTrace, have: set[str]) -> IRCoTRetrieval:
        t0 = time.perf_counter()
        hits = [(str(c), float(s)) for c, s in corpus.search_chunks(corpus.embed([query]), k)[0]]
        new = [c for c, _ in hits if c not in have]
        for c in corpus.get_chunks(new):
            trace.chunks.append(ShownChunk(c.chunk_id, c.title, c.text))
            have.add(c.chunk_id)
        return IRCoTRetrieval(query=query, hits=hits, new_chunk_ids=new, seconds=time.perf_counter() - t0)

    def answer(
        self,
        question: str,
        corpus: CorpusView,
        settings: IRCoTSettings | None = None,
        on_step: StepCallback | None = None,
    ) -> Result:
        settings = settings or IRCoTSettings()
        step = on_step or (lambda label, payload: None)
        start = time.perf_counter()
        trace = IRCoTTrace(settings=settings, reasoner=str(getattr(self.reasoner, "name", "")), question=question)
        error = ""
        if not getattr(self.reasoner, "supports_free_text", False):
            trace.stop_reason, error = "unavailable", UNAVAILABLE
            step(f"unavailable: {UNAVAILABLE}", None)
        else:
            try:
                self._run(question, corpus, settings, trace, step)
            except _Abort as exc:
                trace.stop_reason, error = "llm_error", f"the LLM call failed: {exc}"
                if exc.call.job == "answer":
                    trace.answer_call = exc.call
                else:
                    trace.steps.append(IRCoTStep(index=len(trace.steps) + 1, call=exc.call))
                step(f"stopped: {error}", None)
        if not error and trace.answer_call and trace.answer_call.error and not trace.answer:
            error = f"the answer step failed: {trace.answer_call.error}"
        trace.total_seconds = time.perf_counter() - start
        return Result(
            method=self.name,
            question=question,
            answer=trace.answer,
            usage=Usage.from_calls(trace.calls(), trace.total_seconds),
            evidence_chunk_ids=[c.chunk_id for c in trace.chunks],
            stop_reason=trace.stop_reason,
            error=error,
            reasoner=trace.reasoner,
            trace=trace,
        )

    def _run(
        self, question: str, corpus: CorpusView, settings: IRCoTSettings, trace: IRCoTTrace, step: StepCallback
    ) -> None:
        have: set[str] = set()
        trace.initial = self._retrieve(corpus, question, settings.k, trace, have)
        step(f"retrieve: {len(trace.chunks)} chunks for the question", trace.initial)
        thoughts: list[str] = []
        trace.stop_reason = "step_cap"
        for index in range(1, settings.steps + 1):
            passages = [(c.title, c.text) for c in trace.chunks]
            messages = prompts.cot_step_messages(question, passages, thoughts)
            text, call, secs = self._call("cot", lambda messages=messages: self.reasoner.chat("cot", messages))
            sentence = first_sentence(str(text or ""))
            rec = IRCoTStep(index=index, call=call, sentence=sentence, llm_seconds=secs)
            trace.steps.append(rec)
            if not sentence:
                trace.stop_reason = "cot_failed"
                step(f"step {index}: no reasoning sentence ({call.error or 'empty reply'})", rec)
                break
            thoughts.append(sentence)
            if _ANSWER_IS.search(sentence):
                trace.stop_reason = "answer_found"
                step(f"step {index}: {sentence}", rec)
                break
            rec.retrieval = self._retrieve(corpus, sentence, settings.k, trace, have)
            step(f"step {index}: {sentence} (+{len(rec.retrieval.new_chunk_ids)} chunks)", rec)

        trace.context = prompts.format_passages([(c.title, c.text) for c in trace.chunks])
        if thoughts:
            trace.context += "\n\nReasoning: " + " ".join(thoughts)
        text, call, _ = self._call("answer", lambda: self.reasoner.answer(question, trace.context))
        trace.answer_call, trace.answer = call, str(text or "").strip()
        step(f"answer: {trace.answer or '(none)'}", call)

    @staticmethod
    def summarize(result: Result) -> list[str]:
        trace: IRCoTTrace | None = result.trace
        if trace is None or trace.stop_reason == "unavailable":
            return [f"error: {result.error}"] if result.error else []
        lines = [f"retrieve: {len(trace.initial.new_chunk_ids) if trace.initial else 0} chunks for the question"]
        for s in trace.steps:
            got = f"; +{len(s.retrieval.new_chunk_ids)} chunks" if s.retrieval else ""
            lines.append(
                f"step {s.index}: {s.sentence or '(none)'!s} [{s.call.prompt_tokens}+"
                f"{s.call.completion_tokens} tokens]{got}" + (f" [{s.call.error}]" if s.call.error else "")
            )
        lines.append(f"stop: {trace.stop_reason}; {len(trace.chunks)} chunks collected")
        if trace.answer_call is not None:
            lines.append(
                f"answer: {trace.answer!r} [{trace.answer_call.prompt_tokens}+"
                f"{trace.answer_call.completion_tokens} tokens]"
            )
        return lines


register_trace("ircot", IRCoTTrace)
