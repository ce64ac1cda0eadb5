"""Writer locks of a corpus: one writer per process (a thread lock) and across processes (lock files).

Maintenance (drop, undo-drop, backup, snapshot, restore, repair) takes the same cross-process lock
(`folder_lock` for a folder, `_process_lock` for an open corpus), so it never copies, hashes or
moves a corpus while a writer is half-way through a change. A writer that waited for the lock
checks, once it holds it, that its corpus is still the one at its path (`_check_in_place`): after a
drop or a restore it stops with `CorpusGoneError` instead of writing into a folder that moved.
Index files are written under the lock too; a reader that cannot take it keeps a rebuilt index in
memory and leaves the file as it is.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from engine.core.faults import fault_point
from engine.store.base import CorpusBase
from engine.store.errors import CorpusBusyError, CorpusError, CorpusGoneError

#: called with a message when a lock is not free at once (the command line prints it)
WaitCallback = Callable[[str], None]


def file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of `path`, None when nothing is there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def acquire(fh, timeout: float, busy: str, on_wait: WaitCallback | None = None, waiting: str = "") -> None:
    """flock `fh` exclusively, polling up to `timeout` seconds (0: one try); `on_wait(waiting)` once
    when it is not free at once; CorpusBusyError(busy) when the time is up."""
    deadline = time.monotonic() + timeout
    told = False
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise CorpusBusyError(busy) from None
            if on_wait is not None and not told and waiting:
                on_wait(waiting)
                told = True
            time.sleep(0.05)


def _busy(name: str, what: str) -> str:
    return f"corpus {name!r} is busy: another process is writing to it; {what} when it finishes"


@contextmanager
def folder_lock(
    path: Path, timeout: float = 30.0, on_wait: WaitCallback | None = None, what: str = "change it", name: str = ""
) -> Iterator[None]:
    """The write lock of the corpus folder at `path`, for maintenance that works on the folder
    (drop, undo-drop, restore, repair): held while no writer is inside a change; refused with
    CorpusBusyError after `timeout` seconds. Refused with CorpusGoneError when the folder moved
    while this waited (another drop or undo-drop got there first)."""
    name = name or path.name
    try:
        fh = open(path / "write.lock", "a+")
    except (FileNotFoundError, NotADirectoryError):
        raise CorpusError(f"no corpus named {name!r} at {path.parent}") from None
    try:
        acquire(
            fh,
            timeout,
            _busy(name, f"nothing was changed; try to {what} again"),
            on_wait,
            f"corpus {name!r} is being written to by another process; waiting up to {timeout:.0f} s for it to "
            f"finish before trying to {what}",
        )
        if file_id(path / "write.lock") != (os.fstat(fh.fileno()).st_dev, os.fstat(fh.fileno()).st_ino):
            raise CorpusGoneError(
                f"corpus {name!r} was moved by another process meanwhile (a drop, undo-drop or restore); "
                f"nothing was changed: try to {what} again"
            )
        yield
    finally:
        fh.close()  # closing the file releases its lock


class CorpusLocks(CorpusBase):
    """Writer locks of a corpus: one writer per process (a thread lock) and across processes (lock files)."""

    #: told when a lock is not free at once (a workspace passes its own on; the command line prints it)
    on_wait: WaitCallback | None = None

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
            fault_point("write.before_commit")
            self._db.execute("COMMIT")
            fault_point("write.after_commit")

    @contextmanager
    def _process_lock(self, timeout: float) -> Iterator[None]:
        """The cross-process write lock (flock on `write.lock`), shared by this object's threads:
        taken when the first holder enters, released when the last one leaves."""
        with self._plock_guard:
            if self._plock_count == 0:
                self._plock_fh = self._flock("write.lock", timeout, _busy(self.name, "try again"))
                try:
                    self._check_in_place()
                except BaseException:
                    self._plock_fh.close()
                    self._plock_fh = None
                    raise
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

    def _check_in_place(self) -> None:
        """Raise CorpusGoneError unless the database at this corpus's path is the one it opened
        (a drop moved the folder away; a restore put another one there)."""
        now = file_id(self.path / "corpus.sqlite")
        if now != self._identity:
            raise CorpusGoneError.of(self.name, replaced=now is not None)

    def _flock(self, filename: str, timeout: float, busy: str):
        if self.read_only:
            raise CorpusError(f"corpus {self.name!r} is open read-only (read-only storage): it cannot be changed")
        try:
            fh = open(self.path / filename, "a+")
        except (FileNotFoundError, NotADirectoryError):
            raise CorpusGoneError.of(self.name, replaced=False) from None
        fault_point("lock.opened")
        try:
            acquire(fh, timeout, busy, self.on_wait, f"corpus {self.name!r} is busy; waiting up to {timeout:.0f} s")
        except BaseException:
            fh.close()
            raise
        return fh

    @contextmanager
    def _may_save(self, timeout: float = 0.0, strict: bool = False) -> Iterator[bool]:
        """True inside when this object may write its index files now: it holds the write lock (or
        got it within `timeout`). A reader finding another process writing, or its corpus dropped,
        gets False: it keeps what it rebuilt in memory and leaves the files to the writer. `strict`
        (a writer): a dropped corpus raises CorpusGoneError instead."""
        with ExitStack() as held:
            try:
                if self.read_only:
                    raise CorpusBusyError("read-only")
                held.enter_context(self._process_lock(timeout))
            except CorpusBusyError:
                yield False
                return
            except CorpusGoneError:
                if strict:
                    raise
                yield False
                return
            yield True

    @contextmanager
    def extracting(self, timeout: float = 5.0) -> Iterator[None]:
        """One extraction run at a time per corpus (a second one would pay for the same chunks).
        Only extractions take this lock: each chunk's result is stored in its own short write, so
        questions, checks and adds from other processes go on during a run of hours."""
        fh = self._flock(
            "extract.lock",
            timeout,
            f"corpus {self.name!r} is already being extracted by another "
            "run; wait for it (its progress is in corpus show)",
        )
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
