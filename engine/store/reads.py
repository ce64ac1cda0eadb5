"""Reading documents, chunks, triplets, questions and counts."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from engine.core import serde
from engine.core.types import Chunk, Document, ExtractionStatus, Question, Triplet
from engine.store.base import CorpusBase
from engine.store.settings import CorpusCounts, DocumentInfo


class CorpusReads(CorpusBase):
    """Reading documents, chunks, triplets, questions and counts."""

    _CHUNK_COLS = "chunk_id, doc_id, position, title, text, sent_start, sent_end"

    def documents(self) -> list[DocumentInfo]:
        with self._lock:
            rows = self._db.execute(
                "SELECT d.doc_id, d.title, d.source, d.kind, COUNT(c.rid) FROM documents d "
                "LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id ORDER BY d.added_at, d.rowid"
            ).fetchall()
        return [DocumentInfo(*r) for r in rows]

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            r = self._db.execute(
                "SELECT doc_id, title, text, source, kind, sentences FROM documents WHERE doc_id=?", (doc_id,)
            ).fetchone()
        if not r:
            return None
        sents = tuple(json.loads(r[5])) if r[5] else None
        return Document(r[0], r[1], r[2], r[3], r[4], sents)

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        with self._lock:
            if doc_id is None:
                rows = self._db.execute(f"SELECT {self._CHUNK_COLS} FROM chunks ORDER BY rid").fetchall()
            else:
                rows = self._db.execute(
                    f"SELECT {self._CHUNK_COLS} FROM chunks WHERE doc_id=? ORDER BY position", (doc_id,)
                ).fetchall()
        return [Chunk(*r) for r in rows]

    def iter_chunks(self, batch: int = 10000) -> Iterator[Chunk]:
        """Every chunk in insertion order, read `batch` rows at a time (bounded memory)."""
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT rid, {self._CHUNK_COLS} FROM chunks WHERE rid > ? ORDER BY rid LIMIT ?", (last, batch)
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield from (Chunk(*r[1:]) for r in rows)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        with self._lock:
            rows = self._in_query(f"SELECT {self._CHUNK_COLS} FROM chunks WHERE chunk_id IN ({{}})", chunk_ids)
        by_id = {r[0]: Chunk(*r) for r in rows}
        return [by_id[c] for c in chunk_ids if c in by_id]

    def _triplets_where(self, where: str = "", values: Sequence = ()) -> list[Triplet]:
        sql = (
            "SELECT t.tid, t.subject, t.predicate, t.object, GROUP_CONCAT(s.chunk_id, char(31)) FROM triplets t "
            "JOIN triplet_sources s ON s.tid = t.tid {} GROUP BY t.tid ORDER BY t.tid"
        )
        with self._lock:
            if values:
                rows = self._in_query(sql.format(where), values)
            else:
                rows = self._db.execute(sql.format(where)).fetchall()
        out = {}
        for tid, s, p, o, srcs in rows:
            out[tid] = Triplet(s, p, o, tuple(sorted(srcs.split("\x1f"))), tid)
        return [out[t] for t in sorted(out)]

    def triplets(self, chunk_ids: Sequence[str] | None = None) -> list[Triplet]:
        if chunk_ids is None:
            return self._triplets_where()
        if not chunk_ids:
            return []
        # all sources of each triplet, not only the asked chunks
        where = "WHERE t.tid IN (SELECT tid FROM triplet_sources WHERE chunk_id IN ({}))"
        return self._triplets_where(where, list(chunk_ids))

    def get_triplets(self, triplet_ids: Sequence[int]) -> list[Triplet]:
        if not triplet_ids:
            return []
        found = {t.triplet_id: t for t in self._triplets_where("WHERE t.tid IN ({})", list(triplet_ids))}
        return [found[t] for t in triplet_ids if t in found]

    def questions(self) -> list[Question]:
        with self._lock:
            rows = self._db.execute("SELECT data FROM questions ORDER BY position").fetchall()
        return [serde.loads(Question, r[0]) for r in rows]

    def get_question(self, qid: str) -> Question | None:
        with self._lock:
            r = self._db.execute("SELECT data FROM questions WHERE qid=?", (qid,)).fetchone()
        return serde.loads(Question, r[0]) if r else None

    def counts(self) -> CorpusCounts:
        """Row counts (each a scan of an index: ~25 ms at 100k chunks, growing with the corpus), cached
        until the database changes: methods ask per question. `data_version` moves when another
        connection commits, `total_changes` when this one writes."""
        with self._lock:
            key = (self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes)
            cached = getattr(self, "_counts_cache", None)
            if cached is not None and cached[0] == key:
                return cached[1]
            one = lambda sql: self._db.execute(sql).fetchone()[0]  # noqa: E731
            status = dict(self._db.execute("SELECT status, COUNT(*) FROM extraction GROUP BY status").fetchall())
            self._counts_cache = (
                key,
                CorpusCounts(
                    documents=one("SELECT COUNT(*) FROM documents"),
                    chunks=one("SELECT COUNT(*) FROM chunks"),
                    triplets=one("SELECT COUNT(*) FROM triplets"),
                    questions=one("SELECT COUNT(*) FROM questions"),
                    extracted=status.get("done", 0),
                    pending=status.get("pending", 0),
                    failed=status.get("failed", 0),
                ),
            )
            return self._counts_cache[1]

    def triplet_sources(self) -> dict[str, int]:
        """{extractor: chunks it extracted}: `offline-rules`, a model string, or `import` (a triplet
        file). What a run's inputs line names as its triplet source; cached as `counts` is."""
        with self._lock:
            key = (self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes)
            cached = getattr(self, "_sources_cache", None)
            if cached is not None and cached[0] == key:
                return dict(cached[1])
            rows = self._db.execute("SELECT model, COUNT(*) FROM extraction WHERE status='done' GROUP BY model")
            self._sources_cache = (key, {str(m): int(n) for m, n in rows.fetchall()})
            return dict(self._sources_cache[1])

    def extraction_statuses(self) -> dict[str, ExtractionStatus]:
        with self._lock:
            rows = self._db.execute(
                "SELECT chunk_id, status, model, error, calls, prompt_tokens, completion_tokens, cost FROM extraction"
            ).fetchall()
        return {r[0]: ExtractionStatus(*r) for r in rows}

    def pending_chunks(self) -> list[Chunk]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join('c.' + c for c in self._CHUNK_COLS.split(', '))} FROM chunks c "
                "JOIN extraction e ON e.chunk_id = c.chunk_id WHERE e.status != 'done' ORDER BY c.rid"
            ).fetchall()
        return [Chunk(*r) for r in rows]
