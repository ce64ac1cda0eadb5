"""The test suite's in-memory corpus: every call of `CorpusView` (engine/store/protocol.py) over
chunks and triplets held in memory, with exact inner-product search.

The entity graph and its neighbourhoods are built by the engine's own functions
(engine.store.graph.entity_graph_of / neighbourhood_of), so a method tested here sees the graph the
SQLite corpus gives it. `tests/engine/llm/test_contracts.py` runs this corpus and the SQLite one through the
same contract. It counts its embed and search calls, for tests about how often a method asks.

    corpus = MemoryCorpus(embedder, [chunk("a#0", "A", "...")], [("A", "born in", "B", ("a#0",))])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.core.phrases import SYNONYM_THRESHOLD, SYNONYM_TOPK, PhraseGraph, synonym_pairs, text_processing
from engine.core.types import Chunk, Triplet
from engine.llm.base import OFFLINE_MODEL, LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult
from engine.store.graph import entity_graph_of, neighbourhood_of
from engine.store.settings import CorpusCounts
from tests._fake_embedder import HashEmbedder, hash_embed  # noqa: F401 - re-exported: the doubles' embedder


def chunk(cid: str, title: str, text: str, doc_id: str | None = None, position: int = 0) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=doc_id or title, position=position, title=title, text=text)


class MemoryCorpus:
    """chunks: `Chunk`s; triplets: (subject, predicate, object, chunk_ids) rows, ids from `first_tid`.
    `embed_title`: chunk vectors from "title\\ntext" (as the store does) or from the text alone."""

    def __init__(
        self,
        embedder: Any,
        chunks: Sequence[Chunk],
        triplets: Iterable[tuple[str, str, str, tuple[str, ...]]] = (),
        *,
        first_tid: int = 0,
        embed_title: bool = True,
    ):
        self.embedder = embedder
        self.name = "memory"
        self.path = f"memory-{id(self)}"
        self._chunks = list(chunks)
        self._by_id = {c.chunk_id: c for c in self._chunks}
        self._cids = [c.chunk_id for c in self._chunks]
        self._cvec = embedder.encode([f"{c.title}\n{c.text}" if embed_title else c.text for c in self._chunks])
        self._triplets = {i: Triplet(s, p, o, tuple(cids), i) for i, (s, p, o, cids) in enumerate(triplets, first_tid)}
        self._tids = list(self._triplets)
        self._tvec = (
            embedder.encode([t.proposition for t in self._triplets.values()])
            if self._triplets
            else np.zeros((0, getattr(embedder, "dim", 1)), dtype=np.float32)
        )
        self.embed_calls = 0
        self.search_calls = 0
        self.searched_k: list[int] = []
        self._graph = None

    # --- vectors -------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embed_calls += 1
        return self.embedder.encode(list(texts))

    @staticmethod
    def _search(vecs: np.ndarray, mat: np.ndarray, ids: list, k: int) -> list[list[tuple[Any, float]]]:
        if not len(ids):
            return [[] for _ in range(len(vecs))]
        scores = np.asarray(vecs) @ mat.T
        return [[(ids[j], float(row[j])) for j in np.argsort(-row, kind="stable")[:k]] for row in scores]

    def search_chunks(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        return self._search(query_vecs, self._cvec, self._cids, k)

    def search_propositions(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        self.search_calls += 1
        self.searched_k.append(k)
        return self._search(query_vecs, self._tvec, self._tids, k)

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        idx = {c: i for i, c in enumerate(self._cids)}
        return self._cvec[[idx[c] for c in chunk_ids]]

    def proposition_vectors(self, triplet_ids: Sequence[int]) -> np.ndarray:
        idx = {t: i for i, t in enumerate(self._tids)}
        return self._tvec[[idx[t] for t in triplet_ids]]

    # --- reading -------------------------------------------------------------------------------
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self._by_id[c] for c in chunk_ids if c in self._by_id]

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        return [c for c in self._chunks if doc_id is None or c.doc_id == doc_id]

    def get_triplets(self, triplet_ids: Sequence[int]) -> list[Triplet]:
        return [self._triplets[i] for i in triplet_ids if i in self._triplets]

    def triplets(self, chunk_ids: Sequence[str] | None = None) -> list[Triplet]:
        if chunk_ids is None:
            return list(self._triplets.values())
        want = set(chunk_ids)
        return [t for t in self._triplets.values() if want.intersection(t.chunk_ids)]

    def entity_graph(self):
        if self._graph is None:
            self._graph = entity_graph_of(self._triplets.values())
        return self._graph

    def entity_neighbourhood(self, entities: Iterable[str], hops: int, per_entity: int = -1, keep=()):
        return neighbourhood_of(self.entity_graph(), entities, hops, per_entity, keep)

    def phrase_graph(self, topk: int = SYNONYM_TOPK, threshold: float = SYNONYM_THRESHOLD, on_progress=None):
        """HippoRAG 2's phrase graph, computed from the triplets once per synonym setting (the rules
        of engine/core/phrases.py; the SQLite corpus keeps it in its database instead)."""
        memo = self.__dict__.setdefault("_phrase_graphs", {})
        if (topk, threshold) not in memo:
            phrases = sorted({text_processing(x) for t in self._triplets.values() for x in (t.subject, t.object)})
            vecs = self.embedder.encode(phrases) if phrases else np.zeros((0, 1), np.float32)
            edges = synonym_pairs(phrases, vecs, topk, threshold)
            memo[(topk, threshold)] = PhraseGraph(
                tuple(phrases), tuple(edges), topk, threshold, how="computed in memory"
            )
        return memo[(topk, threshold)]

    def counts(self) -> CorpusCounts:
        return CorpusCounts(
            documents=len({c.doc_id for c in self._chunks}),
            chunks=len(self._chunks),
            triplets=len(self._triplets),
            questions=0,
            extracted=len(self._chunks),
            pending=0,
            failed=0,
        )


# --- the scripted reasoner ----------------------------------------------------------------------


@dataclass(frozen=True)
class Unparseable:
    """A reply the reasoner could not parse: the job returns its empty result and records the error."""

    raw: str = "Sorry, I cannot help with that."


def Q(s: str, p: str, o: str) -> QueryTriplet:
    return QueryTriplet(s, p, o)


def _tokens(obj: Any) -> int:
    return len(str(obj).split())


class ScriptedReasoner:
    """The suite's one scripted Reasoner: implements the protocol directly (no prompts, no parsing),
    so tests pin a method's logic independently of how LLMReasoner words its prompts. Each job takes
    its replies from a script; a reply can be a value, an `Unparseable(...)` (the job returns its
    empty result with `call.error` set, as a real reasoner does on a bad reply) or an exception to
    raise. `by_question` answers by question instead ("unknown" for any other), as KG2RAG and the
    baselines' tests script it; `free_text=False` refuses `chat` as the offline rules do."""

    name = "scripted-test"
    supports_free_text = True

    def __init__(
        self,
        decomposition: Any = (),
        solves: list[Any] | None = None,
        answers: list[Any] | None = None,
        chats: list[Any] | None = None,
        *,
        by_question: dict[str, str] | None = None,
        name: str | None = None,
        free_text: bool = True,
    ):
        self.by_question = by_question
        if name is not None:
            self.name = name
        if not free_text:
            self.supports_free_text = False
        self.decomposition = decomposition
        self.solves = list(solves or [])
        self.answers = list(answers or ["scripted answer"])
        self.chats = list(chats or [])
        self.solve_inputs: list[tuple[list[QueryTriplet], list[QueryTriplet], Evidence]] = []
        self.answer_inputs: list[tuple[str, list[str] | None]] = []
        self.chat_inputs: list[list[dict[str, str]]] = []

    def _call(self, job: str, prompt: Any, reply: Any, parsed: Any = None, error: str = "") -> LLMCall:
        messages = [{"role": "user", "content": str(prompt)}]
        return LLMCall(
            job=job,
            model=self.name,
            messages=messages,
            response=str(reply),
            parsed=parsed,
            prompt_tokens=_tokens(prompt),
            completion_tokens=_tokens(reply),
            latency=0.001,
            error=error,
        )

    @staticmethod
    def _next(script: list[Any], default: Any) -> Any:
        reply = script.pop(0) if script else default
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def extract(self, title: str, text: str):
        return [], self._call("extract", text, "[]")

    def decompose(self, question: str):
        reply = self.decomposition
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Unparseable):
            return [], self._call("decompose", question, reply.raw, error="could not parse the decomposition")
        triplets = list(reply)
        return triplets, self._call(
            "decompose", question, [t.text() for t in triplets], parsed=[list(t.parts) for t in triplets]
        )

    def solve(self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet], evidence: Evidence):
        self.solve_inputs.append((list(resolved), list(open_triplets), evidence))
        reply = self._next(self.solves, SolveResult())
        prompt = (question, [t.text() for t in open_triplets], evidence.propositions, evidence.chunks)
        if isinstance(reply, Unparseable):
            return SolveResult(), self._call("solve", prompt, reply.raw, error="could not parse the solver reply")
        return reply, self._call("solve", prompt, reply, parsed={"bindings": dict(reply.bindings)})

    def answer(self, question: str, context: str, *, facts: list[str] | None = None):
        self.answer_inputs.append((context, None if facts is None else list(facts)))
        if self.by_question is not None:
            reply: Any = self.by_question.get(question, "unknown")
        else:
            reply = self._next(self.answers, "scripted answer")
        if isinstance(reply, Unparseable):
            return "", self._call("answer", (question, context, facts), reply.raw, error="empty answer")
        return reply, self._call("answer", (question, context, facts), reply, parsed=reply)

    @property
    def contexts(self) -> list[str]:
        """The context of every answer call, in order."""
        return [context for context, _ in self.answer_inputs]

    def chat(self, job: str, messages: list[dict[str, str]]):
        if not self.supports_free_text:
            raise NotImplementedError(f"{self.name} cannot write free text")
        self.chat_inputs.append(messages)
        reply = self._next(self.chats, "So the answer is: unknown.")
        return reply, self._call(job, messages, reply)


class OfflineLikeReasoner(ScriptedReasoner):
    """A reasoner without free text, as the offline rules are."""

    name = OFFLINE_MODEL
    supports_free_text = False

    def chat(self, job, messages):
        raise NotImplementedError("the offline reasoner cannot write free text")
