"""Sentence vectors of the corpus's chunks, embedded once (engine/vectors/sentences.py says why).

`add_documents` embeds each new chunk's sentences in the same batch as the chunk and stores them in
the same transaction (`sentence_vecs`: a kill leaves both or neither, as with the chunk rows). The
offline answer step reads them through `sentence_vectors`, which embeds only what is not stored - a
sentence spanning two chunks of a context, or every sentence of a corpus made before this table -
and stores those too when the corpus is writable and not busy (else keeps them in memory), so an
older corpus fills its table as it is asked. `fill_sentence_vectors` fills it in one pass instead.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Chunk
from engine.store.base import CorpusBase
from engine.store.digests import row_digest
from engine.store.errors import CorpusBusyError
from engine.store.schema import SENTENCE_TABLE
from engine.store.util import embedding_text
from engine.vectors.sentences import pack, sentence_key, split_for_answers, unpack

#: sentences embedded at question time and not yet stored (read-only corpus, writer busy): kept
#: in memory up to this many (~30 MB of float32 384-d vectors)
MEMO_LIMIT = 20_000


class CorpusSentences(CorpusBase):
    """Sentence vectors (see the module docstring)."""

    _sentence_table_seen: bool = False
    _sentence_memo: OrderedDict[int, np.ndarray] | None = None

    if TYPE_CHECKING:  # defined by CorpusIndexes

        @property
        def embedder(self) -> Any: ...
        def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def _has_sentence_table(self) -> bool:
        if not self._sentence_table_seen:
            row = self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='sentence_vecs'")
            self._sentence_table_seen = row.fetchone() is not None
        return self._sentence_table_seen

    def _stored_sentence_vectors(self, keys: Sequence[int]) -> dict[int, bytes]:
        if not keys or not self._has_sentence_table():
            return {}
        return dict(self._in_query("SELECT key, vec FROM sentence_vecs WHERE key IN ({})", list(keys)))

    def _new_sentence_rows(
        self, chunks: Iterable[Chunk], on_progress: ProgressCallback = no_progress
    ) -> list[tuple[int, bytes]]:
        """(key, vector) of the chunks' sentences not stored yet, embedded (outside any lock)."""
        todo: dict[int, str] = {}
        for c in chunks:
            for s in split_for_answers(embedding_text(c)):
                todo.setdefault(sentence_key(s), s)
        with self._lock:
            stored = (
                {r[0] for r in self._in_query("SELECT key FROM sentence_vecs WHERE key IN ({})", list(todo))}
                if (todo and self._has_sentence_table())
                else set()
            )
        keys = [k for k in todo if k not in stored]
        if not keys:
            return []
        vecs = self._embed_batched([todo[k] for k in keys], on_progress, "embedding sentences")
        return [(k, pack(v)) for k, v in zip(keys, vecs)]

    def _store_sentence_rows(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """Inside a write transaction: the table (made here for a corpus from before it), the rows."""
        if not rows:
            return
        if not self._has_sentence_table():
            self._db.execute(SENTENCE_TABLE)
            self._sentence_table_seen = True
        if self._digests:
            self._db.executemany(
                "INSERT OR IGNORE INTO sentence_vecs(key, vec, digest) VALUES (?, ?, ?)",
                [(k, v, row_digest(k, v)) for k, v in rows],
            )
        else:
            self._db.executemany("INSERT OR IGNORE INTO sentence_vecs(key, vec) VALUES (?, ?)", rows)

    def _drop_sentence_rows(self, texts: Iterable[str]) -> None:
        """Inside a write transaction: the vectors of these chunk texts' sentences. A sentence another
        chunk also holds goes too, and is embedded again the next time a context shows it."""
        if not self._has_sentence_table():
            return
        keys = list({sentence_key(s) for t in texts for s in split_for_answers(t)})
        for i in range(0, len(keys), 900):
            part = keys[i : i + 900]
            self._db.execute(f"DELETE FROM sentence_vecs WHERE key IN ({','.join('?' * len(part))})", part)

    def sentence_vectors(self, sentences: Sequence[str]) -> np.ndarray:
        """(len(sentences), dim) float32 unit rows of these sentences: stored ones read, the rest
        embedded now and stored (or kept in memory on a read-only or busy corpus)."""
        dim = self.embedder.dim
        keys = [sentence_key(s) for s in sentences]
        if self._sentence_memo is None:
            self._sentence_memo = OrderedDict()
        memo = self._sentence_memo
        with self._lock:
            found: dict[int, np.ndarray] = {k: memo[k] for k in keys if k in memo}
            stored = self._stored_sentence_vectors([k for k in dict.fromkeys(keys) if k not in found])
        found.update(zip(stored, unpack(list(stored.values()), dim)))
        missing = {k: s for k, s in zip(keys, sentences) if k not in found}
        if missing:
            vecs = np.asarray(self.embed(list(missing.values())), np.float32)
            found.update(zip(missing, vecs))
            self._keep_sentence_vectors(list(missing), vecs)
        out = np.zeros((len(keys), dim), np.float32)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out

    def _keep_sentence_vectors(self, keys: list[int], vecs: np.ndarray) -> None:
        if not self.read_only:
            try:
                with self._write(timeout=0.5):  # a question does not wait for a long write
                    self._store_sentence_rows([(k, pack(v)) for k, v in zip(keys, vecs)])
                return
            except (CorpusBusyError, sqlite3.OperationalError):
                pass
        memo = self._sentence_memo
        assert memo is not None
        with self._lock:
            memo.update(zip(keys, vecs))
            while len(memo) > MEMO_LIMIT:
                memo.popitem(last=False)

    def fill_sentence_vectors(self, on_progress: ProgressCallback = no_progress, page: int = 2048) -> int:
        """Embed and store the sentences of every chunk that lack a vector (a corpus made before
        sentence vectors; resumable: what was stored stays). Returns how many were embedded."""
        done = last = 0
        total = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        seen = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT rid, chunk_id, doc_id, position, title, text FROM chunks "
                    "WHERE rid > ? ORDER BY rid LIMIT ?",
                    (last, page),
                ).fetchall()
            if not rows:
                return done
            chunks = [Chunk(cid, doc, pos, title, text) for _, cid, doc, pos, title, text in rows]
            new = self._new_sentence_rows(chunks)
            with self._write():
                self._store_sentence_rows(new)
            done, last, seen = done + len(new), rows[-1][0], seen + len(rows)
            on_progress(seen, total, "embedding sentences")
