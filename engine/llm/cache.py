"""A persistent LLM response cache in SQLite, shared by threads and processes.

The key is the sha256 of everything that determines the reply (model, api_base, messages and
sampling parameters) and never the API key: two users with different keys asking the same model
the same thing get the same answer, and the key never touches the disk.

WAL mode lets readers proceed while one writer commits; the busy timeout makes a second process
wait for the lock instead of failing. Each thread gets its own connection because sqlite3
connections must not be shared across threads without external locking.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(model: str, api_base: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    """sha256 over a canonical JSON of the request. Callers must not put secrets in `params`."""
    blob = json.dumps(
        {"model": model, "api_base": api_base.rstrip("/"), "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int


class ResponseCache:
    def __init__(self, path: Path | str, busy_timeout: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        conn = self._conn()
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(_SCHEMA)
        conn.commit()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout)
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> CachedResponse | None:
        """The cached reply, or None (also when the cache cannot be read: a miss costs money, a
        crash would cost the run)."""
        try:
            row = (
                self._conn()
                .execute("SELECT text, model, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        except sqlite3.Error as exc:
            log.warning("LLM cache %s unreadable (%s); calling the provider", self.path, exc)
            return None
        return CachedResponse(*row) if row else None

    def put(self, key: str, resp: CachedResponse) -> None:
        """Store a reply; a failed write (disk full, read-only) is logged, never raised, so a
        paid-for reply still reaches the caller."""
        conn = self._conn()
        try:
            with conn:  # one short transaction per write
                conn.execute(
                    "INSERT OR REPLACE INTO responses (key, model, text, prompt_tokens, completion_tokens, created)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (key, resp.model, resp.text, resp.prompt_tokens, resp.completion_tokens, time.time()),
                )
        except sqlite3.Error as exc:
            log.warning("LLM cache %s not written (%s)", self.path, exc)

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
