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
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from engine import serde
from engine.chunking import ChunkingSettings, chunk_document
from engine.progress import ProgressCallback, no_progress
from engine.textnorm import normalize_entity
from engine.types import Chunk, Document, ExtractionStatus, IngestReport, Question, Triplet
from engine.vectors import FaissVectorStore, IndexFileError

SCHEMA_VERSION = 1
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL,
    kind TEXT NOT NULL, sentences TEXT, added_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rid INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id), position INTEGER NOT NULL, title TEXT NOT NULL,
    text TEXT NOT NULL, sent_start INTEGER NOT NULL, sent_end INTEGER NOT NULL, vec BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, position);
CREATE TABLE IF NOT EXISTS triplets (
    tid INTEGER PRIMARY KEY AUTOINCREMENT, subject TEXT NOT NULL, predicate TEXT NOT NULL,
    object TEXT NOT NULL, vec BLOB, UNIQUE(subject, predicate, object));
CREATE TABLE IF NOT EXISTS triplet_sources (
    tid INTEGER NOT NULL REFERENCES triplets(tid), chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id),
    PRIMARY KEY (tid, chunk_id));
CREATE INDEX IF NOT EXISTS sources_chunk ON triplet_sources(chunk_id);
CREATE TABLE IF NOT EXISTS extraction (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id), status TEXT NOT NULL, model TEXT NOT NULL,
    error TEXT NOT NULL, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, cost REAL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS questions (qid TEXT PRIMARY KEY, position INTEGER NOT NULL, data TEXT NOT NULL);
