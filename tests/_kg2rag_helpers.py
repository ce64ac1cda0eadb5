"""Test helpers for KG2RAG and the baselines: a scripted reasoner, and the suite's one in-memory
corpus (tests/doubles.py) and the engine's entity graph for hand-made triplets."""

from __future__ import annotations

from engine.core.types import Chunk, Triplet
from engine.store.graph import entity_graph_of
from tests.doubles import MemoryCorpus as _MemoryCorpus
from tests.doubles import ScriptedReasoner as _Scripted
from tests.doubles import chunk  # noqa: F401 - re-exported for the tests


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
