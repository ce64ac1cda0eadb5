"""After an add or a delete, an index that was in step with the previous state is brought forward
by ids (added rows appended, deleted rows removed), not rebuilt from every stored vector; an HNSW
index, which cannot drop nodes, is rebuilt after a delete. The store's result equals a rebuild."""
from __future__ import annotations

import numpy as np
import pytest

from engine.store import CorpusSettings, Workspace
from engine.types import Document
from tests._fake_embedder import HashEmbedder


def _triplets(c, docs):
    chunk = dict(c._db.execute("SELECT doc_id, chunk_id FROM chunks").fetchall())
    return [(chunk[d.doc_id], f"Person{d.doc_id}", "born in", d.title) for d in docs]


def _docs(n, start=0):
    return [Document(f"d{i:03d}", f"Town{i}", f"Town{i} lies on river R{i}. Person{i} was born in Town{i}.", "t")
            for i in range(start, start + n)]


@pytest.mark.parametrize("kind", ["flat", "ivf", "hnsw"])
def test_add_and_delete_bring_the_index_forward_by_ids(tmp_path, monkeypatch, kind):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0)
    c = ws.create("inc", CorpusSettings(index_kind=kind))
    c.add_documents(_docs(60))
    c.import_triplets(_triplets(c, _docs(60)))
    c.refresh_indexes()
    rebuilt = []
    original = type(c)._rebuild_index

    def counting(self, which, dim, *a, **k):
        rebuilt.append(which)
        return original(self, which, dim, *a, **k)

    monkeypatch.setattr(type(c), "_rebuild_index", counting)
    c.add_documents(_docs(5, start=100))
    c.import_triplets(_triplets(c, _docs(5, start=100)))
    c.refresh_indexes()
    assert rebuilt == []  # appended, both indexes
    assert len(c._index("chunks")) == 65 and len(c._index("propositions")) == 65
    hit = c.search_chunks(c.embed(["Town103 lies on river R103. Person103 was born in Town103."]), 1)[0][0][0]
    assert c._db.execute("SELECT doc_id FROM chunks WHERE chunk_id=?", (hit,)).fetchone()[0] == "d103"
    c.delete_document("d010")
    assert rebuilt == ([] if kind != "hnsw" else ["chunks", "propositions"])
    ids = set(c._index("chunks").ids().tolist())
    want = {r[0] for r in c._db.execute("SELECT rid FROM chunks")}
    assert ids == want and len(ids) == 64
    assert c.check() == []
    # the same answers as an index rebuilt from the stored vectors
    q = c.embed(["Person42 was born in Town42", "river R104"])
    fresh = original(c, "chunks", c.embedder.dim)
    assert np.array_equal(fresh.search(q, 3)[1], c._index("chunks").search(q, 3)[1])
    c.close()
