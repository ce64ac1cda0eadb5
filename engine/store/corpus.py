"""One corpus: a folder with `corpus.sqlite` and its vector indexes (see engine/store/__init__.py)."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path

import numpy as np

from engine.core import serde
from engine.store.digests import add_digest_columns, digest_problems, has_digests
from engine.store.errors import CorpusBusyError, CorpusError
from engine.store.fts import CorpusText
from engine.store.graph import CorpusGraph
from engine.store.indexes import CorpusIndexes
from engine.store.lock import CorpusLocks, file_id
from engine.store.phrase_graph import CorpusPhraseGraph
from engine.store.reads import CorpusReads
from engine.store.schema import _EDGES_VERSION, _SCHEMA, SCHEMA_VERSION
from engine.store.settings import CorpusSettings
from engine.store.writes import CorpusWrites
from engine.vectors import FaissVectorStore
from engine.vectors.stamp import read_stamp


class Corpus(CorpusLocks, CorpusIndexes, CorpusReads, CorpusGraph, CorpusText, CorpusPhraseGraph, CorpusWrites):
    """One corpus. Safe to share between threads; writes are serialized across processes."""

    def __init__(
        self, path: Path, *, create_with: CorpusSettings | None = None, embedder=None, read_only: bool = False
    ):
        self.path = Path(path)
        self.name = self.path.name
        self._lock = threading.RLock()
        self._plock_guard = threading.Lock()
        self._plock_count = 0
        self._plock_fh = None
        storage_ro = create_with is None and not os.access(self.path, os.W_OK)
        #: read-only: questions are answered, every change is refused, nothing is written (not even
        #: a rebuilt index file); on read-only storage the database opens immutable (no -shm needed)
        self.read_only = bool(read_only or storage_ro) and create_with is None
        db = self.path / "corpus.sqlite"
        self._identity = None
        if self.read_only:
            mode = "ro&immutable=1" if storage_ro else "ro"
            self._db = sqlite3.connect(
                f"file:{db}?mode={mode}", uri=True, check_same_thread=False, isolation_level=None, timeout=30.0
            )
        else:
            self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None, timeout=30.0)
            #: the database this object writes to: a writer checks it is still the one at its path
            #: once it holds the write lock (engine/store/lock.py)
            self._identity = file_id(db)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
        if create_with is not None:
            self._create(create_with)
        version = self._get_meta("schema_version")
        if version != SCHEMA_VERSION:
            raise CorpusError(f"corpus {self.name!r} has schema version {version!r}; this build reads {SCHEMA_VERSION}")
        self.settings: CorpusSettings = serde.from_dict(CorpusSettings, self._get_meta("settings"))
        #: called with (corpus, reason) before a destructive change (the workspace snapshots it)
        self.before_destructive = None
        self._migrate()
        self._given_embedder = embedder
        self._embedder = None
        self._indexes: dict[str, tuple[FaissVectorStore, int]] = {}
        self._milvus_client = None
        self._graph = None
        self._graph_gen = -1
        self._no_pending_at_gen = -1  # prop_gen at which no triplet was waiting for a vector
        #: every triplet up to this tid has a vector (tids only grow; a vector is never unset), so the
        #: pending scan starts past it instead of reading every triplet
        self._vec_upto = -1

    def _create(self, settings: CorpusSettings) -> None:
        with self._lock, self._process_lock(30.0):
            self._db.executescript(_SCHEMA)  # executescript commits on its own
        with self._write():
            self._set_meta("edges_built", _EDGES_VERSION)
            self._set_meta("schema_version", SCHEMA_VERSION)
            self._set_meta("settings", serde.to_dict(settings))
            self._set_meta("corpus_token", secrets.token_hex(8))
            self._bump("chunk_gen")
            self._bump("prop_gen")

    def _migrate(self) -> None:
        """Bring a corpus made by an older build up to date: a token, the entity edge table and its
        covering indexes, the full-text table (each built in its own transaction, so a kill midway leaves it to the next
        open). A read-only corpus is left as it is and answers without them."""
        self.token: str = self._get_meta("corpus_token") or ("legacy" if self.read_only else "")
        if not self.token:  # a corpus from before tokens: give it one (index files are then rebuilt once)
            try:
                with self._write(timeout=2.0):
                    self.token = self._get_meta("corpus_token") or secrets.token_hex(8)
                    self._set_meta("corpus_token", self.token)
            except (CorpusBusyError, sqlite3.OperationalError):
                self.token = "legacy"
        self._edges_ready = self._get_meta("edges_built") == _EDGES_VERSION
        if not self._edges_ready and not self.read_only:
            self._build_entity_edges()
        if self._edges_ready and not self.read_only and not self._edges_covered():
            try:
                self._cover_entity_edges()
            except CorpusBusyError:  # another process is writing: the entity-only indexes until the next open
                pass
        self._digests = has_digests(self._db)
        if not self._digests and not self.read_only:
            try:
                with self._write(timeout=2.0):
                    add_digest_columns(self._db)
                self._digests = True
            except (CorpusBusyError, sqlite3.OperationalError):  # rows written meanwhile carry no digest
                pass
        self._fts_ready = self._fts_present()
        if not self._fts_ready and not self.read_only:
            try:
                self._build_fts()
            except CorpusBusyError:  # another process is writing: BM25 in memory until the next open
                pass

    def close(self) -> None:
        with self._lock:
            self._db.close()
            if self._milvus_client is not None:
                from engine.vectors.milvus_store import release

                self._milvus_client.close()
                self._milvus_client = None
                release(self.settings.vectors, self.path)

    def _get_meta(self, key: str):
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def _set_meta(self, key: str, value) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def _bump(self, key: str) -> int:
        """Draw a new random generation for `key` (not a counter: a database rolled back to an older
        state and written again must not reach a generation an index file was already built for)."""
        gen = secrets.randbits(62)
        self._set_meta(key, gen)
        return gen

    def index_stamp(self, which: str, gen: int) -> str:
        """What an index file built from this database state carries in its header."""
        return f"{self.token}/{which}/{gen}"

    def check(self) -> list[str]:
        """Integrity problems (empty list = healthy): every triplet's chunk exists, every vector maps to
        a row, counts agree between the database and both indexes."""
        problems: list[str] = []
        with self._lock:
            q = lambda sql: self._db.execute(sql).fetchone()[0]  # noqa: E731
            if n := q("SELECT COUNT(*) FROM triplet_sources WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"):
                problems.append(f"{n} triplet source links point at missing chunks")
            if n := q("SELECT COUNT(*) FROM triplets WHERE tid NOT IN (SELECT tid FROM triplet_sources)"):
                problems.append(f"{n} triplets have no source chunk")
            if n := q("SELECT COUNT(*) FROM chunks WHERE chunk_id NOT IN (SELECT chunk_id FROM extraction)"):
                problems.append(f"{n} chunks have no extraction status")
            if n := q("SELECT COUNT(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)"):
                problems.append(f"{n} chunks belong to missing documents")
            if (r := self._db.execute("PRAGMA integrity_check").fetchone()[0]) != "ok":
                problems.append(f"sqlite integrity check: {r}")
            problems += self.text_index_problems()
            problems += digest_problems(self._db)
            problems += self.phrase_graph_problems()
            for which, sql in (
                ("chunks", "SELECT rid, vec FROM chunks"),
                ("propositions", "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL"),
            ):
                ids, vecs = self._index(which).vectors()  # first: it may embed pending propositions
                rows = dict(self._db.execute(sql).fetchall())
                if set(ids.tolist()) != set(rows):
                    have = set(ids.tolist())
                    problems.append(
                        f"{which} index holds {len(have)} vectors for {len(rows)} rows "
                        f"({len(have - set(rows))} without a row, {len(set(rows) - have)} missing)"
                    )
                    continue
                differ = sum(
                    1
                    for i, v in zip(ids.tolist(), vecs)
                    if not np.allclose(v, np.frombuffer(rows[i], np.float32), atol=1e-5)
                )
                if differ:
                    problems.append(f"{which} index: {differ} vectors differ from the database's")
        return problems

    def finish_index_writes(self) -> list[str]:
        """Bring in step the index files a writer left behind the database: killed between its
        commit and its index update (or before its first index file). Rebuilt from the stored
        vectors under the write lock, nothing embedded (a proposition still waiting for its vector
        joins at the next question, as after any extraction); skipped while another process
        writes (it updates them itself). A file of another corpus, swapped or damaged is left to
        `corpus check` to name. Returns one line per file brought in step."""
        done: list[str] = []
        if self.read_only or self.settings.vectors:
            return done
        with self._lock, self._may_save() as saving:
            for which in ("chunks", "propositions") if saving else ():
                gen = int(self._get_meta("chunk_gen" if which == "chunks" else "prop_gen"))
                file = self.path / f"{which}.index"
                stamp = read_stamp(file)
                ours = stamp is not None and stamp.startswith(f"{self.token}/{which}/")
                dim = self._stored_dim(which) or self._stored_dim("chunks")  # one embedder for both
                if stamp == self.index_stamp(which, gen) or dim is None or not (ours or not file.exists()):
                    continue
                self._save_index(which, self._rebuild_index(which, dim), gen)
                was = "missing" if stamp is None else "behind the database"
                done.append(
                    f"{file.name} was {was} (a writer stopped between its commit and its index update): "
                    "brought in step from the stored vectors"
                )
        return done

    def _stored_dim(self, which: str) -> int | None:
        """The dimension of the stored vectors of `which` (None when there is none)."""
        sql = (
            "SELECT vec FROM chunks LIMIT 1"
            if which == "chunks"
            else "SELECT vec FROM triplets WHERE vec IS NOT NULL LIMIT 1"
        )
        row = self._db.execute(sql).fetchone()
        return len(row[0]) // 4 if row else None

    def info(self) -> dict:
        """Counts and settings as plain JSON for `corpus show` and the app."""
        return {
            "name": self.name,
            "path": str(self.path),
            "settings": asdict(self.settings),
            "counts": asdict(self.counts()),
        }
