"""The engine half: settings, a trace with `chunk_ids()` (it round-trips through JSON as any
dataclass of plain fields does), and the method class. Never imports streamlit."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from engine.llm.base import LLMCall
from engine.methods.base import MethodDefaults, Result, Usage, register_trace
from engine.methods.common import format_context

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class OverlapSettings:
    k: int = 3
    """chunks given to the answer step: the ones sharing the most words with the question"""


@dataclass
class OverlapTrace:
    question: str
    settings: OverlapSettings
    ranked: list[tuple[str, int]] = field(default_factory=list)  # (chunk id, words shared), best first
    context: str = ""
    call: LLMCall | None = None

    def chunk_ids(self) -> list[str]:
        return [cid for cid, _ in self.ranked]

    def calls(self) -> list[LLMCall]:
        return [self.call] if self.call is not None else []


class WordOverlap(MethodDefaults):
    name = "overlap"
    settings_cls = OverlapSettings
    trace_cls = OverlapTrace
    whatif_knobs = {"k": (1, 10)}  # a what-if may re-run it with another k

    def __init__(self, reasoner):
        self.reasoner = reasoner

    def answer(self, question, corpus, settings=None, on_step=None) -> Result:
        s = settings or OverlapSettings()
        t0 = time.perf_counter()
        words = set(_WORD.findall(question.lower()))
        scored = [(c.chunk_id, len(words & set(_WORD.findall(c.text.lower())))) for c in corpus.chunks()]
        tr = OverlapTrace(question, s, sorted(scored, key=lambda x: -x[1])[: s.k])
        if on_step:
            on_step(f"ranked: {len(tr.ranked)} chunks", tr)
        tr.context = format_context(corpus.get_chunks(tr.chunk_ids()))
        answer, tr.call = self.reasoner.answer(question, tr.context)
        return Result(
            self.name,
            question,
            answer,
            Usage.from_calls(tr.calls(), time.perf_counter() - t0),
            evidence_chunk_ids=tr.chunk_ids(),
            reasoner=getattr(self.reasoner, "name", ""),
            trace=tr,
        )

    @staticmethod
    def summarize(result: Result) -> list[str]:
        return [f"{cid}: {n} words shared" for cid, n in result.trace.ranked]


register_trace("overlap", OverlapTrace)  # saved runs of this method load back as OverlapTrace
