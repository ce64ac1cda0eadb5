"""HippoRAG 2's phrase graph, kept with the corpus: phrase nodes with their vectors and the synonym
edges between them (the rules: engine/core/phrases.py).

Embedding every phrase and comparing each with all the others is what made HippoRAG 2's first
question on a corpus take seconds to minutes, in every process. The corpus keeps the result in
three tables of its own database, so a backup, a restore and `corpus check` cover it:

    hippo_phrases   (pid, phrase, vec)      one row per phrase node (a processed subject or object)
    hippo_synonyms  (a, b, score)           phrase a's synonym edges, by phrase id
    hippo_state     (key, value)            'graph': the corpus state and settings they are in step with

The fact edges, passage edges, fact vectors (the stored proposition vectors) and passage vectors
(the stored chunk vectors) are read from the corpus's own tables and indexes when a question needs
them: they cost no embedding.

`refresh_indexes` (the end of an extraction, an import, a delete, a restore) brings the graph in
step; a question on a corpus made before the tables (or changed since without a refresh) does it on
first use, reporting progress. An update is incremental: only new phrases are embedded, gone
phrases and their edges are removed, and only the rows a change can touch are recomputed (a new
phrase's own row, a row whose edges named a gone phrase, a row with a new phrase at or above the
threshold), each from every phrase's vector, so the result is the full build's. The state lives in
its own table, not in `meta`, so a salvaged database (which copies `meta` but not these tables)
rebuilds the graph instead of trusting a state it lost. A read-only corpus computes a stale graph in
memory and keeps nothing.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core.phrases import (
    SYNONYM_THRESHOLD,
    SYNONYM_TOPK,
    PhraseGraph,
    merged_synonyms,
    rows_to_redo,
    synonym_rows,
    text_processing,
)
from engine.core.progress import ProgressCallback, no_progress
from engine.store.base import CorpusBase
from engine.store.errors import CorpusBusyError
from engine.store.util import _vec_blob

PHRASE_TABLES = """
CREATE TABLE IF NOT EXISTS hippo_phrases (pid INTEGER PRIMARY KEY, phrase TEXT NOT NULL UNIQUE, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS hippo_synonyms (
    a INTEGER NOT NULL, b INTEGER NOT NULL, score REAL NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS hippo_synonyms_b ON hippo_synonyms(b);
CREATE TABLE IF NOT EXISTS hippo_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
TABLE_NAMES = ("hippo_phrases", "hippo_synonyms", "hippo_state")
GRAPH_VERSION = 1
#: every subject and object a chunk still states (a triplet without a source is no phrase's)
_PARTS = "SELECT subject, object FROM triplets t WHERE EXISTS (SELECT 1 FROM triplet_sources s WHERE s.tid = t.tid)"
_EMBED_LABEL = "HippoRAG 2 graph: embedding phrases"
_EDGES_LABEL = "HippoRAG 2 graph: synonym edges"

#: Seconds a question waits for the corpus's write lock to store a graph it brought in step (another
#: process may hold it for a whole extraction run); past it the graph is kept in memory only.
QUESTION_WAIT = 2.0

#: one build at a time in a process (a second caller waits, then finds the graph in step)
_BUILD = threading.Lock()


class CorpusPhraseGraph(CorpusBase):
    """HippoRAG 2's phrase graph (see the module docstring)."""

    _phrase_cache: PhraseGraph | None = None
    _phrase_variant: PhraseGraph | None = None  # the last graph under other synonym settings

    if TYPE_CHECKING:  # defined by CorpusIndexes

        @property
        def embedder(self) -> Any: ...
        def _embed_pending_propositions(self, on_progress: ProgressCallback = ...) -> int: ...

    # --- reading ----------------------------------------------------------------------------------

    def phrase_graph(
        self,
        topk: int = SYNONYM_TOPK,
        threshold: float = SYNONYM_THRESHOLD,
        on_progress: ProgressCallback = no_progress,
    ) -> PhraseGraph:
        """The phrase nodes and synonym edges of the corpus as it is now: read from the tables when
        they are in step, else brought in step first (progress through `on_progress`). Other synonym
        settings than the authors' are computed from the stored phrase vectors and not kept."""
        if (topk, threshold) != (SYNONYM_TOPK, SYNONYM_THRESHOLD):
            return self._phrase_graph_with(topk, threshold, on_progress)
        return self._stored_phrase_graph(on_progress)

    def _stored_phrase_graph(
        self, on_progress: ProgressCallback, wait: float = QUESTION_WAIT, keep: bool = False
    ) -> PhraseGraph:
        """The graph in step with the corpus; `keep`: stored too, waiting up to `wait` s for the
        write lock (a refresh), else a graph only computed (the lock busy) serves questions."""
        for _ in range(3):  # another process may change it between our read and our write
            with self._lock:
                if not self.read_only:
                    try:
                        self._embed_pending_propositions()  # may draw a new prop_gen: stamp after it
                    except CorpusBusyError:  # another process writes: the graph needs no proposition vector
                        pass
                target = self._phrase_target()
                cached = self._phrase_cache
                if cached is not None and cached.stamp == target["stamp"] and (cached.how == "stored" or not keep):
                    return cached  # this corpus state's graph, read (or, for a question, computed) here
                if self._phrase_state() == target:
                    self._phrase_cache = self._read_phrase_graph(target["stamp"], "stored")
                    return self._phrase_cache
            if self.read_only:
                return self._computed_in_memory(on_progress)
            done = self._update_phrase_graph(on_progress, wait)
            if done is not None:
                return done
        return self._computed_in_memory(on_progress)

    def refresh_phrase_graph(self, on_progress: ProgressCallback = no_progress) -> PhraseGraph | None:
        """Bring the stored graph in step (the end of a write that changed triplets); None on a
        read-only corpus, which keeps nothing."""
        return None if self.read_only else self._stored_phrase_graph(on_progress, wait=30.0, keep=True)

    def _phrase_target(self) -> dict:
        return {
            "version": GRAPH_VERSION,
            "stamp": self.index_stamp("hippo", int(self._get_meta("prop_gen"))),
            "embedder": self.settings.embedder,
            "topk": SYNONYM_TOPK,
            "threshold": SYNONYM_THRESHOLD,
        }

    def _phrase_tables(self) -> bool:
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'hippo_%'")}
        return set(TABLE_NAMES) <= names

    def _phrase_state(self) -> dict | None:
        """What the tables are in step with, without their random revision (None: never built)."""
        if not self._phrase_tables():
            return None
        row = self._db.execute("SELECT value FROM hippo_state WHERE key='graph'").fetchone()
        if row is None:
            return None
        try:
            state = json.loads(row[0])
        except ValueError:
            return None
        if not isinstance(state, dict):
            return None
        state.pop("rev", None)
        return state

    def _phrase_rev(self) -> str:
        if not self._phrase_tables():
            return ""
        row = self._db.execute("SELECT value FROM hippo_state WHERE key='graph'").fetchone()
        try:
            return str(json.loads(row[0]).get("rev", "")) if row else ""
        except (ValueError, AttributeError):
            return ""

    def _read_phrase_graph(self, stamp: str, how: str, seconds: float = 0.0) -> PhraseGraph:
        phrases = dict(self._db.execute("SELECT pid, phrase FROM hippo_phrases").fetchall())
        edges = self._db.execute("SELECT a, b, score FROM hippo_synonyms ORDER BY a, score DESC, b").fetchall()
        synonyms = tuple((phrases[a], phrases[b], float(s)) for a, b, s in edges if a in phrases and b in phrases)
        return PhraseGraph(tuple(sorted(phrases.values())), synonyms, stamp=stamp, how=how, seconds=seconds)

    def _current_phrases(self) -> list[str]:
        """The phrase nodes the triplets make now, sorted (the authors' `np.unique` order)."""
        found: set[str] = set()
        for s, o in self._db.execute(_PARTS):
            found.add(text_processing(s))
            found.add(text_processing(o))
        return sorted(found)

    def _stored_vectors(self, phrases: list[str] | None = None) -> dict[str, np.ndarray]:
        if not self._phrase_tables():
            return {}
        if phrases is None:
            rows = self._db.execute("SELECT phrase, vec FROM hippo_phrases").fetchall()
        else:
            rows = self._in_query("SELECT phrase, vec FROM hippo_phrases WHERE phrase IN ({})", phrases)
        return {p: np.frombuffer(v, dtype=np.float32) for p, v in rows}

    # --- building ---------------------------------------------------------------------------------

    def _update_phrase_graph(self, on_progress: ProgressCallback, wait: float) -> PhraseGraph | None:
        """Bring the tables in step incrementally; None when another writer changed them meanwhile."""
        if not _BUILD.acquire(blocking=False):  # another thread builds (app start-up): say why we wait
            on_progress(0, 1, "HippoRAG 2 graph: waiting for the build in progress")
            _BUILD.acquire()
        try:
            return self._update_phrase_graph_locked(on_progress, wait)
        finally:
            _BUILD.release()

    def _update_phrase_graph_locked(self, on_progress: ProgressCallback, wait: float) -> PhraseGraph | None:
        t0 = time.perf_counter()
        with self._lock:
            target = self._phrase_target()
            state = self._phrase_state()
            if state == target:  # built by another thread while this one waited
                return self._read_phrase_graph(target["stamp"], "stored")
            rev = self._phrase_rev()
            current = self._current_phrases()
            # stored vectors are reusable under the same embedder; stored edges under the same rules too
            same_rules = state is not None and all(state.get(k) == target[k] for k in ("version", "embedder"))
            same_edges = same_rules and all((state or {}).get(k) == target[k] for k in ("topk", "threshold"))
            stored = self._stored_vectors() if same_rules else {}
            edges = self._read_phrase_graph(target["stamp"], "").synonyms if same_edges else ()
        vecs, new = self._phrase_vectors(current, stored, on_progress)
        rows = rows_to_redo(current, vecs, new, edges, target["threshold"]) if same_edges else range(len(current))
        found = dict(_synonyms_for(current, vecs, rows, target["topk"], target["threshold"], on_progress))
        try:
            with self._write(timeout=wait):
                if self._phrase_rev() != rev:
                    return None
                self._store_phrase_graph(current, vecs, new, found, rebuilt=not same_edges, vectors_kept=same_rules)
                self._db.execute(
                    "INSERT OR REPLACE INTO hippo_state(key, value) VALUES ('graph', ?)",
                    (json.dumps({**target, "rev": secrets.token_hex(8)}),),
                )
        except (CorpusBusyError, sqlite3.OperationalError):
            # another process writes (a long extraction holds the lock): answer from the graph just
            # computed, kept in this process's memory; the next refresh or question stores it
            graph = PhraseGraph(
                tuple(current),
                merged_synonyms(current, found, edges),
                stamp=target["stamp"],
                how=f"computed in memory (the corpus is busy being written): {len(new)} phrases embedded",
                seconds=time.perf_counter() - t0,
            )
            with self._lock:
                self._phrase_cache = graph
            return graph
        took = time.perf_counter() - t0
        how = f"updated: {len(new)} phrases embedded, {len(rows)} of {len(current)} rows of synonym edges"
        graph = self._read_phrase_graph(target["stamp"], how, took)
        with self._lock:  # what a later call reads: the stored graph
            self._phrase_cache = dataclasses.replace(graph, how="stored", seconds=0.0)
        return graph

    def _phrase_vectors(
        self, current: list[str], stored: dict[str, np.ndarray], on_progress: ProgressCallback
    ) -> tuple[np.ndarray, list[int]]:
        """Unit vectors of `current` (stored ones reused, the rest embedded) and the new rows."""
        dim = self.embedder.dim
        new = [i for i, p in enumerate(current) if p not in stored or stored[p].shape != (dim,)]
        vecs = np.zeros((len(current), dim), dtype=np.float32)
        for i, p in enumerate(current):
            if p in stored and stored[p].shape == (dim,):
                vecs[i] = stored[p]
        if new:
            on_progress(0, len(new), _EMBED_LABEL)
            vecs[new] = self._embed_batched([current[i] for i in new], on_progress, _EMBED_LABEL)
        return vecs, new

    def _store_phrase_graph(
        self,
        current: list[str],
        vecs: np.ndarray,
        new: list[int],
        found: dict[int, list[tuple[int, float]]],
        *,
        rebuilt: bool,
        vectors_kept: bool,
    ) -> None:
        """Inside a write: phrases in, gone phrases and their edges out, redone rows replaced."""
        for sql in PHRASE_TABLES.strip().split(";"):
            if sql.strip():
                self._db.execute(sql)
        if not vectors_kept:
            self._db.execute("DELETE FROM hippo_phrases")
        if rebuilt:
            self._db.execute("DELETE FROM hippo_synonyms")
        keep = set(current)
        gone = [pid for pid, p in self._db.execute("SELECT pid, phrase FROM hippo_phrases") if p not in keep]
        for i in range(0, len(gone), 500):
            part = gone[i : i + 500]
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM hippo_synonyms WHERE a IN ({marks}) OR b IN ({marks})", part + part)
            self._db.execute(f"DELETE FROM hippo_phrases WHERE pid IN ({marks})", part)
        self._db.executemany(
            "INSERT INTO hippo_phrases(phrase, vec) VALUES (?, ?) ON CONFLICT(phrase) DO UPDATE SET vec = excluded.vec",
            [(current[i], _vec_blob(vecs[i])) for i in new],
        )
        pid = dict(self._db.execute("SELECT phrase, pid FROM hippo_phrases").fetchall())
        redo = [pid[current[i]] for i in found]
        for i in range(0, len(redo), 500):
            part = redo[i : i + 500]
            self._db.execute(f"DELETE FROM hippo_synonyms WHERE a IN ({','.join('?' * len(part))})", part)
        self._db.executemany(
            "INSERT OR REPLACE INTO hippo_synonyms(a, b, score) VALUES (?, ?, ?)",
            [(pid[current[i]], pid[current[j]], s) for i, row in found.items() for j, s in row],
        )

    # --- not kept -----------------------------------------------------------------------------------

    def _computed_in_memory(self, on_progress: ProgressCallback) -> PhraseGraph:
        """The graph of a corpus that cannot keep it (read-only), from stored phrase vectors where
        they fit and the embedder for the rest; kept in this process's memory only."""
        t0 = time.perf_counter()
        with self._lock:
            stamp = self._phrase_target()["stamp"]
            cached = self._phrase_cache
            if cached is not None and cached.stamp == stamp:
                return cached
            current = self._current_phrases()
            stored = self._stored_vectors()
        vecs, new = self._phrase_vectors(current, stored, on_progress)
        rows = synonym_rows(current, vecs, SYNONYM_TOPK, SYNONYM_THRESHOLD) if current else iter(())
        synonyms = tuple((current[i], current[j], s) for i, edges in rows for j, s in edges)
        graph = PhraseGraph(
            tuple(current),
            synonyms,
            stamp=stamp,
            how=f"computed in memory (read-only corpus): {len(new)} phrases embedded",
            seconds=time.perf_counter() - t0,
        )
        with self._lock:
            self._phrase_cache = graph
        return graph

    def _phrase_graph_with(self, topk: int, threshold: float, on_progress: ProgressCallback) -> PhraseGraph:
        """Synonym edges under other settings than the stored ones: from the stored phrase vectors."""
        t0 = time.perf_counter()
        base = self._stored_phrase_graph(on_progress)
        last = self._phrase_variant
        if last is not None and (last.stamp, last.topk, last.threshold) == (base.stamp, topk, threshold):
            return last  # the same corpus state and settings as the last question's
        with self._lock:
            stored = self._stored_vectors(list(base.phrases))
        current = list(base.phrases)
        vecs, new = self._phrase_vectors(current, stored, on_progress)
        found = _synonyms_for(current, vecs, range(len(current)), topk, threshold, on_progress)
        synonyms = tuple((current[i], current[j], s) for i, edges in found for j, s in edges)
        how = f"computed for synonym settings {topk} / {threshold} from the stored phrase vectors"
        graph = PhraseGraph(base.phrases, synonyms, topk, threshold, base.stamp, how, time.perf_counter() - t0)
        self._phrase_variant = graph
        return graph

    # --- checking -----------------------------------------------------------------------------------

    def phrase_graph_problems(self) -> list[str]:
        """What `corpus check` reports about the stored graph: edges naming missing phrases, vectors
        of the wrong size. A graph behind the corpus is no problem (the next refresh or question
        brings it in step)."""
        with self._lock:
            if not self._phrase_tables():
                return []
            problems = []
            dangling = self._db.execute(
                "SELECT COUNT(*) FROM hippo_synonyms WHERE a NOT IN (SELECT pid FROM hippo_phrases) "
                "OR b NOT IN (SELECT pid FROM hippo_phrases)"
            ).fetchone()[0]
            if dangling:
                problems.append(f"HippoRAG 2 graph: {dangling} synonym edges name missing phrases")
            size = self.embedder.dim * 4
            bad = self._db.execute("SELECT COUNT(*) FROM hippo_phrases WHERE length(vec) != ?", (size,)).fetchone()[0]
            if bad:
                problems.append(f"HippoRAG 2 graph: {bad} phrase vectors are not {self.embedder.dim}-dimensional")
        return problems


def _synonyms_for(current, vecs, rows, topk, threshold, on_progress):
    rows = list(rows)
    if not rows:
        return iter(())

    def progress(done: int, total: int) -> None:
        on_progress(done, total, _EDGES_LABEL)

    on_progress(0, len(rows), _EDGES_LABEL)
    return synonym_rows(current, vecs, topk, threshold, rows, on_batch=progress)
