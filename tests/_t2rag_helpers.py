"""Test doubles for T2RAG and IRCoT: a scripted Reasoner and a small in-memory corpus.

`ScriptedReasoner` implements the Reasoner protocol directly (no prompts, no parsing), so these
tests pin the method's state machine independently of how LLMReasoner words its prompts. Each job
takes its replies from a script; a reply can be a value, an `Unparseable(...)` (the job returns
its empty result with `call.error` set, as a real reasoner does on a bad reply) or an exception
to raise.

`FakeCorpus` offers the Corpus calls T2RAG and IRCoT use (embed, search_propositions,
search_chunks, get_triplets, get_chunks) over a bag-of-words hashing embedder: deterministic and
instant, enough to drive the state machine. Retrieval quality is tested on a real corpus with the
bundled embedder elsewhere.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


from engine.llm.base import LLMCall
from engine.reasoners.base import Evidence, QueryTriplet, SolveResult
from engine.types import Chunk
from tests.doubles import HashEmbedder, MemoryCorpus, hash_embed  # noqa: F401 - hash_embed re-exported

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Unparseable:
    """A reply the reasoner could not parse: the job returns its empty result and records the error."""

    raw: str = "Sorry, I cannot help with that."


def Q(s: str, p: str, o: str) -> QueryTriplet:
    return QueryTriplet(s, p, o)


def _tokens(obj: Any) -> int:
    return len(str(obj).split())


class ScriptedReasoner:
    name = "scripted-test"
    supports_free_text = True

    def __init__(self, decomposition: Any = (), solves: list[Any] | None = None, answers: list[Any] | None = None,
                 chats: list[Any] | None = None):
        self.decomposition = decomposition
        self.solves = list(solves or [])
        self.answers = list(answers or ["scripted answer"])
        self.chats = list(chats or [])
        self.solve_inputs: list[tuple[list[QueryTriplet], list[QueryTriplet], Evidence]] = []
        self.answer_inputs: list[tuple[str, list[str] | None]] = []
        self.chat_inputs: list[list[dict[str, str]]] = []

    def _call(self, job: str, prompt: Any, reply: Any, parsed: Any = None, error: str = "") -> LLMCall:
        messages = [{"role": "user", "content": str(prompt)}]
        return LLMCall(job=job, model=self.name, messages=messages, response=str(reply), parsed=parsed,
                       prompt_tokens=_tokens(prompt), completion_tokens=_tokens(reply), latency=0.001, error=error)

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
        return triplets, self._call("decompose", question, [t.text() for t in triplets],
                                    parsed=[list(t.parts) for t in triplets])

    def solve(self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet],
              evidence: Evidence):
        self.solve_inputs.append((list(resolved), list(open_triplets), evidence))
        reply = self._next(self.solves, SolveResult())
        prompt = (question, [t.text() for t in open_triplets], evidence.propositions, evidence.chunks)
        if isinstance(reply, Unparseable):
            return SolveResult(), self._call("solve", prompt, reply.raw, error="could not parse the solver reply")
        return reply, self._call("solve", prompt, reply, parsed={"bindings": dict(reply.bindings)})

    def answer(self, question: str, context: str, *, facts: list[str] | None = None):
        self.answer_inputs.append((context, None if facts is None else list(facts)))
        reply = self._next(self.answers, "scripted answer")
        if isinstance(reply, Unparseable):
            return "", self._call("answer", (question, context, facts), reply.raw, error="empty answer")
        return reply, self._call("answer", (question, context, facts), reply, parsed=reply)

    def chat(self, job: str, messages: list[dict[str, str]]):
        self.chat_inputs.append(messages)
        reply = self._next(self.chats, "So the answer is: unknown.")
        return reply, self._call(job, messages, reply)


class OfflineLikeReasoner(ScriptedReasoner):
    """A reasoner without free text, as the offline rules are."""

    name = "offline-rules"
    supports_free_text = False

    def chat(self, job, messages):
        raise NotImplementedError("the offline reasoner cannot write free text")


# --- corpus -------------------------------------------------------------------------------------

def FakeCorpus(chunk_rows: list[tuple[str, str, str]],  # noqa: N802 - a constructor
               triplet_rows: list[tuple[str, str, str, tuple[str, ...]]]) -> MemoryCorpus:
    """The suite's one in-memory corpus (tests/doubles.py) over the hashing embedder: chunks as
    (chunk_id, title, text), embedded by their text; triplets as (s, p, o, chunk_ids), ids from 1."""
    chunks = [Chunk(cid, cid.split("#")[0], i, title, text) for i, (cid, title, text) in enumerate(chunk_rows)]
    return MemoryCorpus(HashEmbedder(), chunks, triplet_rows, first_tid=1, embed_title=False)


def bobby_mcgee_corpus() -> FakeCorpus:
    """A tiny bridge-question corpus: who performed "Me and Bobby McGee", and that person's child."""
    chunks = [
        ("song#0", "Me and Bobby McGee", "Me and Bobby McGee is a song written and performed by Kris Kristofferson."),
        ("kris#0", "Kris Kristofferson", "Kris Kristofferson is an American singer. His child is Tracy Kristofferson."),
        ("roger#0", "Roger Miller", "Roger Miller recorded Me and Bobby McGee first. His child is Dean Miller."),
        ("janis#0", "Janis Joplin", "Janis Joplin had a posthumous hit with Me and Bobby McGee."),
        ("film#0", "Film A", "Film A is a 1990 film directed by Alice Smith."),
        ("film#1", "Film B", "Film B is a 1994 film directed by Bob Jones."),
        ("alice#0", "Alice Smith", "Alice Smith was born in Canada."),
        ("bob#0", "Bob Jones", "Bob Jones was born in Canada."),
    ]
    triplets = [
        ("Me and Bobby McGee", "performer", "Kris Kristofferson", ("song#0",)),
        ("Kris Kristofferson", "child", "Tracy Kristofferson", ("kris#0",)),
        ("Kris Kristofferson", "nationality", "American", ("kris#0",)),
        ("Roger Miller", "recorded", "Me and Bobby McGee", ("roger#0",)),
        ("Roger Miller", "child", "Dean Miller", ("roger#0",)),
        ("Janis Joplin", "hit", "Me and Bobby McGee", ("janis#0",)),
        ("Film A", "director", "Alice Smith", ("film#0",)),
        ("Film B", "director", "Bob Jones", ("film#1",)),
        ("Alice Smith", "born in", "Canada", ("alice#0",)),
        ("Bob Jones", "born in", "Canada", ("bob#0",)),
        # stated by two chunks: the walk must cover both
        ("Me and Bobby McGee", "song by", "Kris Kristofferson", ("song#0", "kris#0")),
    ]
    return FakeCorpus(chunks, triplets)
