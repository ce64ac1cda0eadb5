"""`corpus drop` against a writer in another process, at each step of the writer (issue 38, break 2).

Before, drop took no write lock: with `corpus add` inside its transaction, drop hashed the live
`-wal` and index files and moved the folder, `add` reported success, and the corpus was in
neither `corpus list` nor `undo-drop` ("corpus.sqlite-wal does not match its checksum"); a drop
during `extract` ended it with a raw `[Errno 2] .../write.lock`.

Here the writer (add, delete-doc, triplet import, extract) is paused at a named step
(`TRIPLET_LENS_PAUSE`, engine/core/faults.py) while the test drops the corpus, then let go. At
every step: the drop either goes through at once (no change is half done) or says it waits and
goes through once the writer's change is complete; the writer finishes, or stops with the message
that its corpus was dropped (never an OSError); and `undo-drop` brings the corpus back, checked
clean, holding the writer's change or not holding it, never a part of it and never lost.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from engine.core.faults import ENV as FAULT_ENV
from engine.core.faults import PAUSE_ENV
from engine.core.types import Document
from engine.integrity import inspect
from engine.integrity.backup import undo_drop
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.core.types import Document
    from engine.llm.base import LLMCall
    from engine.store import CorpusError, Workspace
    from engine.triplets.extraction import run_extraction
    from tests._fake_embedder import HashEmbedder

    class Paid:  # a provider's reasoner: billed calls, and a response cache keeping the replies
        name = "test/model"
        calls_per_extract = 1
        class llm:
            cache = object()
        def extract(self, title, text):
            return [(title, "is described in", "chunk text")], LLMCall("extract", "test/model", cost=0.001)

    c = Workspace({root!r}, embedder=HashEmbedder()).open("demo")
    op = {op!r}
    try:
        if op == "add":
            text = " ".join(f"Sentence {{j}} about topic{{j}} in the new document." for j in range(600))
            c.add_documents([Document("new", "New", text, "new.txt")])
        elif op == "delete-doc":
            c.delete_document("d1")
        elif op == "import":
            c.import_triplets([(ch.chunk_id, "Imported", "links", ch.title) for ch in c.chunks()])
        elif op == "extract":
            s = run_extraction(c, Paid(), concurrency=1)
            if s.stopped:
                raise CorpusError(s.stopped)
        print("finished", flush=True)
    except CorpusError as exc:
        print("stopped:", exc, flush=True)
""")

#: (writer, the step it is paused at). `lock.opened@1`: the lock file opened, the lock not taken;
#: `write.before_commit` / `write.after_commit`: inside a transaction (the lock held);
#: `add.before_index_sync`, `extract.after_store`: between two of the writer's locked steps;
#: `index.before_rename`: an index file written under the lock; `backup.before_rename`: the
#: snapshot delete-doc takes first, under the lock.
STEPS = [
    ("add", "lock.opened@1"),
    ("add", "write.before_commit@1"),
    ("add", "write.after_commit@1"),
    ("add", "add.before_index_sync@1"),
    ("add", "index.before_rename@1"),
    ("delete-doc", "lock.opened@1"),
    ("delete-doc", "backup.before_rename@1"),
    ("delete-doc", "write.before_commit@1"),
    ("delete-doc", "index.before_rename@1"),
    ("import", "write.before_commit@1"),
    ("import", "index.before_rename@1"),
    ("extract", "lock.opened@3"),  # 1: the extraction lock, 2: the first store's write lock
    ("extract", "write.before_commit@2"),
    ("extract", "extract.after_store@2"),
]


def _fill(root: Path) -> None:
    c = Workspace(root, embedder=HashEmbedder()).create("demo")
    text = "Place{i} is a town where person{i} was born. " * 6
    c.add_documents([Document(f"d{i}", f"Place{i}", text.format(i=i), "p.txt") for i in range(6)])
    c.close()


def _state(corpus) -> tuple:
    """What the writers change: the documents, the triplets, the extracted chunks."""
    c = corpus.counts()
    return tuple(sorted(d.doc_id for d in corpus.documents())), c.triplets, c.extracted


def _without_and_with(root: Path, op: str) -> tuple[tuple, tuple]:
    """The corpus's state before the writer, and after it ran alone (on a copy)."""
    import shutil

    before = _state(Workspace(root, embedder=HashEmbedder()).open("demo"))
    alone = root.parent / "alone"
    shutil.copytree(root, alone)
    proc = _start(alone, op, "")
    out, err = proc.communicate(timeout=120)
    assert "finished" in out, err
    return before, _state(Workspace(alone, embedder=HashEmbedder()).open("demo"))


