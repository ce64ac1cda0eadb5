"""A Workspace: one folder per corpus; create (atomically), open, drop."""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engine.core.chunking import ChunkingSettings
from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Document, IngestReport, Question
from engine.store.corpus import Corpus
from engine.store.errors import _NAME_RE, CorpusError, validate_name
from engine.store.lock import WaitCallback, folder_lock
from engine.store.settings import CorpusSettings


class Workspace:
    """A folder of corpora. `embedder`, when given, serves every corpus whose spec it matches
    (tests and the app pass the one already loaded instead of loading it again).

    Destructive changes keep a way back: `drop` moves the corpus into `.snapshots/<name>/` and a
    document delete snapshots the corpus first; the newest `keep_snapshots` automatic snapshots of
    each corpus are kept (engine.integrity.backup restores them)."""

    def __init__(
        self,
        root: Path | str,
        embedder=None,
        keep_snapshots: int = 3,
        read_only: bool = False,
        backup_max_bytes: int | None = None,
    ):
        self.root = Path(root).expanduser().resolve()
        self.read_only = read_only
        #: the most bytes one file of a backup may hold when restored; None = the limit its manifest's
        #: counts allow (engine/integrity/bounds.py)
        self.backup_max_bytes = backup_max_bytes
        #: seconds drop, undo-drop, restore and repair wait for a writer to finish its change
        self.lock_timeout = 30.0
        #: told (a message) when a corpus is busy and an operation waits for it; the CLI prints it
        self.on_wait: WaitCallback | None = None
        if not read_only:
            self.root.mkdir(parents=True, exist_ok=True)
        elif not self.root.is_dir():
            raise CorpusError(f"workspace {self.root} does not exist (it is opened read-only)")
        self._embedder = embedder
        self.keep_snapshots = keep_snapshots
        self.recovered: list[str] = []
        """what the sweep of interrupted operations did when this workspace opened (`corpus check` says it)"""
        if not read_only:
            from engine.integrity.interrupted import sweep

            try:
                self.recovered = sweep(self.root)
            except OSError as exc:  # e.g. storage that turned read-only: the corpora still serve
                self.recovered = [f"the sweep of interrupted operations stopped: {exc}"]

    def path_of(self, name: str) -> Path:
        path = (self.root / validate_name(name)).resolve()
        if path.parent != self.root:
            raise CorpusError(f"corpus name {name!r} escapes the workspace")
        return path

    def exists(self, name: str) -> bool:
        return (self.path_of(name) / "corpus.sqlite").is_file()

    def list(self) -> list[str]:
        return sorted(
            p.name
            for p in self.root.iterdir()
            if p.is_dir() and (p / "corpus.sqlite").is_file() and _NAME_RE.match(p.name)
        )

    def create(
        self,
        name: str,
        settings: CorpusSettings | None = None,
        *,
        chunking: ChunkingSettings | None = None,
        embedder: str | None = None,
    ) -> Corpus:
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

    def create_from(
        self,
        name: str,
        documents: Sequence[Document],
        questions: Sequence[Question] = (),
        settings: CorpusSettings | None = None,
        *,
        on_progress: ProgressCallback = no_progress,
    ) -> tuple[Corpus, IngestReport, int]:
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

    def open(self, name: str) -> Corpus:
        path = self.path_of(name)
        if not (path / "corpus.sqlite").is_file():
            known = ", ".join(self.list()) or "none yet"
            raise CorpusError(f"no corpus named {name!r} in {self.root} (corpora: {known})")
        return self._wire(Corpus(path, embedder=self._embedder, read_only=self.read_only))

    def _refuse_if_read_only(self, what: str) -> None:
        if self.read_only:
            raise CorpusError(f"the workspace {self.root} is read-only: cannot {what}")

    def _wire(self, corpus: Corpus) -> Corpus:
        corpus.on_wait = self.on_wait
        if self.keep_snapshots > 0 and not corpus.read_only:
            from engine.integrity.backup import snapshot_before

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
            from engine.integrity.backup import keep_dropped

            keep_dropped(self, name)
            return
        # rename first so a crash mid-delete never leaves a half corpus that still opens; under the
        # write lock, so a writer half-way through a change finishes it first (and then stops)
        trash = path.with_name(f".{path.name}.dropped.{os.getpid()}")
        with folder_lock(path, self.lock_timeout, self.on_wait, "drop it"):
            os.replace(path, trash)
        shutil.rmtree(trash, ignore_errors=True)


def open_workspace(app, embedder=None) -> Workspace:
    """The workspace an `AppSettings` describes (its folder, read-only and snapshot settings, backup
    cap): the one way the CLI and the app open theirs."""
    return Workspace(
        app.workspace,
        embedder=embedder,
        keep_snapshots=app.keep_snapshots,
        read_only=app.read_only,
        backup_max_bytes=int(app.backup_max_mb * 1024 * 1024) or None,
    )
