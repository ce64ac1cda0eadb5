"""Corpora on disk: a Workspace folder holding one folder per corpus.

A corpus folder holds `corpus.sqlite` (documents, chunks with their vectors, triplets with every
source chunk, extraction status per chunk, questions, settings) and two FAISS index files
(`chunks.index`, `propositions.index`). SQLite is the source of truth, vectors included; the index
files are derived and carry a stamp of the database state they were built from (the corpus's random
token and a random generation drawn at every write, so a database copied back or rolled back never
matches an index built later). Opening a corpus loads the files; when a file is missing, broken or
stale it is rebuilt from the stored vectors, so a reopen never re-embeds and never calls an LLM.

Writers take an exclusive lock file, so two processes extracting into or adding to one corpus are
serialized (or told, after a wait, that the corpus is busy).

The package: `corpus.py` (the Corpus and its core), `lock.py`, `indexes.py`, `reads.py`, `graph.py`,
`phrase_graph.py` (HippoRAG 2's phrase nodes and synonym edges, kept in tables of `corpus.sqlite`),
`writes.py` (the Corpus's parts), `workspace.py`, `schema.py`, `settings.py`, `errors.py`, and
`protocol.py`: the read interface (`CorpusView`) methods are typed against.
"""

from engine.store.corpus import Corpus
from engine.store.errors import CorpusBusyError, CorpusError, validate_name
from engine.store.protocol import CorpusView
from engine.store.schema import _SCHEMA, SCHEMA_VERSION
from engine.store.settings import (
    AUTO_HNSW_AT,
    CorpusCounts,
    CorpusSettings,
    DocumentInfo,
)
from engine.store.util import embedding_text, set_aside_non_file
from engine.store.workspace import Workspace, open_workspace

__all__ = [
    "_SCHEMA",
    "AUTO_HNSW_AT",
    "Corpus",
    "CorpusBusyError",
    "CorpusCounts",
    "CorpusError",
    "CorpusSettings",
    "CorpusView",
    "DocumentInfo",
    "SCHEMA_VERSION",
    "Workspace",
    "embedding_text",
    "open_workspace",
    "set_aside_non_file",
    "validate_name",
]
