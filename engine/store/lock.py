"""Writer locks of a corpus: one writer per process (a thread lock) and across processes (lock files)."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager

from engine.core.faults import fault_point
from engine.store.base import CorpusBase
from engine.store.errors import CorpusBusyError, CorpusError


class CorpusLocks(CorpusBase):
    """Writer locks of a corpus: one writer per process (a thread lock) and across processes (lock files)."""

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
                self._plock_fh = self._flock(
                    "write.lock",
                    timeout,
                    f"corpus {self.name!r} is busy: another process is writing to it; try again when it finishes",
                )
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
