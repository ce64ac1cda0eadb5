"""SIGKILL a writer at many points (mid add, mid delete, mid index save, mid extraction store);
the corpus always reopens and passes the integrity check, and no committed document is half there."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from engine.store import Workspace
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

WRITER = textwrap.dedent("""
    import sys, itertools
    sys.path.insert(0, {repo!r})
    from engine.store import Workspace
    from engine.types import Document, ExtractionStatus
    from tests._fake_embedder import HashEmbedder
    ws = Workspace({root!r}, embedder=HashEmbedder())
    c = ws.open("crash")
    print("ready", flush=True)
    for i in itertools.count():
        # a big document makes the index save long enough to be hit mid-write
        text = " ".join(f"Sentence {{i}} number {{j}} about topic{{j % 50}}." for j in range(120))
        doc = Document(f"doc-{{i}}", f"Doc {{i}}", text, "gen")
        c.add_documents([doc])
        for ch in c.chunks(doc.doc_id)[:3]:
            c.store_extraction(ch.chunk_id, [(f"Doc {{i}}", "mentions", f"topic{{i % 7}}"), ("Doc", "has", f"n{{i}}")],
                               ExtractionStatus(ch.chunk_id, "done", "test"))
        c.refresh_indexes()
        if i % 2:
            c.delete_document(f"doc-{{i - 1}}")
""")


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.3, 0.45, 0.6, 0.8, 1.1, 1.5])
def test_sigkill_at_any_point_leaves_a_consistent_corpus(tmp_path, delay):
    root = tmp_path / "ws"
    Workspace(root, embedder=HashEmbedder()).create("crash")
    proc = subprocess.Popen([sys.executable, "-c", WRITER.format(repo=str(REPO), root=str(root))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    corpus = Workspace(root, embedder=HashEmbedder()).open("crash")
    assert corpus.check() == []
    for info in corpus.documents():
        assert info.n_chunks > 0, f"{info.doc_id} was committed without its chunks"
    # the corpus keeps working after the crash
    from engine.types import Document

    assert corpus.add_documents([Document("after", "After", "Still writable after a crash.", "t")]).documents_added == 1
    assert corpus.check() == []