def _start(root: Path, op: str, pause: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, PAUSE_ENV)}
    if pause:
        env[PAUSE_ENV] = pause
    script = WRITER.format(repo=str(REPO), root=str(root), op=op)
    return subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"the writer never reached its step ({path})"
        time.sleep(0.02)


@pytest.mark.parametrize("op, step", STEPS, ids=[f"{o}-{s}" for o, s in STEPS])
def test_a_drop_at_any_step_of_a_writer_keeps_the_corpus_findable_whole(tmp_path, op, step):
    root = tmp_path / "ws"
    _fill(root)
    without, with_change = _without_and_with(root, op)
    assert without != with_change
    flags = tmp_path / "flags"
    flags.mkdir()
    writer = _start(root, op, f"{step}:{flags}")
    _wait_for(flags / "reached", writer)

    ws = Workspace(root, embedder=HashEmbedder())
    waited = threading.Event()
    ws.on_wait = lambda message: waited.set()
    failure: list[BaseException] = []

    def drop() -> None:
        try:
            ws.drop("demo")
        except BaseException as exc:  # noqa: BLE001 - reported below
            failure.append(exc)

    dropper = threading.Thread(target=drop)
    dropper.start()
    deadline = time.monotonic() + 30
    while dropper.is_alive() and not waited.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    (flags / "go").write_text("")
    out, err = writer.communicate(timeout=120)
    dropper.join(timeout=60)
    assert not dropper.is_alive() and not failure, failure

    assert "Errno" not in out + err and "Traceback" not in err, (out, err)
    assert out.startswith("finished") or "was dropped by another process" in out, (out, err)
    if op == "extract" and "stopped" in out:  # the replies received and not stored are accounted for
        assert "kept in the LLM response cache" in out, out

    again = Workspace(root, embedder=HashEmbedder())
    assert "demo" not in again.list()
    corpus = undo_drop(again, "demo")  # found, and it passes the manifest's checksums
    assert inspect(corpus.path) == [] and corpus.check() == []
    state = _state(corpus)
    if out.startswith("finished"):
        assert state == with_change
    elif op != "extract":  # a single change: whole or not at all
        assert state in (without, with_change), (state, without, with_change)
    else:  # an extraction stores chunk by chunk: the chunks stored before the drop, no other change
        assert state[0] == without[0] and without[2] < state[2] < with_change[2], (state, without, with_change)


def test_a_restore_over_a_writer_waits_for_its_change_and_the_writer_stops(tmp_path):
    """`restore --force` replaces a corpus whose writer is inside a transaction: it waits, snapshots
    the corpus with the writer's change, puts the snapshot in place; the writer finishes first or is
    told its corpus was replaced, and writes nothing into the one moved aside."""
    from engine.integrity.backup import find_snapshot, list_snapshots, restore, snapshot_before

    root = tmp_path / "ws"
    _fill(root)
    ws = Workspace(root, embedder=HashEmbedder())
    before = _state(ws.open("demo"))
    snap = snapshot_before(ws, ws.open("demo"), "manual")
    flags = tmp_path / "flags"
    flags.mkdir()
    writer = _start(root, "add", f"write.before_commit@1:{flags}")
    _wait_for(flags / "reached", writer)
    waited = threading.Event()
    ws.on_wait = lambda message: waited.set()
    restorer = threading.Thread(target=lambda: restore(ws, find_snapshot(ws, "demo", snap.id), force=True))
    restorer.start()
    deadline = time.monotonic() + 30
    while not waited.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert waited.is_set() and restorer.is_alive()  # the writer is inside its change: restore waits
    (flags / "go").write_text("")
    out, err = writer.communicate(timeout=120)
    restorer.join(timeout=60)
    # done before the restore got the lock, or stopped at its next step (its index sync)
    assert out.startswith("finished") or "was replaced by another process" in out, (out, err)
    assert "Errno" not in out + err, (out, err)
    assert _state(Workspace(root, embedder=HashEmbedder()).open("demo")) == before
    (taken,) = [s for s in list_snapshots(ws, "demo") if s.reason == "before-restore"]
    kept = restore(ws, taken, "kept")  # the replaced corpus, with the writer's document
    assert "new" in _state(kept)[0] and inspect(kept.path) == []
