"""Test helpers for KG2RAG and the baselines: a scripted reasoner, and the suite's one in-memory
corpus (tests/doubles.py) and the engine's entity graph for hand-made triplets."""
from __future__ import annotations

from dataclasses import dataclass, field


from engine.llm.base import LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult
from engine.store.graph import entity_graph_of
from engine.types import Chunk, Triplet
from tests.doubles import MemoryCorpus as _MemoryCorpus
from tests.doubles import chunk  # noqa: F401 - re-exported for the tests


@dataclass
class ScriptedReasoner:
    """Answers from a script keyed by question (default "unknown"); records what it was sent."""

    script: dict[str, str] = field(default_factory=dict)
    name: str = "scripted"
    supports_free_text: bool = False
    contexts: list[str] = field(default_factory=list)

    def extract(self, title, text):
        return [], LLMCall(job="extract", model=self.name)

    def decompose(self, question):
        return [], LLMCall(job="decompose", model=self.name)

    def solve(self, question, resolved, open_triplets: list[QueryTriplet], evidence: Evidence):
        return SolveResult(), LLMCall(job="solve", model=self.name)

    def answer(self, question, context, *, facts=None):
        self.contexts.append(context)
        ans = self.script.get(question, "unknown")
        msgs = [{"role": "user", "content": f"{context}\n\nQuestion: {question}"}]
        return ans, LLMCall(job="answer", model=self.name, messages=msgs, response=ans, parsed=ans,
                            prompt_tokens=len(msgs[0]["content"].split()), completion_tokens=1)

    def chat(self, job, messages):
        raise NotImplementedError


def entity_graph(triplets: list[Triplet]):
    """The graph `Corpus.entity_graph()` returns for these triplets, built by the engine's function."""
    return entity_graph_of(triplets)


def MemoryCorpus(embedder, chunks: list[Chunk], triplets=()) -> _MemoryCorpus:  # noqa: N802 - a constructor
    """The suite's one in-memory corpus (tests/doubles.py) with triplet ids from 0."""
    return _MemoryCorpus(embedder, chunks, triplets, first_tid=0)

