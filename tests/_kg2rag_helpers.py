"""Test helpers for KG2RAG and the baselines: a scripted reasoner, and the suite's one in-memory
corpus (tests/doubles.py) and the engine's entity graph for hand-made triplets; an invented corpus
where KG2RAG's graph stage can push out its best seed (the seed guard's and `keep_seeds`' tests)."""

from __future__ import annotations

from engine.core.types import Chunk, Triplet
from engine.llm.base import LLMCall
from engine.methods.kg2rag.records import GraphEdge
from engine.store.graph import entity_graph_of
from tests.doubles import (
    HashEmbedder,
    chunk,  # noqa: F401 - re-exported for the tests
)
from tests.doubles import MemoryCorpus as _MemoryCorpus
from tests.doubles import ScriptedReasoner as _Scripted


def ScriptedReasoner(script: dict[str, str] | None = None, name: str = "scripted"):  # noqa: N802 - a constructor
    """The suite's one scripted reasoner (tests/doubles.py) answering by question ("unknown" for any
    other) and, like the offline rules, refusing free text."""
    return _Scripted(by_question=dict(script or {}), name=name, free_text=False)


def entity_graph(triplets: list[Triplet]):
    """The graph `Corpus.entity_graph()` returns for these triplets, built by the engine's function."""
    return entity_graph_of(triplets)


def MemoryCorpus(embedder, chunks: list[Chunk], triplets=()) -> _MemoryCorpus:  # noqa: N802 - a constructor
    """The suite's one in-memory corpus (tests/doubles.py) with triplet ids from 0."""
    return _MemoryCorpus(embedder, chunks, triplets, first_tid=0)


def E(u, v, cid, w, tid):  # noqa: N802 - a record constructor
    return GraphEdge(u, v, u, "r", v, tid, cid, w)


class Silent:
    """A reasoner that answers nothing: the tests look at the context, not the answer."""

    name = "silent"

    def answer(self, question, context, *, facts=None):
        return "", LLMCall(job="answer", model="silent")


QUESTION = "Which river flows through Paris?"


def lone_hub_corpus() -> _MemoryCorpus:
    """Seeds (k = 3): "lone" (closest to QUESTION; its triplet is off topic, so its tree ranks last),
    "hub" and "filler" (no triplet); the top tree, hub with two expanded chunks that share no word
    with the question, fills k on its own."""
    chunks = [
        Chunk("lone", "lone", 0, "Lone", "Which river flows through Paris? Lutetia was a Roman city"),
        Chunk("hub", "hub", 0, "Hub", "Paris river Seine"),
        Chunk("filler", "filler", 0, "Filler", "Water flows downhill"),
        Chunk("x0", "x0", 0, "X0", "Town zero market square"),
        Chunk("x1", "x1", 0, "X1", "Town one market hall"),
    ]
    trips = [
        ("Paris", "river", "Seine", ("hub",)),
        ("Town0", "near", "Paris", ("x0",)),
        ("Town1", "near", "Paris", ("x1",)),
        ("Lutetia", "old name", "Roman city", ("lone",)),
    ]
    return _MemoryCorpus(HashEmbedder(), chunks, trips)
