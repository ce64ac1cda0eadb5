"""The Reasoner protocol over the four jobs, and the values they pass around.

`Reasoner` is what the methods call: the four jobs both papers need (extract triplets, decompose a
question, fill placeholders, write the answer), plus free-form chat for IRCoT. `LLMReasoner`
implements the jobs with prompts over any `engine.llm.LLM`; `OfflineReasoner` implements them with
rules. The methods never know which one they hold, so the code path is the same with or without a
model. Every job returns its result together with an `engine.llm.base.LLMCall` for the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from engine.llm.base import LLMCall


@dataclass(frozen=True)
class QueryTriplet:
    """A triplet of the question with `?` placeholders: `("?performer", "child", "?child")`."""

    subject: str
    predicate: str
    object: str

    @property
    def parts(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    @property
    def placeholders(self) -> tuple[str, ...]:
        """Distinct placeholders in order of appearance (a bare `?` counts once per part)."""
        seen: list[str] = []
        for i, p in enumerate(self.parts):
            for token in placeholder_tokens(p):
                name = token if token != "?" else f"?#{i}"
                if name not in seen:
                    seen.append(name)
        return tuple(seen)

    def text(self) -> str:
        return f"({self.subject}, {self.predicate}, {self.object})"


#: A placeholder anywhere in a part: `?film` in "director of ?film", `?performer` in "?performer's
#: child", or a bare `?`; a question mark ending a word ("Who?") is not one.
PLACEHOLDER = re.compile(r"(?<![\w?])\?(?:[A-Za-z_][\w\-]*)?")


def placeholder_tokens(part: str) -> list[str]:
    """The placeholders in a part, in order (`["?film"]` for "director of ?film")."""
    return [m.group(0) for m in PLACEHOLDER.finditer(part or "")]


def is_placeholder(part: str) -> bool:
    """The part holds a placeholder somewhere (not only at its start)."""
    return PLACEHOLDER.search(part or "") is not None


@dataclass(frozen=True)
class Evidence:
    """What the solver sees in one T2RAG round."""

    propositions: tuple[str, ...]
    chunks: tuple[tuple[str, str], ...]  # (chunk_id, text); empty when chunk text is off


@dataclass(frozen=True)
class SolveResult:
    """The solver's output: placeholder bindings and rewritten triplets."""

    bindings: dict[str, str] = field(default_factory=dict)  # "?performer" -> "Kris Kristofferson"
    triplets: tuple[QueryTriplet, ...] = ()  # triplets the solver returned, possibly rewritten
    # where each binding came from, when the reasoner says: "?x" -> a label of the evidence it was
    # shown, "P3" (the 3rd proposition) or "C2" (the 2nd chunk), see `source_label`; free text
    # (a proposition's words) is accepted too and matched against the propositions
    sources: dict[str, str] = field(default_factory=dict)


def source_label(kind: str, index: int) -> str:
    """The label the solver sees in front of the `index`-th (0-based) proposition ("P") or chunk ("C")."""
    return f"{kind}{index + 1}"


def parse_source_label(label: str) -> tuple[str, int] | None:
    """("P", 0) for "P1" / "[P1]" / "p1"; None for anything else."""
    m = re.fullmatch(r"\[?\s*([PpCc])\s*(\d{1,4})\s*\]?", str(label).strip())
    if not m or int(m.group(2)) < 1:
        return None
    return m.group(1).upper(), int(m.group(2)) - 1


@runtime_checkable
class Reasoner(Protocol):
    """The four jobs both methods need. `name` appears in traces (`offline-rules` or the model)."""

    name: str
    #: False for the offline reasoner: free-form chain-of-thought (IRCoT) needs a real LLM.
    supports_free_text: bool

    def extract(self, title: str, text: str) -> tuple[list[tuple[str, str, str]], LLMCall]:
        """Triplets stated by one chunk (already filtered and deduped)."""
        ...

    def decompose(self, question: str) -> tuple[list[QueryTriplet], LLMCall]:
        """Query triplets with placeholders; an empty list when nothing parsed (call.error says why)."""
        ...

    def solve(
        self, question: str, resolved: list[QueryTriplet], open_triplets: list[QueryTriplet], evidence: Evidence
    ) -> tuple[SolveResult, LLMCall]:
        """Fill placeholders of `open_triplets` from the evidence."""
        ...

    def answer(self, question: str, context: str, *, facts: list[str] | None = None) -> tuple[str, LLMCall]:
        """A short factoid answer (`yes`/`no` for yes/no questions) from context and/or facts.
        `facts` given (even empty) means the caller answers from the clues it holds: with nothing
        usable in them and no context, an empty answer is "no answer", not a failed call."""
        ...

    def chat(self, job: str, messages: list[dict[str, str]]) -> tuple[str, LLMCall]:
        """Free-form completion (IRCoT). Raises `NotImplementedError` when unsupported."""
        ...
