"""SIGKILL a writer at named points (engine/core/faults.py: before and after a commit of an add, a delete
or an extraction store, between an add's commit and its index sync, mid index-file write, before the
new index file is renamed into place); the corpus always reopens and passes the integrity check, and
no committed document is half there. The points are chosen by name, not by sleeping and hoping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from engine.store import Workspace
from engine.store.util import embedding_text
from engine.vectors.sentences import sentence_key, split_for_answers
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.store import Workspace
    from engine.core.types import Document, ExtractionStatus
    from tests._fake_embedder import HashEmbedder
    ws = Workspace({root!r}, embedder=HashEmbedder())
    c = ws.open("crash")
    print("ready", flush=True)
    for i in range(40):  # the named fault point kills it long before the end
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


# (point, n): killed the n-th time the writer reaches the point. Write transactions come in the
# order add, extraction stores x3, then (odd rounds) a delete: the counts reach each kind.
FAULTS = [
    ("write.before_commit", 1),
    ("write.before_commit", 3),
    ("write.before_commit", 9),
    ("write.after_commit", 1),
    ("write.after_commit", 4),
    ("write.after_commit", 9),
    ("add.before_index_sync", 1),
    ("add.before_index_sync", 3),
    ("index.mid_write", 1),
    ("index.mid_write", 4),
    ("index.before_rename", 2),
    ("index.before_rename", 5),
]


@pytest.mark.parametrize("point, nth", FAULTS, ids=[f"{p}@{n}" for p, n in FAULTS])
def test_sigkill_at_any_point_leaves_a_consistent_corpus(tmp_path, point, nth):
    root = tmp_path / "ws"
    Workspace(root, embedder=HashEmbedder()).create("crash")
    env = {**os.environ, "TRIPLET_LENS_FAULT": f"{point}@{nth}"}
    proc = subprocess.run(
        [sys.executable, "-c", WRITER.format(repo=str(REPO), root=str(root))],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])  # the point was reached
    corpus = Workspace(root, embedder=HashEmbedder()).open("crash")
    assert corpus.check() == []
    for info in corpus.documents():
        assert info.n_chunks > 0, f"{info.doc_id} was committed without its chunks"
    # a chunk's sentence vectors are committed with it (the offline answer step reads them)
    want = {sentence_key(s) for c in corpus.chunks() for s in split_for_answers(embedding_text(c))}
    have = {r[0] for r in corpus._db.execute("SELECT key FROM sentence_vecs")}
    assert want <= have, f"{len(want - have)} sentences of committed chunks have no vector"
    # the corpus keeps working after the crash
    from engine.core.types import Document

    assert corpus.add_documents([Document("after", "After", "Still writable after a crash.", "t")]).documents_added == 1
    assert corpus.check() == []
