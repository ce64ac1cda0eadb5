"""The embedder and the two vector indexes (chunks, propositions): load, rebuild from stored vectors, save, search."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

import numpy as np

from engine.core.progress import ProgressCallback, no_progress
from engine.store.base import CorpusBase
from engine.store.digests import row_digest
from engine.store.errors import CorpusBusyError
from engine.store.settings import AUTO_HNSW_AT
from engine.store.util import _vec_blob, set_aside_non_file
from engine.vectors import FaissVectorStore, IndexFileError

log = logging.getLogger(__name__)


class CorpusIndexes(CorpusBase):
    """The embedder and the two vector indexes (see the module docstring)."""

    @property
    def embedder(self):
        if self._embedder is None:
            given = self._given_embedder
            if given is not None and self.settings.embedder in ("bundled", getattr(given, "spec", None)):
                self._embedder = given
            else:
                from engine.embed import make_embedder
                from engine.llm.endpoints import check_stored

                # stored settings are data: an endpoint in them is used only when the user named it
                check_stored("embedder_api_base", self.settings.embedder_api_base, f"corpus {self.name!r}")
                self._embedder = make_embedder(self.settings.embedder, api_base=self.settings.embedder_api_base)
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.encode(list(texts))

    def load_indexes(self, on_progress: ProgressCallback = no_progress) -> dict[str, str]:
        """Load both vector indexes now, rather than at the first search: {which: kind}. An index
        file that is missing, stale or of another kind than the corpus's size now calls for (the
        first open after an upgrade, or after `auto` moved past its threshold) is rebuilt from the
        stored vectors, a page at a time, and `on_progress` hears of every page: at a million
        vectors an HNSW rebuild takes minutes, and a caller should not look frozen meanwhile."""
        return {w: getattr(self._index(w, on_progress), "kind", "milvus") for w in ("chunks", "propositions")}

    def _index(self, which: str, on_progress: ProgressCallback = no_progress, wait: float = 0.0) -> FaissVectorStore:
        """The in-memory index for `chunks` or `propositions`, in step with the database. A file
        brought in step is saved under the write lock, waited for up to `wait` seconds (a writer's
        refresh; it then learns of a drop) or only tried (a question: it answers from memory)."""
        with self._lock:
            gen_key = "chunk_gen" if which == "chunks" else "prop_gen"
            if which == "propositions":
                self._embed_pending_propositions()
            gen = int(self._get_meta(gen_key))
            cached = self._indexes.get(which)
            if cached and cached[1] == gen:
                return cached[0]
            if self.settings.vectors:
                return self._milvus_index(which, gen)
            store, dirty = self._load_or_rebuild(which, gen, on_progress)
            if dirty:  # written under the write lock, and only if no other process wrote meanwhile
                with self._may_save(wait, strict=wait > 0) as saving:
                    if saving and int(self._get_meta(gen_key)) == gen:
                        set_aside_non_file(self.path / f"{which}.index")
                        store = self._save_index(which, store, gen)
            self._indexes[which] = (store, gen)
            return store

    def _load_or_rebuild(self, which: str, gen: int, on_progress: ProgressCallback) -> tuple[FaissVectorStore, bool]:
        """(the index of `which` at `gen`, whether its file must be written): the cached one brought
        in step by ids, the file, or a rebuild from the stored vectors. Built outside the write lock
        (a rebuild takes minutes at a million vectors; writers do not wait for it)."""
        cached = self._indexes.get(which)
        if cached and cached[0].kind == self._kind_for(which) and not self.read_only:
            # in step at an older state: add and remove by ids (rowids are never reused)
            try:
                self._resync(which, cached[0])
            except NotImplementedError:  # an HNSW graph past its share of tombstones: rebuilt below
                pass
            else:
                return cached[0], True
        file = self.path / f"{which}.index"
        dim = self.embedder.dim
        try:
            store, stamp = FaissVectorStore.load(file, dim, self._kind_for(which), record=not self.read_only)
            if stamp != self.index_stamp(which, gen):
                raise IndexFileError("stale")
        except IndexFileError:
            # read-only: the rebuilt index lives in memory only
            return self._rebuild_index(which, dim, on_progress=on_progress), not self.read_only
        return store, False

    def _milvus_index(self, which: str, gen: int):
        """The Milvus collection for `which`, re-synced by ids when its stamp is not this state's
        (a crash between the SQLite commit and the Milvus write, a restored database)."""
        from engine.vectors.milvus_store import MilvusVectorStore, parse_uri

        uri = parse_uri(self.settings.vectors, self.path)
        if self._milvus_client is None:
            from engine.vectors.milvus_store import _client

            self._milvus_client = _client(uri, where=f"corpus {self.name!r}")
        store = MilvusVectorStore.connect(uri, f"tl_{self.token}_{which}", self.embedder.dim, self._milvus_client)
        side = self.path / f"{which}.milvus.json"
        try:
            stamp = MilvusVectorStore.read_stamp(side)
        except IndexFileError:
            stamp = ""
        if stamp != self.index_stamp(which, gen) and not self.read_only:
            self._resync(which, store)
            store.save(side, self.index_stamp(which, gen))
        self._indexes[which] = (store, gen)
        return store

    def _resync(self, which: str, store) -> tuple[int, int]:
        """Make `store` hold exactly the database's vectors for `which`, by ids: (added, removed)."""
        table, key = ("chunks", "rid") if which == "chunks" else ("triplets", "tid")
        have = store.ids()
        pending = (
            []
            if which == "chunks"
            else [
                r[0]
                for r in self._db.execute(
                    "SELECT tid FROM triplets WHERE vec IS NULL AND tid > ?", (self._vec_floor(),)
                )
            ]
        )
        # Only appends since `store` was in step (the usual case): the rows past its highest id,
        # and the row count says nothing else changed (ids are never reused, and no row at or below
        # that id can still be waiting for a vector). Reads an index count and a range, not every id.
        top = int(have.max()) if len(have) else -1
        cond = "1" if which == "chunks" else "vec IS NOT NULL"
        new = [r[0] for r in self._db.execute(f"SELECT {key} FROM {table} WHERE {key} > ? AND {cond}", (top,))]
        count = self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] - len(pending)
        if count == len(have) + len(new):
            extra, missing = np.zeros(0, np.int64), new
        else:  # deletes, or a foreign state: compare every id (covering-index scans, not the vectors)
            want = np.fromiter((r[0] for r in self._db.execute(f"SELECT {key} FROM {table}")), np.int64)
            want = np.setdiff1d(want, np.array(pending, np.int64), assume_unique=True)
            extra = np.setdiff1d(have, want, assume_unique=True)
            missing = np.setdiff1d(want, have, assume_unique=True).tolist()
        store.remove(extra)
        for i in range(0, len(missing), 4096):
            part = missing[i : i + 4096]
            rows = self._in_query(f"SELECT {key}, vec FROM {table} WHERE vec IS NOT NULL AND {key} IN ({{}})", part)
            store.add(
                np.array([r[0] for r in rows], np.int64),
                np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1),
            )
        return len(missing), len(extra)

    def _kind_for(self, which: str) -> str:
        """The FAISS index kind for `which` at its current size (`auto`: by the row count)."""
        kind = self.settings.index_kind
        if kind != "auto":
            return kind
        # all triplets, pending or not: this count reads an index, not every row's vector
        sql = "SELECT COUNT(*) FROM chunks" if which == "chunks" else "SELECT COUNT(*) FROM triplets"
        return "hnsw" if self._db.execute(sql).fetchone()[0] >= AUTO_HNSW_AT else "flat"

    def index_kinds(
        self, self_check: bool = True, on_progress: ProgressCallback = no_progress
    ) -> dict[str, tuple[str, float | None]]:
        """(kind, recall@10 against exact search) of each index: with `self_check`, measured on the
        index itself (50 of its own vectors as queries: engine/vectors/selfcheck.py; loads the
        index), else the figure measured on real text for that kind (docs/scaling.md). The kind is
        the Milvus URI's with `vectors` (Milvus picks its own index: no recall)."""
        from engine.vectors.faiss_store import MEASURED_RECALL_AT_10
        from engine.vectors.selfcheck import sampled_recall

        if self.settings.vectors:
            return {w: (f"milvus ({self.settings.vectors})", None) for w in ("chunks", "propositions")}
        with self._lock:
            if not self_check:
                kinds = {w: self._kind_for(w) for w in ("chunks", "propositions")}
                return {w: (k, MEASURED_RECALL_AT_10.get(k)) for w, k in kinds.items()}
            stores = {w: self._index(w, on_progress) for w in ("chunks", "propositions")}
            return {w: (s.kind, sampled_recall(s)) for w, s in stores.items()}

    def _rebuild_index(
        self, which: str, dim: int, page: int = 65536, on_progress: ProgressCallback = no_progress
    ) -> FaissVectorStore:
        """Build from the stored vectors, read in pages (memory: the index plus one page); each
        page added is reported (`on_progress(done, total, label)`)."""
        count = (
            "SELECT COUNT(*) FROM chunks"
            if which == "chunks"
            else "SELECT COUNT(*) FROM triplets WHERE vec IS NOT NULL"
        )
        store = FaissVectorStore(dim, self._kind_for(which), expected=self._db.execute(count).fetchone()[0])
        sql = (
            "SELECT rid, vec FROM chunks"
            if which == "chunks"
            else "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL"
        )
        if store.kind == "ivf" and store.expected > page:  # cells from a sample of the whole table
            from engine.vectors.faiss_store import ivf_training_ids

            key = "rid" if which == "chunks" else "tid"
            ids = np.fromiter((r[0] for r in self._db.execute(sql.replace(", vec", ""))), np.int64)
            rows = self._in_query(
                f"{sql} AND {key} IN ({{}})" if which != "chunks" else f"{sql} WHERE rid IN ({{}})",
                ivf_training_ids(ids, store.expected).tolist(),
            )
            store.train(np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), dim))
            del ids, rows
        label = f"rebuilding the {which} index ({store.kind}, {store.expected:,} vectors)"
        if store.expected >= page:
            log.info("%s: %s", self.name, label)
        on_progress(0, store.expected, label)
        done = 0
        cur = self._db.execute(sql)
        while rows := cur.fetchmany(page):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            store.add(ids, vecs)
            done += len(rows)
            on_progress(done, max(done, store.expected), label)
        return store

    def _save_index(self, which: str, store: FaissVectorStore, gen: int) -> FaissVectorStore:
        """Save `store` as the index of `which` at `gen`; return the index now in use: an IVF index
        grown past `IVF_RETRAIN_FACTOR` times the size its cells were made for is rebuilt from
        the stored vectors first (new cells, trained on a sample of them: once per such growth)."""
        if not self.settings.vectors and isinstance(store, FaissVectorStore) and store.needs_retraining():
            log.warning(
                "%s: the %s IVF index holds %d vectors, its cells were made for %d: rebuilding it",
                self.name,
                which,
                len(store),
                store.trained_for(),
            )
            store = self._rebuild_index(which, store.dim)
        name = f"{which}.milvus.json" if self.settings.vectors else f"{which}.index"
        store.save(self.path / name, self.index_stamp(which, gen))
        self._indexes[which] = (store, gen)
        return store

    def _embed_batched(
        self, texts: list[str], on_progress: ProgressCallback, label: str, block: int = 256
    ) -> np.ndarray:
        """Embed in blocks (so progress can be reported) sorted by length: each block then pads as
        little as one big encode call would, which keeps the store within a few % of raw encoding."""
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), block):
            idx = order[start : start + block]
            out[idx] = self.embed([texts[i] for i in idx])
            on_progress(min(start + block, len(texts)), len(texts), label)
        return out

    def _vec_floor(self) -> int:
        """Every triplet up to this tid has a vector (this process's pass, or the last pass of any
        process, kept in meta): tids only grow and a vector is never unset, so pending rows are
        looked for past it instead of in every row."""
        if self._vec_upto < 0:
            self._vec_upto = int(self._get_meta("vec_upto") or -1)
        return self._vec_upto

    def _embed_pending_propositions(
        self, on_progress: ProgressCallback = no_progress, batch: int = 256, page: int = 50_000
    ) -> int:
        """Embed triplets stored without a vector (new from extraction or import)."""
        gen = int(self._get_meta("prop_gen"))
        if gen == self._no_pending_at_gen or self.read_only:  # nothing new, or nowhere to store vectors
            return 0
        sql = "SELECT tid, subject, predicate, object FROM triplets WHERE vec IS NULL AND tid > ? ORDER BY tid LIMIT ?"
        done, last = 0, self._vec_floor()
        top = self._db.execute("SELECT COALESCE(MAX(tid), -1) FROM triplets").fetchone()[0]
        rows = self._db.execute(sql, (last, page)).fetchall()
        total = (
            len(rows)
            if len(rows) < page
            else self._db.execute("SELECT COUNT(*) FROM triplets WHERE vec IS NULL").fetchone()[0]
        )
        while rows:  # in pages: memory holds one page of texts and vectors, whatever the corpus

            def progress(i: int, n: int, label: str, done: int = done) -> None:
                on_progress(done + i, max(total, done + n), label)

            vecs = self._embed_batched(
                [f"{s} {p} {o}" for _, s, p, o in rows],
                progress,
                "embedding propositions",
                batch,
            )
            with self._write():
                blobs = [_vec_blob(v) for v in vecs]
                if self._digests:  # the triplet's digest covers its vector: written with it
                    self._db.executemany(
                        "UPDATE triplets SET vec=?, digest=? WHERE tid=? AND vec IS NULL",
                        [(b, row_digest(s, p, o, b), tid) for b, (tid, s, p, o) in zip(blobs, rows)],
                    )
                else:
                    self._db.executemany(
                        "UPDATE triplets SET vec=? WHERE tid=? AND vec IS NULL",
                        [(b, r[0]) for b, r in zip(blobs, rows)],
                    )
                self._bump("prop_gen")
            done, last = done + len(rows), rows[-1][0]
            rows = self._db.execute(sql, (last, page)).fetchall()
        if top > self._vec_floor():  # rows past `top` came after this pass began
            self._vec_upto = top
            try:
                with self._write(timeout=1.0):  # for the next process too: its first pass need not read every row
                    if top > (self._get_meta("vec_upto") or -1):
                        self._set_meta("vec_upto", top)
            except (CorpusBusyError, sqlite3.OperationalError):
                pass  # only a shortcut for the next process: it reads the rows instead
        if not done:
            self._no_pending_at_gen = gen
        return done

    def refresh_indexes(self, on_progress: ProgressCallback = no_progress) -> None:
        """Embed what is pending and bring both index files and HippoRAG 2's phrase graph in step
        (end of a long write): the index files are written under the write lock, waited for (a question
        only tries it: `_index`)."""
        with self._lock:
            self._embed_pending_propositions(on_progress)
            for which in ("chunks", "propositions"):
                self._index(which, wait=30.0)
        self.refresh_phrase_graph(on_progress)  # engine/store/phrase_graph.py: embeds only new phrases

    def search_chunks(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        with self._lock:
            scores, ids = self._index("chunks").search(query_vecs, k)
            rid_to_id = self._chunk_ids_for_rids({int(i) for i in ids.ravel() if i >= 0})
        return [
            [(rid_to_id[int(i)], float(s)) for s, i in zip(srow, irow) if i >= 0 and int(i) in rid_to_id]
            for srow, irow in zip(scores, ids)
        ]

    def search_propositions(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        with self._lock:
            scores, ids = self._index("propositions").search(query_vecs, k)
        return [[(int(i), float(s)) for s, i in zip(srow, irow) if i >= 0] for srow, irow in zip(scores, ids)]

    def _chunk_ids_for_rids(self, rids: set[int]) -> dict[int, str]:
        if not rids:
            return {}
        out: dict[int, str] = {}
        rl = list(rids)
        for i in range(0, len(rl), 900):
            part = rl[i : i + 900]
            q = f"SELECT rid, chunk_id FROM chunks WHERE rid IN ({','.join('?' * len(part))})"
            out.update(self._db.execute(q, part).fetchall())
        return out

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of the chunks, in the order asked (zeros for an unknown id). Read from the
        FAISS index when it is loaded and in step (the same float32 vectors, from memory; a question
        asks for hundreds, each a random row of the database), else from the chunk rows."""
        with self._lock:
            cached = self._indexes.get("chunks")
            if cached and not self.settings.vectors and cached[1] == int(self._get_meta("chunk_gen")):
                rids = dict(self._in_query("SELECT chunk_id, rid FROM chunks WHERE chunk_id IN ({})", chunk_ids))
                try:
                    found = cached[0].get(np.fromiter(rids.values(), np.int64, len(rids)))
                except KeyError:  # not in step after all: the rows below are the source of truth
                    pass
                else:
                    row = dict(zip(rids, found))
                    out = np.zeros((len(chunk_ids), self.embedder.dim), dtype=np.float32)
                    for i, c in enumerate(chunk_ids):
                        if c in row:
                            out[i] = row[c]
                    return out
            found = dict(self._in_query("SELECT chunk_id, vec FROM chunks WHERE chunk_id IN ({})", chunk_ids))
        return self._stack([found.get(c) for c in chunk_ids])

    def proposition_vectors(self, triplet_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the propositions, in the order asked: from the FAISS index when it is
        loaded and in step (ids are triplet ids), else from the triplet rows."""
        with self._lock:
            self._embed_pending_propositions()
            cached = self._indexes.get("propositions")
            if cached and not self.settings.vectors and cached[1] == int(self._get_meta("prop_gen")):
                try:
                    return cached[0].get(np.asarray(triplet_ids, np.int64))
                except KeyError:  # an unknown id (zeros below) or not in step after all
                    pass
            found = dict(self._in_query("SELECT tid, vec FROM triplets WHERE tid IN ({})", list(triplet_ids)))
        return self._stack([found.get(t) for t in triplet_ids])

    def _stack(self, blobs: list[bytes | None]) -> np.ndarray:
        dim = self.embedder.dim
        out = np.zeros((len(blobs), dim), dtype=np.float32)
        for i, b in enumerate(blobs):
            if b is not None:
                out[i] = np.frombuffer(b, dtype=np.float32)
        return out

    def _in_query(self, sql: str, values: Sequence) -> list[tuple]:
        out: list[tuple] = []
        values = list(values)
        for i in range(0, len(values), 900):
            part = values[i : i + 900]
            out.extend(self._db.execute(sql.format(",".join("?" * len(part))), part).fetchall())
        return out
