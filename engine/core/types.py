"""Typed records that cross module lines: documents, chunks, triplets, questions.

Everything here is a plain frozen dataclass so it can be compared, hashed where useful and
turned into JSON with `dataclasses.asdict`. No module passes raw dicts to another.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Document:
    """One source document before chunking.

    `doc_id` is stable: the same title and text always give the same id, so re-adding a file
    is recognised and the chunk ids derived from it do not move.
    `sentences` is set when the source already comes split (HotpotQA, 2Wiki): it keeps the
    dataset's sentence numbering, which gold supporting facts refer to.
    """

    doc_id: str
    title: str
    text: str
    source: str = ""  # file name or dataset name it came from
    kind: str = "text"  # text | markdown | pdf | html | hotpotqa | musique | 2wiki | corpus_json
    sentences: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit. `sent_start`/`sent_end` (inclusive, exclusive) index the document's
    sentences, so sentence-level gold facts `(title, sent_id)` can be mapped onto chunks."""

    chunk_id: str
    doc_id: str
    position: int
    title: str
    text: str
    sent_start: int = 0
    sent_end: int = 0


@dataclass(frozen=True)
class Triplet:
    """`(subject, predicate, object)`; `chunk_ids` lists every chunk that states it."""

    subject: str
    predicate: str
    object: str
    chunk_ids: tuple[str, ...] = ()
    triplet_id: int | None = None

    @property
    def proposition(self) -> str:
        """The verbalized triplet that the proposition index embeds."""
        return f"{self.subject} {self.predicate} {self.object}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True)
class Question:
    """A question stored with a corpus, with its gold answer(s) and gold support.

    `answers[0]` is the canonical answer; the rest are aliases.
    `supporting_facts` are `(title, sent_id)` pairs; `supporting_titles` are gold paragraph titles.
    """

    qid: str
    question: str
    answers: tuple[str, ...] = ()
    qtype: str = ""  # bridge | comparison | 2hop | ...
    supporting_facts: tuple[tuple[str, int], ...] = ()
    supporting_titles: tuple[str, ...] = ()
    dataset: str = ""
    supporting_docs: tuple[str, ...] = ()
    """Doc ids of the gold paragraphs when the dataset names paragraphs themselves (MuSiQue's
    `idx` + `is_supporting`): retrieval is then scored by paragraph, as MuSiQue's SupportMetric
    does, not by title (two paragraphs may share one title)."""
    answerable: bool = True
    """False for MuSiQue-Full's unanswerable instances, which its official script does not score."""
    evidence: tuple[str, ...] = ()
    """Gold evidence given as text (`evidence`: quoted spans), located in the chunks at evaluation."""

    @property
    def answer(self) -> str:
        return self.answers[0] if self.answers else ""


@dataclass(frozen=True)
class ExtractionStatus:
    """Per-chunk extraction state, persisted so an interrupted run resumes."""

    chunk_id: str
    status: str  # pending | done | failed
    model: str = ""
    error: str = ""
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class ScoredChunk:
    chunk: Chunk
    score: float


@dataclass(frozen=True)
class ScoredTriplet:
    triplet: Triplet
    score: float


@dataclass
class IngestReport:
    """What an ingestion did: counts added, and one readable message per rejected input.

    A bad file never stops the batch; it lands in `errors` as `(path, message)`.
    """

    documents_added: int = 0
    documents_skipped: int = 0  # already present (same doc_id)
    chunks_added: int = 0
    questions_added: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors
