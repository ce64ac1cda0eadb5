"""The SQLite schema of a corpus (`corpus.sqlite`)."""

from __future__ import annotations

SCHEMA_VERSION = 1

#: The entity edge table's two indexes, each covering a neighbourhood read (entity, triplet id,
#: other entity): an edge is read from index pages alone, never from the table's rows, and each
#: entity's edges come in triplet id order (the capped read merges the two and stops at its limit).
#: They replace `edges_head` / `edges_tail` (entity only), which a corpus made before them has until
#: its first writable open (`CorpusGraph._cover_entity_edges`).
_EDGE_INDEXES = """
CREATE INDEX IF NOT EXISTS edges_head_cover ON entity_edges(head, tid, tail);
CREATE INDEX IF NOT EXISTS edges_tail_cover ON entity_edges(tail, tid, head);
"""
_OLD_EDGE_INDEXES = ("edges_head", "edges_tail")

#: `digest` (chunks, triplets, sentence_vecs): a digest of the row's content (engine/store/digests.py);
#: a corpus made before it gets the column at its first writable open.

#: Each context sentence's vector (float16), keyed by a 64-bit hash of its text, written with its
#: chunk (engine/store/sentences.py); a corpus made before it gets the table at its first write.
SENTENCE_TABLE = "CREATE TABLE IF NOT EXISTS sentence_vecs (key INTEGER PRIMARY KEY, vec BLOB NOT NULL, digest BLOB);"

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL,
    kind TEXT NOT NULL, sentences TEXT, added_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rid INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id), position INTEGER NOT NULL, title TEXT NOT NULL,
    text TEXT NOT NULL, sent_start INTEGER NOT NULL, sent_end INTEGER NOT NULL, vec BLOB NOT NULL, digest BLOB);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, position);
CREATE TABLE IF NOT EXISTS triplets (
    tid INTEGER PRIMARY KEY AUTOINCREMENT, subject TEXT NOT NULL, predicate TEXT NOT NULL,
    object TEXT NOT NULL, vec BLOB, digest BLOB, UNIQUE(subject, predicate, object));
CREATE TABLE IF NOT EXISTS triplet_sources (
    tid INTEGER NOT NULL REFERENCES triplets(tid), chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id),
    PRIMARY KEY (tid, chunk_id));
CREATE INDEX IF NOT EXISTS sources_chunk ON triplet_sources(chunk_id);
CREATE TABLE IF NOT EXISTS extraction (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id), status TEXT NOT NULL, model TEXT NOT NULL,
    error TEXT NOT NULL, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, cost REAL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS questions (qid TEXT PRIMARY KEY, position INTEGER NOT NULL, data TEXT NOT NULL);
"""
    + """
CREATE TABLE IF NOT EXISTS entity_edges (tid INTEGER PRIMARY KEY, head TEXT NOT NULL, tail TEXT NOT NULL);
"""
    + _EDGE_INDEXES
    + SENTENCE_TABLE
)

#: `entity_edges` holds each triplet's normalized entities, indexed both ways, so a question reads
#: the m-hop neighbourhood of its seeds with indexed lookups instead of loading every triplet.
_EDGES_VERSION = 1
