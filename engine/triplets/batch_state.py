"""Which chunks are in which provider batch: a small SQLite file in the corpus folder.

A batch is recorded in two steps so no kill can lose one: its input file id and chunk ids are
committed right after the upload ("submitting"), and its batch id right after the batch is created
("open"). A run that finds a "submitting" record asks the provider for a batch made from that
input file before creating one. A chunk held by a "submitting" or "open" record is never sent again;
when a batch is imported its record is closed and its chunk rows dropped, so any chunk it did not
answer is simply pending again. SQLite's rollback journal makes every step atomic and durable.

The `json+ner` style runs in two phases (engine.extraction_batch.ner): a batch of named-entity
requests (style "ner"), then a batch of triple requests whose prompts list those entities (style
"json+ner"). A finished NER batch's replies are stored here (`ner_replies`) in the same
transaction that closes it, so a kill never loses one nor asks for it twice; a chunk's reply is
dropped once its triplets are stored.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from engine.core.faults import fault_point

#: the file, next to the corpus's database (backups copy it with the rest of the folder)
STATE_FILE = "extraction_batches.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    input_file_id TEXT PRIMARY KEY,
    batch_id TEXT NOT NULL DEFAULT '',
    endpoint TEXT NOT NULL,           -- the API base the batch was created at
    model TEXT NOT NULL,
    style TEXT NOT NULL,
    state TEXT NOT NULL,              -- submitting | open | closed
    outcome TEXT NOT NULL DEFAULT '', -- the provider's final status
    requests INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_chunks (
    input_file_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    PRIMARY KEY (input_file_id, chunk_id)
);
CREATE TABLE IF NOT EXISTS ner_replies (   -- json+ner: phase 1's answer per chunk, until phase 2 stores it
    chunk_id TEXT PRIMARY KEY,
    entities TEXT NOT NULL,                -- JSON list of the entities the reply named
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class BatchRecord:
    input_file_id: str
    batch_id: str
    endpoint: str
    model: str
    style: str
    state: str
    requests: int


class BatchState:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, timeout=30.0)
        self._db.execute("PRAGMA synchronous=FULL")
        with self._db:
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def record_upload(self, input_file_id: str, chunk_ids: list[str], endpoint: str, model: str, style: str) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO batches (input_file_id, endpoint, model, style, state, requests, created) "
                "VALUES (?, ?, ?, ?, 'submitting', ?, ?)",
                (input_file_id, endpoint, model, style, len(chunk_ids), time.time()),
            )
            self._db.executemany("INSERT INTO batch_chunks VALUES (?, ?)", [(input_file_id, cid) for cid in chunk_ids])

    def set_batch(self, input_file_id: str, batch_id: str) -> None:
        with self._db:
            self._db.execute(
                "UPDATE batches SET batch_id = ?, state = 'open' WHERE input_file_id = ?", (batch_id, input_file_id)
            )

    def close_batch(self, input_file_id: str, outcome: str) -> None:
        with self._db:
            self._db.execute(
                "UPDATE batches SET state = 'closed', outcome = ? WHERE input_file_id = ?", (outcome, input_file_id)
            )
            self._db.execute("DELETE FROM batch_chunks WHERE input_file_id = ?", (input_file_id,))

    def close_ner_batch(self, input_file_id: str, outcome: str, replies: dict[str, tuple[list[str], int, int]]) -> None:
        """A finished NER batch: its replies (chunk id -> (entities, prompt tokens, completion
        tokens)) stored and its record closed in one transaction."""
        import json

        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO ner_replies VALUES (?, ?, ?, ?)",
                [(cid, json.dumps(e, ensure_ascii=False), p, c) for cid, (e, p, c) in replies.items()],
            )
            fault_point("batch.ner_before_commit")  # a kill here: nothing of this import is kept
            self._db.execute(
                "UPDATE batches SET state = 'closed', outcome = ? WHERE input_file_id = ?", (outcome, input_file_id)
            )
            self._db.execute("DELETE FROM batch_chunks WHERE input_file_id = ?", (input_file_id,))

    def ner_replies(self, chunk_ids: list[str] | None = None) -> dict[str, tuple[list[str], int, int]]:
        """Stored NER replies (of `chunk_ids`, else all): chunk id -> (entities, prompt, completion tokens)."""
        import json

        rows = self._db.execute("SELECT chunk_id, entities, prompt_tokens, completion_tokens FROM ner_replies")
        wanted = None if chunk_ids is None else set(chunk_ids)
        return {r[0]: (json.loads(r[1]), r[2], r[3]) for r in rows if wanted is None or r[0] in wanted}

    def drop_ner(self, chunk_ids: list[str]) -> None:
        with self._db:
            self._db.executemany("DELETE FROM ner_replies WHERE chunk_id = ?", [(c,) for c in chunk_ids])

    def records(self, *states: str) -> list[BatchRecord]:
        marks = ", ".join("?" for _ in states)
        rows = self._db.execute(
            "SELECT input_file_id, batch_id, endpoint, model, style, state, requests FROM batches "
            f"WHERE state IN ({marks}) ORDER BY created, input_file_id",
            states,
        ).fetchall()
        return [BatchRecord(*r) for r in rows]

    def held_chunk_ids(self) -> set[str]:
        """Chunks in a batch not imported yet: never submitted again."""
        return {r[0] for r in self._db.execute("SELECT chunk_id FROM batch_chunks")}

    def chunk_ids(self, input_file_id: str) -> list[str]:
        rows = self._db.execute(
            "SELECT chunk_id FROM batch_chunks WHERE input_file_id = ? ORDER BY rowid", (input_file_id,)
        )
        return [r[0] for r in rows]


def held_by_batches(corpus) -> set[str]:
    """Chunks of `corpus` in a batch not imported yet ({} when it never used the batch API): the
    normal extraction leaves them alone, so a chunk is never paid for twice."""
    path = Path(getattr(corpus, "path", "") or ".") / STATE_FILE
    if not getattr(corpus, "path", None) or not path.is_file():
        return set()
    state = BatchState(path)
    try:
        return state.held_chunk_ids()
    finally:
        state.close()
