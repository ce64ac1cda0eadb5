"""Named fault points for crash tests: the places a kill is most likely to leave damage.

`fault_point("write.before_commit")` does nothing unless the environment names that point:
`TRIPLET_LENS_FAULT=write.before_commit@3` kills the process (SIGKILL, no cleanup, as a power cut or
the OOM killer would) the 3rd time it gets there. Tests start a writer with this variable and then
check that the corpus reopens intact (tests/reliability/test_crash_safety.py), instead of guessing with sleeps
where a kill lands. Unset, a point costs one dictionary lookup.

Points: `write.before_commit`, `write.after_commit` (every write transaction of a corpus),
`add.before_index_sync` (documents committed, the chunk index not yet in step),
`index.mid_write` (an index file's header written, its body not), `index.before_rename` (the new
index file complete, not yet in place); in an extraction run (tests/reliability/test_reliability_extraction_kill.py)
`extract.before_call` (a worker thread about to send a chunk), `extract.after_reply` (a reply arrived,
not yet stored), `extract.after_store` (a chunk's triplets committed), `pending.next_page` (about to
read the next page of pending chunks); in a batch-API extraction (tests/engine/triplets/test_batch_extraction.py)
`batch.after_upload` (a batch's input file uploaded and recorded, no batch created), `batch.after_create`
(the batch created at the provider, its id not stored yet), `batch.after_submit` (its id stored),
`batch.after_import` (one chunk of a finished batch stored, the rest of it not yet); in backups and
recovery (tests/reliability/test_backup_kills.py) `manifest.before_rename` (a snapshot manifest written to its
temporary file), `drop.after_manifest`
(the manifest in the corpus folder, not yet moved), `drop.after_move`, `backup.after_database`,
`backup.before_rename`, `restore.mid_copy` (after each file copied), `restore.after_aside` (the
corpus being replaced moved aside, the new one not in place), `restore.after_move` (in place, its
manifest not yet removed), `repair.after_unlink` (a damaged index removed, not rebuilt),
`repair.before_rename` (a salvaged corpus complete, not yet in place); `lock.opened` (a writer opened
the corpus's lock file and is about to take the lock).

`TRIPLET_LENS_PAUSE=point@n:DIR` pauses instead of killing: the n-th time the process gets to the
point it writes `DIR/reached` and waits (up to a minute) for `DIR/go` to exist. A test then runs
another operation against the paused one at exactly that step (tests/reliability/test_drop_against_writers.py
drops a corpus at each step of a writer).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ENV = "TRIPLET_LENS_FAULT"
PAUSE_ENV = "TRIPLET_LENS_PAUSE"
_reached: dict[str, int] = {}
_paused: dict[str, int] = {}


def fault_point(name: str) -> None:
    if os.environ.get(PAUSE_ENV):
        _pause(name, os.environ[PAUSE_ENV])
    spec = os.environ.get(ENV)
    if not spec:
        return
    want, _, nth = spec.partition("@")
    if want != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def _pause(name: str, spec: str) -> None:
    want, _, rest = spec.partition("@")
    nth, _, folder = rest.partition(":")
    if want != name:
        return
    _paused[name] = _paused.get(name, 0) + 1
    if _paused[name] != int(nth or 1):
        return
    (Path(folder) / "reached").write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while not (Path(folder) / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
