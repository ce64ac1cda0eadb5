"""What `corpus check` reports (`Finding`), what `--repair` did (`RepairReport`), and the parts
of a corpus folder both walk over."""

from __future__ import annotations

from dataclasses import dataclass, field

INDEXES = {
    "chunks": ("chunks.index", "chunk_gen", "SELECT rid, vec FROM chunks"),
    "propositions": ("propositions.index", "prop_gen", "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL"),
}
#: tables in the order a salvage copies them (parents before children)
TABLES = ("meta", "documents", "chunks", "triplets", "triplet_sources", "extraction", "questions")


@dataclass(frozen=True)
class Finding:
    part: str
    """`corpus.sqlite`, `chunks.index`, `propositions.index`"""
    message: str
    derived: bool
    """True when rebuilding from the database repairs it (an index file); False for the database."""

    def __str__(self) -> str:
        return f"{self.part}: {self.message}"


@dataclass
class RepairReport:
    actions: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    recovered_into: str = ""
    remaining: list[Finding] = field(default_factory=list)
