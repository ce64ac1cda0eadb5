"""Small real corpora and fake methods for the evaluation tests."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from engine.core.chunking import ChunkingSettings
from engine.ingest.datasets import read_dataset
from engine.methods.base import Result, Usage

HOTPOT = Path(__file__).resolve().parent / "fixtures" / "qa" / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"


def hotpot_records(n: int) -> list[dict]:
    return json.loads(HOTPOT.read_text(encoding="utf-8"))[:n]


def make_hotpot_corpus(workspace, n: int = 4, name: str = "hp", mode: str = "paragraph"):
    """A corpus of the first `n` HotpotQA questions with their 10 paragraphs each."""
    data = read_dataset("hotpot.json", json.dumps(hotpot_records(n)))
    corpus = workspace.create(name, chunking=ChunkingSettings(mode=mode))
    corpus.add_documents(data.documents)
    corpus.add_questions(data.questions)
    return corpus


@dataclass
class FakeTrace:
    note: str = ""
    seen: list[str] = field(default_factory=list)


class OracleMethod:
    """Answers with the gold answer and the gold paragraphs' chunks; `calls` counts answers.
    `interrupt_at` raises KeyboardInterrupt on that call (1-based), as Ctrl-C would;
    `fail_on` raises a plain error for questions containing that text."""

    name = "oracle"

    def __init__(self, reasoner=None, *, interrupt_at: int = 0, fail_on: str = "", exc: BaseException | None = None):
        self.calls = 0
        self.asked: list[str] = []
        self.interrupt_at = interrupt_at
        self.fail_on = fail_on
        self.exc = exc

    def answer(self, question, corpus, settings=None, on_step=None) -> Result:
        self.calls += 1
        if self.interrupt_at and self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        if self.exc is not None:
            raise self.exc
        if self.fail_on and self.fail_on in question:
            raise RuntimeError("boom")
        self.asked.append(question)
        q = next(q for q in corpus.questions() if q.question == question)
        gold = set(q.supporting_titles)
        ids = [c.chunk_id for c in corpus.chunks() if c.title in gold]
        usage = Usage(
            calls=2, prompt_tokens=100, completion_tokens=10, cost=0.001, llm_time=0.5, engine_time=0.1, total_time=0.6
        )
        return Result("oracle", question, q.answer, usage, ids, "complete", reasoner="fake", trace=FakeTrace("ok", ids))
