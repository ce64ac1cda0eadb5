"""Corpora page maintenance against other processes: Check integrity finishes what a killed writer
left behind, as `corpus check` does; a drop waits for a writer and says so (issue 38, docs/reliability.md
rows 14 and 17)."""

import fcntl
import threading
from pathlib import Path

from tests._apptest import ok as _ok


def _opened(at, app_workspace, embedder, name: str) -> Path:
    """A one-document corpus `name`, made outside the app and picked on its page; its folder."""
    from engine.core.types import Document
    from engine.store import Workspace

    corpus = Workspace(app_workspace, embedder=embedder).create(name)
    corpus.add_documents([Document("d1", "Lisbon", "Lisbon is the capital of Portugal.", "a.txt")])
    path = corpus.path
    corpus.close()
    at.session_state["corpus"] = name
    at.run()
    _ok(at)
    return path


def test_check_integrity_finishes_an_index_write_a_killed_writer_left_behind(app, app_workspace, embedder):
    """The Check button does what `corpus check` does: an index file a writer killed after its commit
    left missing is brought in step from the stored vectors (and said so), not reported as damage."""
    at = app
    path = _opened(at, app_workspace, embedder, "half-written")
    for t in threading.enumerate():  # the app's warm-up opens the corpus in the background: let it finish
        if t.name.startswith("warmup-"):
            t.join(timeout=60)
    (path / "chunks.index").unlink()  # another process's writer died between its commit and its index file
    at.button(key="check_go").click().run()
    _ok(at)
    assert any("chunks.index was missing" in c.value for c in at.caption), [c.value for c in at.caption]
    assert any("ok" in m.value for m in at.success) and not at.warning
    assert (path / "chunks.index").exists()


def test_drop_waits_for_a_writer_and_says_so(app, app_workspace, embedder, monkeypatch):
    """A drop while another process writes the corpus waits for its write lock, and the page says it
    waits (a toast), then drops once the writer is done."""
    from engine.store import lock

    at = app
    path = _opened(at, app_workspace, embedder, "busy")
    writer = open(path / "write.lock", "a+")  # another process's writer, inside its transaction
    fcntl.flock(writer, fcntl.LOCK_EX)

    real = lock.acquire

    def acquire(fh, timeout, busy, on_wait=None, waiting=""):
        def told(message: str) -> None:  # the drop says it waits: the writer commits a moment later
            if on_wait is not None:
                on_wait(message)
            threading.Timer(0.5, writer.close).start()

        return real(fh, timeout, busy, told if "drop it" in waiting else on_wait, waiting)

    monkeypatch.setattr(lock, "acquire", acquire)
    at.text_input(key="drop_confirm").input("busy").run()
    at.button(key="drop_go").click().run(timeout=60)
    _ok(at)
    assert any("being written to by another process; waiting" in t.value for t in at.toast), [t.value for t in at.toast]
    assert not path.exists()
