"""Adding and deleting documents, questions and triplets, in batches, each batch one transaction."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from engine.core import serde
from engine.core.chunking import chunk_document
from engine.core.faults import fault_point
from engine.core.progress import ProgressCallback, no_progress
from engine.core.textnorm import normalize_entity
from engine.core.types import Chunk, Document, ExtractionStatus, IngestReport, Question
from engine.store.digests import row_digest
from engine.store.errors import CorpusError
from engine.store.sentences import CorpusSentences
from engine.store.util import _vec_blob, embedding_text

#: Of the given triplet ids, those no chunk states any more (primary-key lookups both ways).
_UNSTATED = "NOT EXISTS (SELECT 1 FROM triplet_sources s WHERE s.tid = triplets.tid)"
_TRIPLET_GONE = "NOT EXISTS (SELECT 1 FROM triplets t WHERE t.tid = entity_edges.tid)"
ORPHAN_TRIPLETS = "DELETE FROM triplets WHERE tid IN ({}) AND " + _UNSTATED
ORPHAN_EDGES = "DELETE FROM entity_edges WHERE tid IN ({}) AND " + _TRIPLET_GONE


#: seconds an extraction result waits for the write lock before its run stops as busy
STORE_WAIT = 300.0


def _id_parts(ids: list[int], size: int = 500) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


class CorpusWrites(CorpusSentences):
    """Adding and deleting documents, questions and triplets, in batches, each batch one transaction."""

    def add_documents(
        self,
        docs: Iterable[Document],
        on_progress: ProgressCallback = no_progress,
        batch_size: int = 64,
        commit_chunks: int = 2048,
        sync_index: bool = True,
    ) -> IngestReport:
        """Chunk, embed and store documents. A document already present (same id) is skipped.
        Documents are committed in batches of about `commit_chunks` chunks, so an interrupted add of
        hours keeps every finished batch (adding the same files again picks up where it stopped).
        The chunk index file is brought in step once at the end; a bulk load calling this many times
        passes `sync_index=False` and calls `refresh_indexes()` once (saving a million-vector index
        after every batch would make the load quadratic)."""
        report = IngestReport()
        docs = list(docs)
        with self._lock:
            existing = {
                r[0]
                for r in self._in_query("SELECT doc_id FROM documents WHERE doc_id IN ({})", [d.doc_id for d in docs])
            }
        new_docs: list[Document] = []
        for d in docs:
            if d.doc_id in existing:
                report.documents_skipped += 1
            else:
                existing.add(d.doc_id)
                new_docs.append(d)
        if not new_docs:
            return report
        per_doc = [(d, chunk_document(d, self.settings.chunking)) for d in new_docs]
        total = sum(len(cs) for _, cs in per_doc)
        batches = _commit_batches(per_doc, commit_chunks)
        with self._lock:
            first_gen = int(self._get_meta("chunk_gen"))
            top_rid = self._db.execute("SELECT COALESCE(MAX(rid), 0) FROM chunks").fetchone()[0]
        self._embed_and_commit(batches, total, on_progress, batch_size, report)
        if sync_index:
            fault_point("add.before_index_sync")
            # under the write lock; busy past 30 s (a backup of a large corpus), the file is left to the
            # next writer or question and the documents stay added; a drop meanwhile is told
            with self._lock, self._may_save(30.0, strict=True) as saving:
                if saving:
                    self._sync_chunk_index_after_add(first_gen, top_rid)
        return report

    def _embed_and_commit(
        self,
        batches: list[list[tuple[Document, list[Chunk]]]],
        total: int,
        on_progress: ProgressCallback,
        batch_size: int,
        report: IngestReport,
    ) -> None:
        """Embed each commit batch and store it. One writer thread commits batch i while this thread
        embeds batch i + 1 (the encode releases the GIL; progress callbacks stay on the caller's
        thread, where a UI can draw them)."""
        done = 0
        with ThreadPoolExecutor(1, thread_name_prefix="corpus-write") as writer:
            pending: Future[None] | None = None
            for batch in batches:
                chunks = [c for _, cs in batch for c in cs]

                def progress(d: int, _t: int, label: str, offset: int = done) -> None:
                    on_progress(offset + d, total, label)

                vecs = self._embed_batched(
                    [embedding_text(c) for c in chunks],
                    progress,
                    "embedding chunks",
                    batch_size * 4,
                )
                sentences = self._sentences_of(chunks, done, total, on_progress)
                if pending is not None:
                    pending.result()  # commits land in order; a failed one stops the add here
                pending = writer.submit(self._commit_documents, [d for d, _ in batch], chunks, vecs, report, sentences)
                done += len(chunks)
            if pending is not None:
                pending.result()

    def _sentences_of(
        self, chunks: list[Chunk], done: int, total: int, on_progress: ProgressCallback
    ) -> list[tuple[int, bytes]]:
        """The batch's sentence vectors not stored yet, embedded before its commit so they land
        with their chunks (the answer step then embeds only the question)."""
        if not self.settings.sentence_vectors:
            return []

        def progress(d: int, t: int, label: str) -> None:
            on_progress(done + len(chunks) * d // max(t, 1), total, label)  # counted in the batch's chunks

        return self._new_sentence_rows(chunks, progress)

    def _commit_documents(
        self,
        new_docs: list[Document],
        chunks: list[Chunk],
        vecs: np.ndarray,
        report: IngestReport,
        sentences: Sequence[tuple[int, bytes]] = (),
    ) -> None:
        now = time.time()
        with self._write():
            # another process may have added some of them while these were embedded (outside the
            # lock): skip those instead of failing the whole batch on the unique doc_id
            raced = {
                r[0]
                for r in self._in_query(
                    "SELECT doc_id FROM documents WHERE doc_id IN ({})", [d.doc_id for d in new_docs]
                )
            }
            if raced:
                keep = [i for i, c in enumerate(chunks) if c.doc_id not in raced]
                chunks, vecs = [chunks[i] for i in keep], vecs[keep]
                new_docs = [d for d in new_docs if d.doc_id not in raced]
                report.documents_skipped += len(raced)
            self._db.executemany(
                "INSERT INTO documents(doc_id, title, text, source, kind, sentences, added_at) VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        d.doc_id,
                        d.title,
                        d.text,
                        d.source,
                        d.kind,
                        json.dumps(list(d.sentences)) if d.sentences is not None else None,
                        now,
                    )
                    for d in new_docs
                ],
            )
            self._insert_chunks(chunks, vecs)
            self._db.executemany(
                "INSERT INTO extraction(chunk_id, status, model, error, calls, prompt_tokens, completion_tokens, "
                "cost, updated_at) VALUES (?, 'pending', '', '', 0, 0, 0, NULL, ?)",
                [(c.chunk_id, now) for c in chunks],
            )
            self._store_sentence_rows(sentences)  # with their chunks: a kill leaves both or neither
            self._bump("chunk_gen")
        report.documents_added += len(new_docs)
        report.chunks_added += len(chunks)

    def _insert_chunks(self, chunks: list[Chunk], vecs: np.ndarray) -> None:
        """Inside a write transaction: the chunk rows, each with the digest of its content."""
        rows = [
            (c.chunk_id, c.doc_id, c.position, c.title, c.text, c.sent_start, c.sent_end, _vec_blob(v))
            for c, v in zip(chunks, vecs)
        ]
        if not self._digests:  # a corpus from before digests that could not get the column yet
            self._db.executemany(
                "INSERT INTO chunks(chunk_id, doc_id, position, title, text, sent_start, sent_end, vec) "
                "VALUES (?,?,?,?,?,?,?,?)",
                rows,
            )
            return
        self._db.executemany(
            "INSERT INTO chunks(chunk_id, doc_id, position, title, text, sent_start, sent_end, vec, digest) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [(*r, row_digest(*r)) for r in rows],
        )

    def _sync_chunk_index_after_add(self, prev_gen: int, top_rid: int) -> None:
        """Bring the chunk index in step after an add: when it was current before the add
        (`prev_gen`), append the new rows; else rebuild. Saved once, not per committed batch."""
        with self._lock:
            gen = int(self._get_meta("chunk_gen"))
            cached = self._indexes.get("chunks")
            if (
                cached
                and cached[1] == prev_gen
                and (cached[0].kind == self._kind_for("chunks") or self.settings.vectors)
            ):
                # the index was current before this add: append the new rows instead of rebuilding
                store = cached[0]
                top = top_rid
                rows = self._db.execute("SELECT rid, vec FROM chunks WHERE rid > ?", (top,)).fetchall()
                if rows:
                    store.add(
                        np.array([r[0] for r in rows], np.int64),
                        np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1),
                    )
                self._save_index("chunks", store, gen)
            else:
                self._index("chunks")

    def add_questions(self, questions: Iterable[Question]) -> int:
        questions = list(questions)
        with self._write():
            start = self._db.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM questions").fetchone()[0]
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO questions(qid, position, data) VALUES (?,?,?)",
                [(q.qid, start + i, serde.dumps(q)) for i, q in enumerate(questions)],
            )
            return self._db.total_changes - before

    def _insert_triplets(self, chunk_id: str, triplets: Iterable[tuple[str, str, str]]) -> int:
        n = 0
        for s, p, o in triplets:
            self._db.execute("INSERT OR IGNORE INTO triplets(subject, predicate, object) VALUES (?,?,?)", (s, p, o))
            tid = self._db.execute(
                "SELECT tid FROM triplets WHERE subject=? AND predicate=? AND object=?", (s, p, o)
            ).fetchone()[0]
            self._db.execute(
                "INSERT OR IGNORE INTO entity_edges(tid, head, tail) VALUES (?,?,?)",
                (tid, normalize_entity(s), normalize_entity(o)),
            )
            cur = self._db.execute("INSERT OR IGNORE INTO triplet_sources(tid, chunk_id) VALUES (?,?)", (tid, chunk_id))
            n += cur.rowcount
        return n

    def _drop_orphan_triplets(self, tids: Sequence[int]) -> int:
        """Delete those of `tids` (triplets that just lost a source) no chunk states any more, with
        their edges: indexed lookups of these ids, not a pass over every triplet of the corpus
        (that pass, per extracted chunk, read every triplet row with its vector)."""
        n = 0
        for part in _id_parts(sorted(set(tids))):
            marks = ",".join("?" * len(part))
            n += self._db.execute(ORPHAN_TRIPLETS.format(marks), part).rowcount
            self._db.execute(ORPHAN_EDGES.format(marks), part)
        return n

    def store_extraction(
        self, chunk_id: str, triplets: Sequence[tuple[str, str, str]], status: ExtractionStatus
    ) -> None:
        """Replace the chunk's triplets and mark it done, in one transaction (resume relies on it).
        A paid reply waits up to `STORE_WAIT` seconds for the write lock (a backup of a large corpus
        holds it for its whole copy)."""
        with self._write(timeout=STORE_WAIT):
            if not self._db.execute("SELECT 1 FROM chunks WHERE chunk_id=?", (chunk_id,)).fetchone():
                raise CorpusError(f"chunk {chunk_id!r} is not in corpus {self.name!r} (deleted meanwhile?)")
            old = [r[0] for r in self._db.execute("SELECT tid FROM triplet_sources WHERE chunk_id=?", (chunk_id,))]
            self._db.execute("DELETE FROM triplet_sources WHERE chunk_id=?", (chunk_id,))
            self._insert_triplets(chunk_id, triplets)
            self._drop_orphan_triplets(old)
            self._db.execute(
                "INSERT OR REPLACE INTO extraction(chunk_id, status, model, error, calls, prompt_tokens, "
                "completion_tokens, cost, updated_at) VALUES (?, 'done', ?, '', ?, ?, ?, ?, ?)",
                (
                    chunk_id,
                    status.model,
                    status.calls,
                    status.prompt_tokens,
                    status.completion_tokens,
                    status.cost,
                    time.time(),
                ),
            )
            self._bump("prop_gen")

    def mark_extraction_failed(self, chunk_id: str, error: str, model: str = "") -> None:
        with self._write(timeout=STORE_WAIT):
            self._db.execute(
                "UPDATE extraction SET status='failed', error=?, model=?, updated_at=? WHERE chunk_id=?",
                (error[:2000], model, time.time(), chunk_id),
            )

    def import_triplets(
        self,
        rows: Iterable[tuple[str, str, str, str]],
        on_progress: ProgressCallback = no_progress,
        refresh: bool = True,
    ) -> int:
        """Add `(chunk_id, s, p, o)` rows (imported files); returns how many new (triplet, chunk) links.
        Rows naming an unknown chunk are skipped. Imported chunks count as extracted. `refresh=False`
        leaves embedding and indexing to one `refresh_indexes()` after many batches."""
        rows = list(rows)
        with self._write():
            known = {
                r[0]
                for r in self._in_query(
                    "SELECT chunk_id FROM chunks WHERE chunk_id IN ({})", list({r[0] for r in rows})
                )
            }
            added = 0
            for cid, s, p, o in rows:
                if cid in known:
                    added += self._insert_triplets(cid, [(s, p, o)])
            self._db.executemany(
                "UPDATE extraction SET status='done', model='import', error='', updated_at=? WHERE chunk_id=?",
                [(time.time(), c) for c in known],
            )
            self._bump("prop_gen")
        if refresh:
            self.refresh_indexes(on_progress)
        return added

    def delete_document(self, doc_id: str) -> None:
        """Remove a document with its chunks, their triplet links, orphaned triplets and all vectors.
        A workspace snapshots the corpus first (`corpus restore` brings it back)."""
        with self._lock:
            if not self._db.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone():
                raise CorpusError(f"no document {doc_id!r} in corpus {self.name!r}")
        # the snapshot and the delete under one hold of the write lock: the snapshot is the corpus
        # just before the delete, with no other writer's change between them
        with self._lock, self._process_lock(30.0):
            if self.before_destructive is not None:
                self.before_destructive(self, f"delete-doc {doc_id}")
            self._delete_rows(doc_id)
        # rebuilt from the stored vectors: exact for both index kinds, and cheap next to embedding
        self.refresh_indexes()

    def _delete_rows(self, doc_id: str) -> None:
        with self._write():
            if not self._db.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone():
                raise CorpusError(f"no document {doc_id!r} in corpus {self.name!r}")
            sub = "SELECT chunk_id FROM chunks WHERE doc_id=?"
            old = [
                r[0] for r in self._db.execute(f"SELECT tid FROM triplet_sources WHERE chunk_id IN ({sub})", (doc_id,))
            ]
            self._db.execute(f"DELETE FROM triplet_sources WHERE chunk_id IN ({sub})", (doc_id,))
            self._db.execute(f"DELETE FROM extraction WHERE chunk_id IN ({sub})", (doc_id,))
            self._drop_sentence_rows(
                embedding_text(Chunk("", doc_id, 0, title, text))
                for title, text in self._db.execute("SELECT title, text FROM chunks WHERE doc_id=?", (doc_id,))
            )
            self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
            self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
            self._drop_orphan_triplets(old)
            self._bump("chunk_gen")
            self._bump("prop_gen")


def _commit_batches(
    per_doc: list[tuple[Document, list[Chunk]]], commit_chunks: int
) -> list[list[tuple[Document, list[Chunk]]]]:
    """Documents grouped into commit batches of about `commit_chunks` chunks (a document is never split)."""
    batches: list[list[tuple[Document, list[Chunk]]]] = [[]]
    in_batch = 0  # chunks in the last batch (a running count: summing it per document was quadratic)
    for item in per_doc:
        if batches[-1] and in_batch + len(item[1]) > commit_chunks:
            batches.append([])
            in_batch = 0
        batches[-1].append(item)
        in_batch += len(item[1])
    return batches