""" + """
CREATE TABLE IF NOT EXISTS entity_edges (tid INTEGER PRIMARY KEY, head TEXT NOT NULL, tail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS edges_head ON entity_edges(head);
CREATE INDEX IF NOT EXISTS edges_tail ON entity_edges(tail);
"""
#: `entity_edges` holds each triplet's normalized entities, indexed both ways, so a question reads
#: the m-hop neighbourhood of its seeds with indexed lookups instead of loading every triplet.
_EDGES_VERSION = 1
#: `auto` indexes switch from exact search to IVF at this many vectors: exact search costs
#: ~20 ms a query at 100k 384-d vectors on one core and grows linearly; IVF builds a million
#: vectors in under a minute where HNSW takes most of an hour (bench/scale_bench.py).
AUTO_IVF_AT = 200_000


class CorpusError(RuntimeError):
    """A problem a user can act on: unknown corpus, bad name, busy corpus, broken file."""


class CorpusBusyError(CorpusError):
    pass


@dataclass(frozen=True)
class CorpusSettings:
    chunking: ChunkingSettings = ChunkingSettings()
    embedder: str = "bundled"
    """Embedder spec (see engine.embed.make_embedder); fixed at creation: vectors must agree."""
    index_kind: str = "auto"
    """`flat` (exact inner product), `hnsw` or `ivf` (approximate, for large corpora), or `auto`:
    exact below AUTO_IVF_AT vectors, IVF from there (recall@10 against exact: docs/scaling.md)."""
    embedder_api_base: str = ""
    """Endpoint for a `litellm:` embedder served by an OpenAI-compatible server (never a key)."""
    vectors: str = ""
    """Where the vector indexes live: '' = FAISS files in the corpus folder (`index_kind`);
    `milvus-lite` = embedded Milvus in the corpus folder; `milvus://host:19530` = a Milvus server."""

    def __post_init__(self) -> None:
        if self.index_kind not in ("flat", "hnsw", "ivf", "auto"):
            raise CorpusError(f"unknown index kind {self.index_kind!r}: use 'auto', 'flat', 'hnsw' or 'ivf'")
        if self.vectors and not (self.vectors == "milvus-lite" or self.vectors.startswith(("milvus://", "http"))):
            raise CorpusError(f"unknown vector backend {self.vectors!r}: use '' (FAISS files), 'milvus-lite' or "
                              "milvus://host:19530")


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    title: str
    source: str
    kind: str
    n_chunks: int


@dataclass(frozen=True)
class CorpusCounts:
    documents: int
    chunks: int
    triplets: int
    questions: int
    extracted: int
    pending: int
    failed: int


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name:
        raise CorpusError(f"invalid corpus name {name!r}: use 1-64 letters, digits, '-', '_' or '.', "
                          "starting with a letter or digit (no paths)")
    return name


def _chunks(values: list, size: int) -> Iterator[list]:
    for i in range(0, len(values), size):
        yield values[i:i + size]


def set_aside_non_file(path: Path) -> Path | None:
    """Move whatever non-file stands at `path` (a directory, say) to `<path>.damaged-<time>` so an
    index can be written there again; the user's thing is kept, never deleted."""
    if path.is_dir() or (path.exists() and not path.is_file()):
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        os.replace(path, aside)
        return aside
    return None


def embedding_text(chunk: Chunk) -> str:
    """What a chunk's vector encodes: its text, headed by its title unless the text already starts
    with it (a paragraph saying "He was born in..." is only findable through its title)."""
    if chunk.title and not chunk.text.startswith(chunk.title):
        return f"{chunk.title}\n{chunk.text}"
    return chunk.text


def _vec_blob(v: np.ndarray) -> bytes:
    return np.ascontiguousarray(v, dtype=np.float32).tobytes()


class Workspace:
    """A folder of corpora. `embedder`, when given, serves every corpus whose spec it matches
    (tests and the app pass the one already loaded instead of loading it again).

    Destructive changes keep a way back: `drop` moves the corpus into `.snapshots/<name>/` and a
    document delete snapshots the corpus first; the newest `keep_snapshots` automatic snapshots of
    each corpus are kept (engine.backup restores them)."""

    def __init__(self, root: Path | str, embedder=None, keep_snapshots: int = 3, read_only: bool = False):
        self.root = Path(root).expanduser().resolve()
        self.read_only = read_only
        if not read_only:
            self.root.mkdir(parents=True, exist_ok=True)
        elif not self.root.is_dir():
            raise CorpusError(f"workspace {self.root} does not exist (it is opened read-only)")
        self._embedder = embedder
        self.keep_snapshots = keep_snapshots

    def path_of(self, name: str) -> Path:
        path = (self.root / validate_name(name)).resolve()
        if path.parent != self.root:
            raise CorpusError(f"corpus name {name!r} escapes the workspace")
        return path

    def exists(self, name: str) -> bool:
        return (self.path_of(name) / "corpus.sqlite").is_file()

    def list(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir()
                      if p.is_dir() and (p / "corpus.sqlite").is_file() and _NAME_RE.match(p.name))

    def create(self, name: str, settings: CorpusSettings | None = None, *,
               chunking: ChunkingSettings | None = None, embedder: str | None = None) -> "Corpus":
        settings = settings or CorpusSettings()
        if chunking is not None:
            settings = replace(settings, chunking=chunking)
        if embedder is not None:
            settings = replace(settings, embedder=embedder)
        path = self.path_of(name)
        self._refuse_if_read_only("create a corpus")
        if (path / "corpus.sqlite").exists():
            raise CorpusError(f"corpus {name!r} already exists in {self.root}")
        # built aside and renamed into place: a create killed at any point leaves no stub that
        # would then say "already exists" (hidden `.creating` folders are never listed)
        tmp = self.root / f".{name}.creating-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            tmp.mkdir()
            Corpus(tmp, create_with=settings, embedder=self._embedder).close()
            if path.exists():  # a stub left by a create killed before this version: kept aside
                os.replace(path, path.with_name(f".{name}.stub-{time.strftime('%Y%m%dT%H%M%S')}"))
            os.replace(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.open(name)

    def discard(self, name: str) -> None:
        """Delete a corpus that never finished being created (no snapshot: there is nothing to keep)."""
        path = self.path_of(name)
        trash = path.with_name(f".{path.name}.discarded.{os.getpid()}")
        if path.exists():
            os.replace(path, trash)
            shutil.rmtree(trash, ignore_errors=True)

    def create_from(self, name: str, documents: Sequence[Document], questions: Sequence[Question] = (),
                    settings: CorpusSettings | None = None, *,
                    on_progress: ProgressCallback = no_progress) -> tuple["Corpus", IngestReport, int]:
        """Create a corpus holding `documents` (and `questions`) or nothing at all: chunked,
        embedded and filled in a hidden folder, renamed into place once complete, so a failure
        (no document, a bad embedder, Ctrl-C, a kill) never leaves an empty or half-built corpus.
        Returns the corpus, the ingest report and the number of questions added."""
        path = self.path_of(name)
        self._refuse_if_read_only("create a corpus")
        if (path / "corpus.sqlite").exists():
            raise CorpusError(f"corpus {name!r} already exists in {self.root}")
        if not documents:
            raise CorpusError(f"corpus {name!r} not created: no document to put in it")
        for stale in self.root.glob(f".{name}.creating-*"):  # left by a killed create
            pid = stale.name.rsplit(".creating-", 1)[-1].split("-")[0]
            if not (pid.isdigit() and Path(f"/proc/{pid}").exists()):
                shutil.rmtree(stale, ignore_errors=True)
        tmp = self.root / f".{name}.creating-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            tmp.mkdir()
            corpus = Corpus(tmp, create_with=settings or CorpusSettings(), embedder=self._embedder)
            try:
                report = corpus.add_documents(documents, on_progress=on_progress)
                n_questions = corpus.add_questions(questions) if questions else 0
            finally:
                corpus.close()
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()  # the empty folder an older build's failed create left
            elif path.exists():  # a stub left by a create killed before atomic creates: kept aside
                os.replace(path, path.with_name(f".{name}.stub-{time.strftime('%Y%m%dT%H%M%S')}"))
            try:
                os.rename(tmp, path)
            except OSError as e:
                raise CorpusError(f"corpus {name!r} already exists in {self.root}") from e
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.open(name), report, n_questions

    def open(self, name: str) -> "Corpus":
        path = self.path_of(name)
        if not (path / "corpus.sqlite").is_file():
            known = ", ".join(self.list()) or "none yet"
            raise CorpusError(f"no corpus named {name!r} in {self.root} (corpora: {known})")
        return self._wire(Corpus(path, embedder=self._embedder, read_only=self.read_only))

    def _refuse_if_read_only(self, what: str) -> None:
        if self.read_only:
            raise CorpusError(f"the workspace {self.root} is read-only: cannot {what}")

    def _wire(self, corpus: "Corpus") -> "Corpus":
        if self.keep_snapshots > 0 and not corpus.read_only:
            from engine.backup import snapshot_before

            corpus.before_destructive = lambda c, reason: snapshot_before(self, c, reason)
        return corpus

    def drop(self, name: str) -> None:
        """Remove a corpus from the workspace. With snapshots kept (the default) the folder moves
        into `.snapshots/<name>/` whole (`corpus undo-drop NAME` brings it back); else it is deleted."""
        path = self.path_of(name)
        if not path.exists():
            raise CorpusError(f"no corpus named {name!r} in {self.root}")
        self._refuse_if_read_only("drop a corpus")
        if self.keep_snapshots > 0:
            from engine.backup import keep_dropped

            keep_dropped(self, name)
            return
        # rename first so a crash mid-delete never leaves a half corpus that still opens
        trash = path.with_name(f".{path.name}.dropped.{os.getpid()}")
        os.replace(path, trash)
        shutil.rmtree(trash, ignore_errors=True)


class Corpus:
    """One corpus. Safe to share between threads; writes are serialized across processes."""

    def __init__(self, path: Path, *, create_with: CorpusSettings | None = None, embedder=None,
                 read_only: bool = False):
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
        if self.read_only:
            mode = "ro&immutable=1" if storage_ro else "ro"
            self._db = sqlite3.connect(f"file:{db}?mode={mode}", uri=True, check_same_thread=False,
                                       isolation_level=None, timeout=30.0)
        else:
            self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
        if create_with is not None:
            with self._lock, self._process_lock(30.0):
                self._db.executescript(_SCHEMA)  # executescript commits on its own
            with self._write():
                self._set_meta("edges_built", _EDGES_VERSION)
                self._set_meta("schema_version", SCHEMA_VERSION)
                self._set_meta("settings", serde.to_dict(create_with))
                self._set_meta("corpus_token", secrets.token_hex(8))
                self._bump("chunk_gen")
                self._bump("prop_gen")
        version = self._get_meta("schema_version")
        if version != SCHEMA_VERSION:
            raise CorpusError(f"corpus {self.name!r} has schema version {version!r}; this build reads {SCHEMA_VERSION}")
        self.settings: CorpusSettings = serde.from_dict(CorpusSettings, self._get_meta("settings"))
        self.token: str = self._get_meta("corpus_token") or ("legacy" if self.read_only else "")
        if not self.token:  # a corpus from before tokens: give it one (index files are then rebuilt once)
            try:
                with self._write(timeout=2.0):
                    self.token = self._get_meta("corpus_token") or secrets.token_hex(8)
                    self._set_meta("corpus_token", self.token)
            except (CorpusBusyError, sqlite3.OperationalError):
                self.token = "legacy"
        #: called with (corpus, reason) before a destructive change (the workspace snapshots it)
        self.before_destructive = None
        self._edges_ready = self._get_meta("edges_built") == _EDGES_VERSION
        if not self._edges_ready and not self.read_only:
            self._build_entity_edges()
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

    # --- plumbing --------------------------------------------------------------------------

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

    @contextmanager
    def _write(self, timeout: float = 30.0) -> Iterator[None]:
        """One write transaction under the corpus's process lock."""
        with self._lock, self._process_lock(timeout):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _process_lock(self, timeout: float) -> Iterator[None]:
        """The cross-process write lock (flock on `write.lock`), shared by this object's threads:
        taken when the first holder enters, released when the last one leaves."""
        with self._plock_guard:
            if self._plock_count == 0:
                self._plock_fh = self._flock("write.lock", timeout, f"corpus {self.name!r} is busy: another process "
                                             "is writing to it; try again when it finishes")
            self._plock_count += 1
        try:
            yield
        finally:
            with self._plock_guard:
                self._plock_count -= 1
                if self._plock_count == 0:
                    fcntl.flock(self._plock_fh, fcntl.LOCK_UN)
                    self._plock_fh.close()
                    self._plock_fh = None

    def _flock(self, filename: str, timeout: float, busy: str):
        if self.read_only:
            raise CorpusError(f"corpus {self.name!r} is open read-only (read-only storage): it cannot be changed")
        fh = open(self.path / filename, "a+")
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fh
            except BlockingIOError:
                if time.monotonic() > deadline:
                    fh.close()
                    raise CorpusBusyError(busy) from None
                time.sleep(0.05)

    @contextmanager
    def extracting(self, timeout: float = 5.0) -> Iterator[None]:
        """One extraction run at a time per corpus (a second one would pay for the same chunks).
        Only extractions take this lock: each chunk's result is stored in its own short write, so
        questions, checks and adds from other processes go on during a run of hours."""
        fh = self._flock("extract.lock", timeout, f"corpus {self.name!r} is already being extracted by another "
                         "run; wait for it (its progress is in corpus show)")
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()

    @contextmanager
    def writing(self, timeout: float = 30.0) -> Iterator[None]:
        """Hold the corpus's cross-process write lock across several calls (an extraction run).
        Readers in other threads are not blocked; each write still runs as its own transaction."""
        with self._process_lock(timeout):
            yield

    # --- embedder and indexes ---------------------------------------------------------------

    @property
    def embedder(self):
        if self._embedder is None:
            given = self._given_embedder
            if given is not None and self.settings.embedder in ("bundled", getattr(given, "spec", None)):
                self._embedder = given
            else:
                from engine.embed import make_embedder

                self._embedder = make_embedder(self.settings.embedder, api_base=self.settings.embedder_api_base)
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.encode(list(texts))

    def _index(self, which: str) -> FaissVectorStore:
        """The in-memory index for `chunks` or `propositions`, in step with the database."""
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
            if cached and cached[0].kind == self._kind_for(which) and not self.read_only:
                # in step at an older state: add and remove by ids (rowids are never reused)
                try:
                    self._resync(which, cached[0])
                except NotImplementedError:  # HNSW cannot drop nodes: rebuilt below
                    pass
                else:
                    self._save_index(which, cached[0], gen)
                    return cached[0]
            file = self.path / f"{which}.index"
            dim = self.embedder.dim
            try:
                store, stamp = FaissVectorStore.load(file, dim, self._kind_for(which))
                if stamp != self.index_stamp(which, gen):
                    raise IndexFileError("stale")
            except IndexFileError:
                store = self._rebuild_index(which, dim)
                if not self.read_only:  # read-only: the rebuilt index lives in memory only
                    set_aside_non_file(file)
                    store.save(file, self.index_stamp(which, gen))
            self._indexes[which] = (store, gen)
            return store

    def _milvus_index(self, which: str, gen: int):
        """The Milvus collection for `which`, re-synced by ids when its stamp is not this state's
        (a crash between the SQLite commit and the Milvus write, a restored database)."""
        from engine.vectors.milvus_store import MilvusVectorStore, parse_uri

        uri = parse_uri(self.settings.vectors, self.path)
        if self._milvus_client is None:
            from engine.vectors.milvus_store import _client

            self._milvus_client = _client(uri)
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
        pending = [] if which == "chunks" else [r[0] for r in self._db.execute(
            "SELECT tid FROM triplets WHERE vec IS NULL AND tid > ?", (self._vec_floor(),))]
        # Only appends since `store` was in step (the usual case): the rows past its highest id,
        # and the row count says nothing else changed (ids are never reused, and no row at or below
        # that id can still be waiting for a vector). Reads an index count and a range, not every id.
        top = int(have.max()) if len(have) else -1
        new = [r[0] for r in self._db.execute(f"SELECT {key} FROM {table} WHERE {key} > ? AND "
                                              f"{'1' if which == 'chunks' else 'vec IS NOT NULL'}", (top,))]
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
            part = missing[i:i + 4096]
            rows = self._in_query(f"SELECT {key}, vec FROM {table} WHERE vec IS NOT NULL AND {key} IN ({{}})", part)
            store.add(np.array([r[0] for r in rows], np.int64),
                      np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1))
        return len(missing), len(extra)

    def _kind_for(self, which: str) -> str:
        """The FAISS index kind for `which` at its current size (`auto`: by the row count)."""
        kind = self.settings.index_kind
        if kind != "auto":
            return kind
        # all triplets, pending or not: this count reads an index, not every row's vector
        sql = "SELECT COUNT(*) FROM chunks" if which == "chunks" else "SELECT COUNT(*) FROM triplets"
        return "ivf" if self._db.execute(sql).fetchone()[0] >= AUTO_IVF_AT else "flat"

    def _rebuild_index(self, which: str, dim: int, page: int = 65536) -> FaissVectorStore:
        """Build from the stored vectors, read in pages (memory: the index plus one page)."""
        count = ("SELECT COUNT(*) FROM chunks" if which == "chunks"
                 else "SELECT COUNT(*) FROM triplets WHERE vec IS NOT NULL")
        store = FaissVectorStore(dim, self._kind_for(which), expected=self._db.execute(count).fetchone()[0])
        sql = ("SELECT rid, vec FROM chunks" if which == "chunks"
               else "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL")
        if store.kind == "ivf" and store.expected > page:  # cells from a sample of the whole table
            from engine.vectors.faiss_store import ivf_training_ids

            key = "rid" if which == "chunks" else "tid"
            ids = np.fromiter((r[0] for r in self._db.execute(sql.replace(", vec", ""))), np.int64)
            rows = self._in_query(f"{sql} AND {key} IN ({{}})" if which != "chunks" else f"{sql} WHERE rid IN ({{}})",
                                  ivf_training_ids(ids, store.expected).tolist())
            store.train(np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), dim))
            del ids, rows
        cur = self._db.execute(sql)
        while rows := cur.fetchmany(page):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            store.add(ids, vecs)
        return store

    def _save_index(self, which: str, store: FaissVectorStore, gen: int) -> None:
        name = f"{which}.milvus.json" if self.settings.vectors else f"{which}.index"
        store.save(self.path / name, self.index_stamp(which, gen))
        self._indexes[which] = (store, gen)

    def _embed_batched(self, texts: list[str], on_progress: ProgressCallback, label: str,
                       block: int = 256) -> np.ndarray:
        """Embed in blocks (so progress can be reported) sorted by length: each block then pads as
        little as one big encode call would, which keeps the store within a few % of raw encoding."""
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), block):
            idx = order[start:start + block]
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

    def _embed_pending_propositions(self, on_progress: ProgressCallback = no_progress, batch: int = 256,
                                    page: int = 50_000) -> int:
        """Embed triplets stored without a vector (new from extraction or import)."""
        gen = int(self._get_meta("prop_gen"))
        if gen == self._no_pending_at_gen or self.read_only:  # nothing new, or nowhere to store vectors
            return 0
        sql = "SELECT tid, subject, predicate, object FROM triplets WHERE vec IS NULL AND tid > ? ORDER BY tid LIMIT ?"
        done, last = 0, self._vec_floor()
        top = self._db.execute("SELECT COALESCE(MAX(tid), -1) FROM triplets").fetchone()[0]
        rows = self._db.execute(sql, (last, page)).fetchall()
        total = len(rows) if len(rows) < page else \
            self._db.execute("SELECT COUNT(*) FROM triplets WHERE vec IS NULL").fetchone()[0]
        while rows:  # in pages: memory holds one page of texts and vectors, whatever the corpus
            vecs = self._embed_batched([f"{s} {p} {o}" for _, s, p, o in rows],
                                       lambda i, n, label: on_progress(done + i, max(total, done + n), label),
                                       "embedding propositions", batch)
            with self._write():
                self._db.executemany("UPDATE triplets SET vec=? WHERE tid=? AND vec IS NULL",
                                     [(_vec_blob(v), r[0]) for v, r in zip(vecs, rows)])
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
        """Embed what is pending and bring both index files in step (end of a long write)."""
        with self._lock:
            self._embed_pending_propositions(on_progress)
            for which in ("chunks", "propositions"):
                self._index(which)

    def search_chunks(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        with self._lock:
            scores, ids = self._index("chunks").search(query_vecs, k)
            rid_to_id = self._chunk_ids_for_rids({int(i) for i in ids.ravel() if i >= 0})
        return [[(rid_to_id[int(i)], float(s)) for s, i in zip(srow, irow) if i >= 0 and int(i) in rid_to_id]
                for srow, irow in zip(scores, ids)]

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
            part = rl[i:i + 900]
            q = f"SELECT rid, chunk_id FROM chunks WHERE rid IN ({','.join('?' * len(part))})"
            out.update(self._db.execute(q, part).fetchall())
        return out

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        with self._lock:
            found = dict(self._in_query("SELECT chunk_id, vec FROM chunks WHERE chunk_id IN ({})", chunk_ids))
        return self._stack([found.get(c) for c in chunk_ids])

    def proposition_vectors(self, triplet_ids: Sequence[int]) -> np.ndarray:
        with self._lock:
            self._embed_pending_propositions()
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
            part = values[i:i + 900]
            out.extend(self._db.execute(sql.format(",".join("?" * len(part))), part).fetchall())
        return out

    # --- reading ------------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        with self._lock:
            rows = self._db.execute(
                "SELECT d.doc_id, d.title, d.source, d.kind, COUNT(c.rid) FROM documents d "
                "LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id ORDER BY d.added_at, d.rowid").fetchall()
        return [DocumentInfo(*r) for r in rows]

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            r = self._db.execute("SELECT doc_id, title, text, source, kind, sentences FROM documents WHERE doc_id=?",
                                 (doc_id,)).fetchone()
        if not r:
            return None
        sents = tuple(json.loads(r[5])) if r[5] else None
        return Document(r[0], r[1], r[2], r[3], r[4], sents)

    _CHUNK_COLS = "chunk_id, doc_id, position, title, text, sent_start, sent_end"

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        with self._lock:
            if doc_id is None:
                rows = self._db.execute(f"SELECT {self._CHUNK_COLS} FROM chunks ORDER BY rid").fetchall()
            else:
                rows = self._db.execute(f"SELECT {self._CHUNK_COLS} FROM chunks WHERE doc_id=? ORDER BY position",
                                        (doc_id,)).fetchall()
        return [Chunk(*r) for r in rows]

    def iter_chunks(self, batch: int = 10000) -> Iterator[Chunk]:
        """Every chunk in insertion order, read `batch` rows at a time (bounded memory)."""
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(f"SELECT rid, {self._CHUNK_COLS} FROM chunks WHERE rid > ? ORDER BY rid "
                                        "LIMIT ?", (last, batch)).fetchall()
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
        sql = ("SELECT t.tid, t.subject, t.predicate, t.object, GROUP_CONCAT(s.chunk_id, char(31)) FROM triplets t "
               "JOIN triplet_sources s ON s.tid = t.tid {} GROUP BY t.tid ORDER BY t.tid")
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
            self._counts_cache = (key, CorpusCounts(
                documents=one("SELECT COUNT(*) FROM documents"), chunks=one("SELECT COUNT(*) FROM chunks"),
                triplets=one("SELECT COUNT(*) FROM triplets"), questions=one("SELECT COUNT(*) FROM questions"),
                extracted=status.get("done", 0), pending=status.get("pending", 0), failed=status.get("failed", 0)))
            return self._counts_cache[1]

    def extraction_statuses(self) -> dict[str, ExtractionStatus]:
        with self._lock:
            rows = self._db.execute("SELECT chunk_id, status, model, error, calls, prompt_tokens, completion_tokens, "
                                    "cost FROM extraction").fetchall()
        return {r[0]: ExtractionStatus(*r) for r in rows}

    def pending_chunks(self) -> list[Chunk]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join('c.' + c for c in self._CHUNK_COLS.split(', '))} FROM chunks c "
                "JOIN extraction e ON e.chunk_id = c.chunk_id WHERE e.status != 'done' ORDER BY c.rid").fetchall()
        return [Chunk(*r) for r in rows]

    def entity_neighbourhood(self, entities: Iterable[str], hops: int):
        """The part of `entity_graph()` a walk of `hops` hops from `entities` (normalized names) can
        reach: every edge incident to an entity at distance < hops, read with indexed lookups, so a
        question's cost follows its neighbourhood, not the corpus. Same node and edge attributes."""
        import networkx as nx

        if not self._edges_ready:  # a read-only corpus from before the edge table
            full = self.entity_graph()
            seen = set(e for e in entities if e in full)
            frontier, keep = set(seen), set()
            for _ in range(max(hops, 0)):
                nxt = set()
                for n in frontier:
                    for _, m, key in full.edges(n, keys=True):
                        keep.add(key)
                        if m not in seen:
                            nxt.add(m)
                seen |= nxt
                frontier = nxt
            return full.edge_subgraph([(u, v, k) for u, v, k in full.edges(keys=True) if k in keep]).copy()
        seen = {e for e in entities if e}
        frontier, tids = set(seen), {}
        with self._lock:
            for _ in range(max(hops, 0)):
                if not frontier:
                    break
                rows = []
                for part in _chunks(sorted(frontier), 400):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(f"SELECT tid, head, tail FROM entity_edges WHERE head IN ({marks}) "
                                             f"UNION SELECT tid, head, tail FROM entity_edges WHERE tail IN ({marks})",
                                             part + part).fetchall()
                nxt = set()
                for tid, h, t in rows:
                    if h and t:
                        tids[tid] = (h, t)
                        nxt.update(x for x in (h, t) if x not in seen)
                seen |= nxt
                frontier = nxt
        g = nx.MultiGraph()
        for t in self.get_triplets(sorted(tids)):
            h, tl = tids[t.triplet_id]  # normalized when stored: not again per question (a hub has thousands)
            g.add_node(h, label=t.subject) if h not in g else None
            g.add_node(tl, label=t.object) if tl not in g else None
            g.add_edge(h, tl, key=t.triplet_id, subject=t.subject, predicate=t.predicate, object=t.object,
                       triplet_id=t.triplet_id, chunk_ids=t.chunk_ids)
        return g

    def entity_graph(self):
        """networkx MultiGraph: normalized entities as nodes, one edge per triplet (key = triplet id)."""
        import networkx as nx

        with self._lock:
            gen = int(self._get_meta("prop_gen"))
            if self._graph is not None and self._graph_gen == gen:
                return self._graph
            g = nx.MultiGraph()
            for t in self.triplets():
                h, tl = normalize_entity(t.subject), normalize_entity(t.object)
                if not h or not tl:
                    continue
                g.add_node(h, label=t.subject) if h not in g else None
                g.add_node(tl, label=t.object) if tl not in g else None
                g.add_edge(h, tl, key=t.triplet_id, subject=t.subject, predicate=t.predicate, object=t.object,
                           triplet_id=t.triplet_id, chunk_ids=t.chunk_ids)
            self._graph, self._graph_gen = g, gen
            return g

    # --- writing ------------------------------------------------------------------------------

    def add_documents(self, docs: Iterable[Document], on_progress: ProgressCallback = no_progress,
                      batch_size: int = 64, commit_chunks: int = 2048, sync_index: bool = True) -> IngestReport:
        """Chunk, embed and store documents. A document already present (same id) is skipped.
        Documents are committed in batches of about `commit_chunks` chunks, so an interrupted add of
        hours keeps every finished batch (adding the same files again picks up where it stopped).
        The chunk index file is brought in step once at the end; a bulk load calling this many times
        passes `sync_index=False` and calls `refresh_indexes()` once (saving a million-vector index
        after every batch would make the load quadratic)."""
        report = IngestReport()
        docs = list(docs)
        with self._lock:
            existing = {r[0] for r in self._in_query("SELECT doc_id FROM documents WHERE doc_id IN ({})",
                                                     [d.doc_id for d in docs])}
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
        batches: list[list[tuple[Document, list[Chunk]]]] = [[]]
        in_batch = 0  # chunks in the last batch (a running count: summing it per document was quadratic)
        for item in per_doc:
            if batches[-1] and in_batch + len(item[1]) > commit_chunks:
                batches.append([])
                in_batch = 0
            batches[-1].append(item)
            in_batch += len(item[1])
        with self._lock:
            first_gen = int(self._get_meta("chunk_gen"))
            top_rid = self._db.execute("SELECT COALESCE(MAX(rid), 0) FROM chunks").fetchone()[0]
        done = 0
        for batch in batches:
            chunks = [c for _, cs in batch for c in cs]
            offset = done
            vecs = self._embed_batched([embedding_text(c) for c in chunks],
                                       lambda d, _t, label: on_progress(offset + d, total, label),
                                       "embedding chunks", batch_size * 4)
            self._commit_documents([d for d, _ in batch], chunks, vecs, report)
            done += len(chunks)
        if sync_index:
            self._sync_chunk_index_after_add(first_gen, top_rid)
        return report

    def _commit_documents(self, new_docs: list[Document], chunks: list[Chunk], vecs: np.ndarray,
                          report: IngestReport) -> None:
        now = time.time()
        with self._write():
            # another process may have added some of them while these were embedded (outside the
            # lock): skip those instead of failing the whole batch on the unique doc_id
            raced = {r[0] for r in self._in_query("SELECT doc_id FROM documents WHERE doc_id IN ({})",
                                                  [d.doc_id for d in new_docs])}
            if raced:
                keep = [i for i, c in enumerate(chunks) if c.doc_id not in raced]
                chunks, vecs = [chunks[i] for i in keep], vecs[keep]
                new_docs = [d for d in new_docs if d.doc_id not in raced]
                report.documents_skipped += len(raced)
            self._db.executemany(
                "INSERT INTO documents(doc_id, title, text, source, kind, sentences, added_at) VALUES (?,?,?,?,?,?,?)",
                [(d.doc_id, d.title, d.text, d.source, d.kind,
                  json.dumps(list(d.sentences)) if d.sentences is not None else None, now) for d in new_docs])
            self._db.executemany(
                "INSERT INTO chunks(chunk_id, doc_id, position, title, text, sent_start, sent_end, vec) "
                "VALUES (?,?,?,?,?,?,?,?)",
                [(c.chunk_id, c.doc_id, c.position, c.title, c.text, c.sent_start, c.sent_end, _vec_blob(v))
                 for c, v in zip(chunks, vecs)])
            self._db.executemany(
                "INSERT INTO extraction(chunk_id, status, model, error, calls, prompt_tokens, completion_tokens, "
                "cost, updated_at) VALUES (?, 'pending', '', '', 0, 0, 0, NULL, ?)", [(c.chunk_id, now) for c in chunks])
            self._bump("chunk_gen")
        report.documents_added += len(new_docs)
        report.chunks_added += len(chunks)

    def _sync_chunk_index_after_add(self, prev_gen: int, top_rid: int) -> None:
        """Bring the chunk index in step after an add: when it was current before the add
        (`prev_gen`), append the new rows; else rebuild. Saved once, not per committed batch."""
        with self._lock:
            gen = int(self._get_meta("chunk_gen"))
            cached = self._indexes.get("chunks")
            if cached and cached[1] == prev_gen and (cached[0].kind == self._kind_for("chunks")
                                                     or self.settings.vectors):
                # the index was current before this add: append the new rows instead of rebuilding
                store = cached[0]
                top = top_rid
                rows = self._db.execute("SELECT rid, vec FROM chunks WHERE rid > ?", (top,)).fetchall()
                if rows:
                    store.add(np.array([r[0] for r in rows], np.int64),
                              np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1))
                self._save_index("chunks", store, gen)
            else:
                self._index("chunks")

    def add_questions(self, questions: Iterable[Question]) -> int:
        questions = list(questions)
        with self._write():
            start = self._db.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM questions").fetchone()[0]
            before = self._db.total_changes
            self._db.executemany("INSERT OR IGNORE INTO questions(qid, position, data) VALUES (?,?,?)",
                                 [(q.qid, start + i, serde.dumps(q)) for i, q in enumerate(questions)])
            return self._db.total_changes - before

    def _insert_triplets(self, chunk_id: str, triplets: Iterable[tuple[str, str, str]]) -> int:
        n = 0
        for s, p, o in triplets:
            self._db.execute("INSERT OR IGNORE INTO triplets(subject, predicate, object) VALUES (?,?,?)", (s, p, o))
            tid = self._db.execute("SELECT tid FROM triplets WHERE subject=? AND predicate=? AND object=?",
                                   (s, p, o)).fetchone()[0]
            self._db.execute("INSERT OR IGNORE INTO entity_edges(tid, head, tail) VALUES (?,?,?)",
                             (tid, normalize_entity(s), normalize_entity(o)))
            cur = self._db.execute("INSERT OR IGNORE INTO triplet_sources(tid, chunk_id) VALUES (?,?)", (tid, chunk_id))
            n += cur.rowcount
        return n

    def _drop_orphan_triplets(self) -> int:
        cur = self._db.execute("DELETE FROM triplets WHERE tid NOT IN (SELECT tid FROM triplet_sources)")
        self._db.execute("DELETE FROM entity_edges WHERE tid NOT IN (SELECT tid FROM triplets)")
        return cur.rowcount

    def _build_entity_edges(self) -> None:
        """Fill `entity_edges` for a corpus made before it existed (or salvaged), in batches."""
        with self._lock, self._process_lock(30.0):
            self._db.executescript(_SCHEMA)  # adds the table and its indexes to an older file
        with self._write():
            last = 0
            while True:
                rows = self._db.execute("SELECT tid, subject, object FROM triplets WHERE tid > ? ORDER BY tid "
                                        "LIMIT 10000", (last,)).fetchall()
                if not rows:
                    break
                self._db.executemany("INSERT OR IGNORE INTO entity_edges(tid, head, tail) VALUES (?,?,?)",
                                     [(t, normalize_entity(s), normalize_entity(o)) for t, s, o in rows])
                last = rows[-1][0]
            self._set_meta("edges_built", _EDGES_VERSION)
        self._edges_ready = True

    def store_extraction(self, chunk_id: str, triplets: Sequence[tuple[str, str, str]],
                         status: ExtractionStatus) -> None:
        """Replace the chunk's triplets and mark it done, in one transaction (resume relies on it)."""
        with self._write():
            if not self._db.execute("SELECT 1 FROM chunks WHERE chunk_id=?", (chunk_id,)).fetchone():
                raise CorpusError(f"chunk {chunk_id!r} is not in corpus {self.name!r} (deleted meanwhile?)")
            self._db.execute("DELETE FROM triplet_sources WHERE chunk_id=?", (chunk_id,))
            self._insert_triplets(chunk_id, triplets)
            self._drop_orphan_triplets()
            self._db.execute(
                "INSERT OR REPLACE INTO extraction(chunk_id, status, model, error, calls, prompt_tokens, "
                "completion_tokens, cost, updated_at) VALUES (?, 'done', ?, '', ?, ?, ?, ?, ?)",
                (chunk_id, status.model, status.calls, status.prompt_tokens, status.completion_tokens, status.cost,
                 time.time()))
            self._bump("prop_gen")

    def mark_extraction_failed(self, chunk_id: str, error: str, model: str = "") -> None:
        with self._write():
            self._db.execute("UPDATE extraction SET status='failed', error=?, model=?, updated_at=? WHERE chunk_id=?",
                             (error[:2000], model, time.time(), chunk_id))

    def import_triplets(self, rows: Iterable[tuple[str, str, str, str]],
                        on_progress: ProgressCallback = no_progress, refresh: bool = True) -> int:
        """Add `(chunk_id, s, p, o)` rows (imported files); returns how many new (triplet, chunk) links.
        Rows naming an unknown chunk are skipped. Imported chunks count as extracted. `refresh=False`
        leaves embedding and indexing to one `refresh_indexes()` after many batches."""
        rows = list(rows)
        with self._write():
            known = {r[0] for r in self._in_query("SELECT chunk_id FROM chunks WHERE chunk_id IN ({})",
                                                  list({r[0] for r in rows}))}
            added = 0
            for i, (cid, s, p, o) in enumerate(rows):
                if cid in known:
                    added += self._insert_triplets(cid, [(s, p, o)])
            self._db.executemany("UPDATE extraction SET status='done', model='import', error='', updated_at=? "
                                 "WHERE chunk_id=?", [(time.time(), c) for c in known])
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
        if self.before_destructive is not None:
            self.before_destructive(self, f"delete-doc {doc_id}")
        with self._write():
            if not self._db.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone():
                raise CorpusError(f"no document {doc_id!r} in corpus {self.name!r}")
            sub = "SELECT chunk_id FROM chunks WHERE doc_id=?"
            self._db.execute(f"DELETE FROM triplet_sources WHERE chunk_id IN ({sub})", (doc_id,))
            self._db.execute(f"DELETE FROM extraction WHERE chunk_id IN ({sub})", (doc_id,))
            self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
            self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
            self._drop_orphan_triplets()
            self._bump("chunk_gen")
            self._bump("prop_gen")
        # rebuilt from the stored vectors: exact for both index kinds, and cheap next to embedding
        self.refresh_indexes()

    # --- integrity ----------------------------------------------------------------------------

    def check(self) -> list[str]:
        """Integrity problems (empty list = healthy): every triplet's chunk exists, every vector maps to
        a row, counts agree between the database and both indexes."""
        problems: list[str] = []
        with self._lock:
            q = lambda sql: self._db.execute(sql).fetchone()[0]  # noqa: E731
            if (n := q("SELECT COUNT(*) FROM triplet_sources WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)")):
                problems.append(f"{n} triplet source links point at missing chunks")
            if (n := q("SELECT COUNT(*) FROM triplets WHERE tid NOT IN (SELECT tid FROM triplet_sources)")):
                problems.append(f"{n} triplets have no source chunk")
            if (n := q("SELECT COUNT(*) FROM chunks WHERE chunk_id NOT IN (SELECT chunk_id FROM extraction)")):
                problems.append(f"{n} chunks have no extraction status")
            if (n := q("SELECT COUNT(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)")):
                problems.append(f"{n} chunks belong to missing documents")
            if (r := self._db.execute("PRAGMA integrity_check").fetchone()[0]) != "ok":
                problems.append(f"sqlite integrity check: {r}")
            for which, sql in (("chunks", "SELECT rid, vec FROM chunks"),
                               ("propositions", "SELECT tid, vec FROM triplets WHERE vec IS NOT NULL")):
                ids, vecs = self._index(which).vectors()  # first: it may embed pending propositions
                rows = dict(self._db.execute(sql).fetchall())
                if set(ids.tolist()) != set(rows):
                    have = set(ids.tolist())
                    problems.append(f"{which} index holds {len(have)} vectors for {len(rows)} rows "
                                    f"({len(have - set(rows))} without a row, {len(set(rows) - have)} missing)")
                    continue
                differ = sum(1 for i, v in zip(ids.tolist(), vecs)
                             if not np.allclose(v, np.frombuffer(rows[i], np.float32), atol=1e-5))
                if differ:
                    problems.append(f"{which} index: {differ} vectors differ from the database's")
        return problems

    def info(self) -> dict:
        """Counts and settings as plain JSON for `corpus show` and the app."""
        return {"name": self.name, "path": str(self.path), "settings": asdict(self.settings),
                "counts": asdict(self.counts())}
