"""BM25 from the corpus's full-text table (engine/store/fts.py): kept in step with adds and deletes,
built for a corpus made before it (also after a kill midway), the budgeted search equal to the exact
one where its candidates reach, its bm25 formula equal to FTS5's, and its queries on indexes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from engine.core.types import Document
from engine.methods.baselines import BM25Index, StoredTextIndex, bm25_index
from engine.store import Workspace
from engine.store.fts import _AVERAGES, _HITS_IN, _TERM_BEST, TERM_DOCS, TEXT_SEARCH, query_terms
from tests._fake_embedder import HashEmbedder
from tests.conftest import REPO

TEXTS = {
    "river": ("Cheakamus River", "The Cheakamus River flows into a lake; the river flows south through a canyon."),
    "novel": ("A novel", "The author wrote the novel in the town where she was born."),
    "town": ("Whistler", "Whistler is a town; a river flows near the town."),
    "film": ("The film", "The film was shot near the lighthouse by a director born in Cork."),
    "born": ("Cork", "Cork is a city. Many people were born there, and some were born elsewhere."),
}
QUESTIONS = [
    "Which river flows through the town where the author of the novel was born?",
    "Who directed the film that was shot near the lighthouse?",
    "Cork city",
    "nothing matches zzz",
]


@pytest.fixture()
def corpus(tmp_path):
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("fts")
    c.add_documents([Document(k, t, x, f"{k}.txt") for k, (t, x) in TEXTS.items()])
    return c


def _ids(hits):
    return [cid.split("#")[0] for cid, _ in hits]


def test_search_follows_adds_and_deletes_and_the_corpus_uses_it(corpus):
    assert isinstance(bm25_index(corpus), StoredTextIndex)
    assert _ids(corpus.search_text("lighthouse director", 5)) == ["film"]
    assert corpus.search_text("nothing matches zzz", 5) == [] and corpus.search_text("the of", 5) == []
    corpus.add_documents([Document("light", "Lighthouse", "A lighthouse, a lighthouse keeper.", "l.txt")])
    assert _ids(corpus.search_text("lighthouse", 5)) == ["light", "film"]
    corpus.delete_document("film")
    assert _ids(corpus.search_text("lighthouse", 5)) == ["light"]
    assert corpus.check() == []  # includes FTS5's own check of the index against the chunks


def test_bm25_matches_the_formula_by_hand(corpus):
    import math

    hits = dict(corpus.search_text("lighthouse", 5))
    ((cid, score),) = hits.items()
    n = 5
    text = "The film The film was shot near the lighthouse by a director born in Cork."
    length, avg = (
        len(text.split()),
        sum(len(f"{t} {x}".replace(";", " ").replace(",", " ").replace(".", " ").split()) for t, x in TEXTS.values())
        / n,
    )
    idf = math.log((n - 1 + 0.5) / (1 + 0.5))
    assert score == pytest.approx(idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * length / avg)))


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_budgeted_search_ranks_what_its_rare_terms_find_as_the_exact_one_would(corpus, question):
    import re

    exact = corpus.search_text(question, 10, budget=10**9)
    # every term's candidate list, scored in Python: the same ranking and scores as FTS5's bm25()
    terms = query_terms(question)
    docs = corpus._term_docs(terms, 5, 10**9)
    terms = [t for t in terms if docs[t]]
    both = corpus._rescored(terms, terms, docs, 10)
    assert _ids(both) == _ids(exact) and [s for _, s in both] == pytest.approx([s for _, s in exact])
    # a budget of one posting: only the rarest term finds candidates; every term still scores them
    pruned = corpus.search_text(question, 10, budget=1)
    if not terms:
        assert pruned == []
        return
    rarest = min(terms, key=lambda t: (docs[t], t))
    words = {k: set(re.findall(r"[^\W_]+", f"{t} {x}".lower())) for k, (t, x) in TEXTS.items()}
    want = [(cid, sc) for cid, sc in exact if rarest in words[cid.split("#")[0]]]
    assert _ids(pruned) == _ids(want) and [s for _, s in pruned] == pytest.approx([s for _, s in want])
    assert len(want) < len(exact) or question == "Cork city"  # the budget did leave chunks out


def test_a_common_terms_document_count_is_estimated_from_a_sample(corpus, monkeypatch):
    import engine.store.fts as fts

    terms = query_terms(QUESTIONS[0])
    exact = corpus._term_docs(terms, 5, 10**9)
    monkeypatch.setattr(fts, "DF_SAMPLE", 2)  # this corpus counts as large: windows of one row
    est = corpus._term_docs(terms, 5, budget=0)  # every term counts as common: all estimated
    assert est != exact and set(est) == set(exact)
    assert corpus._term_docs(terms, 5, budget=10**9) == exact  # found rare: counted exactly


def test_hot_text_queries_use_their_indexes(corpus):
    plan = lambda sql, args: " | ".join(  # noqa: E731
        r[-1] for r in corpus._db.execute("EXPLAIN QUERY PLAN " + sql, args).fetchall()
    )
    assert "VIRTUAL TABLE INDEX 32:M" in plan(TEXT_SEARCH, ('"x"', 5))  # MATCH, ranked with LIMIT
    assert "SEARCH c USING INTEGER PRIMARY KEY" in plan(TEXT_SEARCH, ('"x"', 5))
    assert "VIRTUAL TABLE INDEX 32:M" in plan(_TERM_BEST, ('"x"', 5))
    assert "VIRTUAL TABLE INDEX 0:M2><" in plan(_HITS_IN, ('"x"', 1, 5))  # MATCH within a rowid range
    assert "VIRTUAL TABLE INDEX 1:" in plan(TERM_DOCS, ("x",))  # term equality, not every term
    assert "SEARCH chunks_fts_data USING INTEGER PRIMARY KEY" in plan(_AVERAGES, ())
    for sql in (
        "SELECT MIN(rid) FROM chunks",
        "SELECT MAX(rid) FROM chunks",
        "SELECT id, sz FROM chunks_fts_docsize WHERE id IN (?)",
    ):
        assert "SCAN" not in plan(sql, (1,) if "?" in sql else ()), sql


def _drop_fts(path):
    con = sqlite3.connect(path / "corpus.sqlite")
    for trig in ("chunks_fts_ins", "chunks_fts_del", "chunks_fts_upd"):
        con.execute(f"DROP TRIGGER {trig}")
    con.execute("DROP TABLE chunks_fts_vocab")
    con.execute("DROP TABLE chunks_fts")
    con.commit()
    con.close()


def test_an_older_corpus_gets_the_table_on_open_and_a_read_only_one_uses_memory(corpus):
    want = _ids(corpus.search_text(QUESTIONS[1], 3))
    path = corpus.path
    corpus.close()
    _drop_fts(path)
    ro = Workspace(path.parent, embedder=HashEmbedder(), read_only=True).open("fts")
    assert not ro.text_search_ready and isinstance(bm25_index(ro), BM25Index)  # nothing written
    ro.close()
    c = Workspace(path.parent, embedder=HashEmbedder()).open("fts")
    assert c.text_search_ready and _ids(c.search_text(QUESTIONS[1], 3)) == want
    assert c.check() == []


OPENER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.store import Workspace
    from tests._fake_embedder import HashEmbedder
    Workspace({root!r}, embedder=HashEmbedder()).open("fts")
""")


def test_a_kill_while_the_table_is_built_leaves_it_to_the_next_open(corpus):
    want = _ids(corpus.search_text(QUESTIONS[0], 3))
    path = corpus.path
    corpus.close()
    _drop_fts(path)
    env = {**os.environ, "TRIPLET_LENS_FAULT": "write.before_commit@1"}
    proc = subprocess.run(
        [sys.executable, "-c", OPENER.format(repo=str(REPO), root=str(path.parent))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]  # killed inside the build
    con = sqlite3.connect(path / "corpus.sqlite")
    assert not con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'chunks_fts%'").fetchall()  # rolled back
    con.close()
    c = Workspace(path.parent, embedder=HashEmbedder()).open("fts")
    assert _ids(c.search_text(QUESTIONS[0], 3)) == want and c.check() == []
