"""Test helpers for KG2RAG and the baselines: a scripted reasoner, hand-made entity graphs and a
small in-memory corpus with the read side of the Corpus API (real embedder, exact search)."""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from engine.llm.base import LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult
from engine.textnorm import normalize_entity
from engine.types import Chunk, Triplet


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


def entity_graph(triplets: list[Triplet]) -> nx.MultiGraph:
    """The shape `Corpus.entity_graph()` returns."""
    g = nx.MultiGraph()
    for t in triplets:
        u, v = normalize_entity(t.subject), normalize_entity(t.object)
        g.add_node(u, label=t.subject)
        g.add_node(v, label=t.object)
        g.add_edge(u, v, key=t.triplet_id, subject=t.subject, predicate=t.predicate, object=t.object,
                   triplet_id=t.triplet_id, chunk_ids=tuple(t.chunk_ids))
    return g


class MemoryCorpus:
    """Chunks and triplets in memory; vectors from a real embedder; exact inner-product search."""

    def __init__(self, embedder, chunks: list[Chunk], triplets: list[tuple[str, str, str, tuple[str, ...]]] = ()):
        self.embedder = embedder
        self.path = f"memory-{id(self)}"
        self._chunks = list(chunks)
        self._by_id = {c.chunk_id: c for c in chunks}
        self._cvec = embedder.encode([f"{c.title}\n{c.text}" for c in chunks])
        self._triplets = [Triplet(s, p, o, tuple(cids), i) for i, (s, p, o, cids) in enumerate(triplets)]
        self._tvec = embedder.encode([t.proposition for t in self._triplets]) if self._triplets else None
        self.calls: dict[str, int] = {}

    def _count(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1

    def embed(self, texts):
        self._count("embed")
        return self.embedder.encode(list(texts))

    def search_chunks(self, query_vecs, k):
        sims = np.asarray(query_vecs) @ self._cvec.T
        out = []
        for row in sims:
            order = np.argsort(-row, kind="stable")[:k]
            out.append([(self._chunks[i].chunk_id, float(row[i])) for i in order])
        return out

    def chunk_vectors(self, chunk_ids):
        idx = {c.chunk_id: i for i, c in enumerate(self._chunks)}
        return self._cvec[[idx[c] for c in chunk_ids]]

    def proposition_vectors(self, triplet_ids):
        return self._tvec[list(triplet_ids)]

    def get_chunks(self, chunk_ids):
        return [self._by_id[c] for c in chunk_ids if c in self._by_id]

    def chunks(self, doc_id=None):
        return list(self._chunks)

    def triplets(self, chunk_ids=None):
        if chunk_ids is None:
            return list(self._triplets)
        want = set(chunk_ids)
        return [t for t in self._triplets if want.intersection(t.chunk_ids)]

    def entity_graph(self):
        return entity_graph(self._triplets)

    def counts(self):
        @dataclass
        class _Counts:
            chunks: int

        return _Counts(len(self._chunks))


def chunk(cid: str, title: str, text: str) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=title, position=0, title=title, text=text)
