"""Full-text search over the chunks: an SQLite FTS5 table ranked by `bm25()`, kept on disk.

`chunks_fts` indexes each chunk's title and text (external content: the text is stored once, in
`chunks`); three triggers keep it in step with every insert, update and delete of a chunk, inside
the same transaction, so no write path can forget it and a kill leaves both or neither. A corpus
made before the table existed gets it on its first writable open: the table, the triggers and the
index rebuilt from `chunks` in one transaction (a kill midway rolls it all back; the next open
builds it again). The table's presence is the mark that it is built (a salvaged corpus copies rows
but not this table, so it is built again there too).

A question's cost is one FTS5 query: the postings of its terms, not a pass over every chunk, and no
index held in memory (the in-memory BM25 over every chunk took minutes and gigabytes at 1M chunks).
The question is tokenized like the in-memory BM25 did (lower case, words of two or more letters or
digits, English stop words removed) and its terms are OR-ed.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from engine.store.base import CorpusBase

_FTS_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5("
    "title, text, content='chunks', content_rowid='rid', tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER IF NOT EXISTS chunks_fts_ins AFTER INSERT ON chunks BEGIN "
    "INSERT INTO chunks_fts(rowid, title, text) VALUES (new.rid, new.title, new.text); END",
    "CREATE TRIGGER IF NOT EXISTS chunks_fts_del AFTER DELETE ON chunks BEGIN "
    "INSERT INTO chunks_fts(chunks_fts, rowid, title, text) VALUES ('delete', old.rid, old.title, old.text); END",
    "CREATE TRIGGER IF NOT EXISTS chunks_fts_upd AFTER UPDATE OF title, text ON chunks BEGIN "
    "INSERT INTO chunks_fts(chunks_fts, rowid, title, text) VALUES ('delete', old.rid, old.title, old.text); "
    "INSERT INTO chunks_fts(rowid, title, text) VALUES (new.rid, new.title, new.text); END",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_vocab USING fts5vocab(chunks_fts, row)",
)
_FTS_OBJECTS = {"chunks_fts", "chunks_fts_ins", "chunks_fts_del", "chunks_fts_upd", "chunks_fts_vocab"}

#: The best `k` chunks for an OR of terms, by bm25() (negative: lower is better).
TEXT_SEARCH = (
    "SELECT c.chunk_id, f.rank FROM (SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? "
    "ORDER BY rank LIMIT ?) f JOIN chunks c ON c.rid = f.rowid ORDER BY f.rank, c.rid"
)
#: A term's document count: fts5vocab reads the term's doclist length (a C loop, no ranking).
TERM_DOCS = "SELECT doc FROM chunks_fts_vocab WHERE term=?"

#: One term's best chunks by its own BM25 (rowids).
_TERM_BEST = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?"
_AVERAGES = "SELECT block FROM chunks_fts_data WHERE id=1"  # FTS5's row count and tokens per column
_HITS_IN = "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?"
#: Rows sampled to estimate a common term's document count in a larger corpus.
DF_SAMPLE = 20000

#: Postings a question may rank in SQL: past this, its most common terms only rescore the
#: candidates its rarer terms found (see `CorpusText.search_text`).
POSTINGS_BUDGET = 5000
K1, B = 1.2, 0.75  # FTS5's bm25() constants

_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits


def query_terms(text: str) -> list[str]:
    """The question's search terms: lower-cased runs of letters and digits (as FTS5's unicode61
    tokenizer cuts them) of two or more characters, English stop words removed (bm25s's list, as
    the in-memory BM25 used), each once."""
    from bm25s.stopwords import STOPWORDS_EN

    stop = set(STOPWORDS_EN)
    return list(dict.fromkeys(w for w in _TOKEN.findall(text.lower()) if len(w) > 1 and w not in stop))


def match_expression(terms: list[str]) -> str:
    """An FTS5 query OR-ing the terms, each quoted (so no term is read as an operator)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def bm25_scores(
    texts: dict[int, str],
    lengths: dict[int, int],
    terms: list[str],
    docs: dict[str, int],
    n_rows: int,
    avg_len: float,
) -> dict[int, float]:
    """FTS5's bm25() over `texts` (rowid -> title and text, of `lengths` tokens), computed here: the
    sum over terms of idf * tf (k1 + 1) / (tf + k1 (1 - b + b len / avg_len)), idf = ln((N - df +
    0.5) / (df + 0.5)) (1e-6 when not positive), with the corpus's N, document counts and mean length."""
    idf = {t: math.log((n_rows - docs[t] + 0.5) / (docs[t] + 0.5)) for t in terms}
    idf = {t: v if v > 0 else 1e-6 for t, v in idf.items()}
    # the query's words where they stand as whole tokens (not inside a longer run of letters)
    find = re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(t) for t in terms) + r")(?![^\W_])")
    out = {}
    for key, text in texts.items():
        norm = K1 * (1 - B + B * lengths[key] / max(avg_len, 1e-9))
        tf = Counter(find.findall(text.lower()))
        out[key] = sum(idf[t] * n * (K1 + 1) / (n + norm) for t, n in tf.items())
    return out


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (what FTS5's averages record holds: rows, then tokens per column)."""
    out, i = [], 0
    while i < len(blob):
        v = 0
        for _ in range(8):
            c = blob[i]
            i += 1
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        else:
            v = (v << 8) | blob[i]
            i += 1
        out.append(v)
    return out


class CorpusText(CorpusBase):
    """Full-text search over the chunks (see the module docstring)."""

    def _fts_present(self) -> bool:
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'chunks_fts%'")}
        return _FTS_OBJECTS <= names

    def _build_fts(self) -> None:
        """Create the full-text table and its triggers and index every chunk, in one transaction."""
        with self._write():
            if not self._fts_present():
                for sql in _FTS_DDL:
                    self._db.execute(sql)
                self._db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
        self._fts_ready = True

    @property
    def text_search_ready(self) -> bool:
        """Whether `search_text` can answer (a read-only corpus from before the table cannot)."""
        return self._fts_ready

    def search_text(self, query: str, k: int, budget: int = POSTINGS_BUDGET) -> list[tuple[str, float]]:
        """The `k` chunks best matching `query` by BM25 (FTS5's bm25(), positive here), best first.
        Chunks sharing no term with the query are not returned.

        When the question's terms have at most `budget` postings in all (every corpus of a few
        thousand chunks), one FTS5 query ranks them all: exact. Past it, the cost would grow with
        the corpus (a common word's postings do), so the rarest terms that fit the budget (at
        least one) find the candidates, `max(3k, 60)` per term by its own BM25, and every term
        rescores those with the same formula (`bm25_scores`): a chunk matching only common words
        can be missed (as a max-score search with a cut would miss it), at a per-question cost
        bounded by the budget. A common term's document count is estimated from a sample of the
        corpus (`_term_docs`), so it is not read whole either."""
        terms = query_terms(query)
        if not terms or k <= 0 or not self._fts_ready:
            return []
        with self._lock:
            n_rows, *per_column = _varints(self._db.execute(_AVERAGES).fetchone()[0])
            docs = self._term_docs(terms, n_rows, budget)
            terms = [t for t in terms if docs[t]]
            if sum(docs[t] for t in terms) <= budget:
                rows = self._db.execute(TEXT_SEARCH, (match_expression(terms), k)).fetchall() if terms else []
                return [(cid, -float(rank)) for cid, rank in rows]
            rare: list[str] = []
            for t in sorted(terms, key=lambda t: (docs[t], t)):
                if rare and sum(docs[x] for x in rare) + docs[t] > budget:
                    break
                rare.append(t)
            return self._rescored(terms, rare, docs, k)

    def _rescored(self, terms: list[str], rare: list[str], docs: dict[str, int], k: int) -> list[tuple[str, float]]:
        """Candidates: each rare term's best `max(3k, 60)` chunks by its own BM25 (so a chunk
        strong on one rare word and on common ones is among them); then every term scores them."""
        per_term = max(3 * k, 60)
        found: dict[int, int] = {}  # rowid -> first seen (ties keep this order)
        for t in rare:
            for (rid,) in self._db.execute(_TERM_BEST, (match_expression([t]), per_term)):
                found.setdefault(rid, len(found))
        n_rows, *per_column = _varints(self._db.execute(_AVERAGES).fetchone()[0])
        rows = self._in_query("SELECT rid, chunk_id, title, text FROM chunks WHERE rid IN ({})", sorted(found))
        sizes = dict(self._in_query("SELECT id, sz FROM chunks_fts_docsize WHERE id IN ({})", sorted(found)))
        lengths = {r[0]: sum(_varints(sizes[r[0]])) for r in rows if r[0] in sizes}
        scores = bm25_scores(
            {r[0]: f"{r[2]} {r[3]}" for r in rows if r[0] in lengths},
            lengths,
            terms,
            docs,
            n_rows,
            sum(per_column) / max(n_rows, 1),
        )
        ids = {r[0]: r[1] for r in rows}
        best = sorted(scores.items(), key=lambda p: (-p[1], found[p[0]]))[:k]
        return [(ids[rid], sc) for rid, sc in best]

    def _docs_of(self, term: str) -> int:
        row = self._db.execute(TERM_DOCS, (term,)).fetchone()
        return int(row[0]) if row else 0

    def _term_docs(self, terms: list[str], n_rows: int, budget: int) -> dict[str, int]:
        """Each term's document count: exact (fts5vocab reads its doclist's length) in a corpus of
        up to `DF_SAMPLE` chunks and for a term found rare; a common term's is estimated from its
        count in two fixed windows of about `DF_SAMPLE / 2` rows each (rowid ranges at a quarter and
        three quarters of the table), so the cost stays bounded as its doclist grows."""
        if n_rows <= DF_SAMPLE:
            return {t: self._docs_of(t) for t in terms}
        # two queries: each is one b-tree descent (MIN and MAX in one query scan the table)
        lo = self._db.execute("SELECT MIN(rid) FROM chunks").fetchone()[0]
        hi = self._db.execute("SELECT MAX(rid) FROM chunks").fetchone()[0]
        span = max(1, (hi - lo + 1) * DF_SAMPLE // (2 * n_rows))
        windows = [(lo + (hi - lo) * q // 4, lo + (hi - lo) * q // 4 + span - 1) for q in (1, 3)]
        out = {}
        for t in terms:
            hits = sum(self._db.execute(_HITS_IN, (match_expression([t]), *w)).fetchone()[0] for w in windows)
            # rows are spread evenly over the rowids (deletes leave holes alike): scale by the span
            est = hits * (hi - lo + 1) // (2 * span)
            out[t] = est if est > budget else self._docs_of(t)
        return out

    def text_index_problems(self) -> list[str]:
        """FTS5's own check of the full-text index against the chunks (for `corpus check`)."""
        if not self._fts_ready or self.read_only:
            # FTS5's integrity-check is an INSERT command: a read-only connection refuses it, so a
            # read-only open cannot run it (a writable `corpus check` does)
            return []
        try:
            with self._lock:
                self._db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:  # sqlite3.DatabaseError: the index disagrees with the chunks
            return [f"full-text index: {exc} (`corpus check --repair` or a rebuild fixes it)"]
        return []
