"""What a backup may hold: the files a backup of this version writes, each with a size limit.

A backup folder is untrusted input (engine.integrity.untrusted). Its manifest may name only the
files in `BACKUP_FILES`, and each file may hold at most what a corpus of the manifest's counts
can need (a fixed allowance plus so many bytes per document, chunk, triplet or question), or, when
the workspace sets one (`TRIPLET_LENS_BACKUP_MAX_MB`), that cap instead. Sizes are checked on the
open file before a byte of it is read or hashed; the refusal names the entry.

`BACKUP_FILES` is the one list of them: an index that keeps files of its own in the corpus folder
adds them here (`BACKUP_FILES["x.index"] = FileBound(...)`), and `backup` copies, `restore`
accepts, and `drop` records every file listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.store.errors import CorpusError

KIB = 1024
MIB = 1024 * KIB

#: the count names a manifest carries (`documents`, `chunks`, `triplets`, `questions`)
COUNTED = ("documents", "chunks", "triplets", "questions")


@dataclass(frozen=True)
class FileBound:
    """The most bytes one backup file may hold: `base` plus `per_row[count]` for each row counted."""

    base: int
    per_row: dict[str, int] = field(default_factory=dict)

    def limit(self, counts: dict[str, int]) -> int:
        return self.base + sum(size * max(0, int(counts.get(what, 0))) for what, size in self.per_row.items())


#: A stored vector of up to 8,192 float32 dimensions, its id, and an HNSW node's links.
_PER_VECTOR = 40 * KIB
#: The database: its pages and indexes (up to 64 MiB whatever the corpus holds, for the schema,
#: settings and extraction batches), a document's own row (title, source, sentence list; its text
#: is counted in its chunks), a chunk (text, its copy in the document and in the full-text index,
#: its vector, its sentences' vectors), a triplet (three strings, vector, links), a question.
_DATABASE = FileBound(64 * MIB, {"documents": 1 * MIB, "chunks": 1 * MIB, "triplets": 64 * KIB, "questions": 256 * KIB})

BACKUP_FILES: dict[str, FileBound] = {
    "corpus.sqlite": _DATABASE,
    # a drop's manifest lists a write-ahead log only when a damaged database could not fold it in
    "corpus.sqlite-wal": _DATABASE,
    "chunks.index": FileBound(4 * MIB, {"chunks": _PER_VECTOR}),
    "chunks.index.delta": FileBound(4 * MIB, {"chunks": _PER_VECTOR}),
    "propositions.index": FileBound(4 * MIB, {"triplets": _PER_VECTOR}),
    "propositions.index.delta": FileBound(4 * MIB, {"triplets": _PER_VECTOR}),
}

#: Files that drops of earlier builds listed in their manifests (they hashed every file of the
#: folder) and a backup does not copy: derived records and sidecars, the provider batches' state.
#: They are neither hashed nor copied; an undo-drop moves them along with the folder, as it moves
#: every file a manifest does not list (the corpus checks the derived ones again when it opens).
NOT_COPIED = (".verified", ".milvus.json", ".milvus.db", "extraction_batches.sqlite")


def is_legacy_derived(name: str) -> bool:
    return name.endswith(NOT_COPIED)


def check_listed(folder: Path, name: str) -> str:
    """`name` when a backup of this version writes such a file; else CorpusError naming the entry."""
    if name not in BACKUP_FILES and not is_legacy_derived(name):
        raise CorpusError(
            f"snapshot {folder}: manifest entry {name!r} is not a file a backup writes "
            f"({', '.join(BACKUP_FILES)}); the snapshot is refused"
        )
    return name


def size_limit(name: str, counts: dict[str, int], cap: int | None = None) -> tuple[int, str]:
    """(the most bytes file `name` of a backup with these counts may hold, what that limit is) for
    the refusal; the workspace's `cap`, when set, instead of the limit from the counts."""
    if cap is not None:
        return cap, "the cap set by TRIPLET_LENS_BACKUP_MAX_MB"
    held = ", ".join(f"{int(counts.get(w, 0))} {w}" for w in COUNTED)
    return BACKUP_FILES[name].limit(counts), f"a corpus of {held} (its manifest's counts) can need"
