"""Gold evidence given as text: locate each quoted span in the corpus's chunks and score retrieval
against the chunks that hold it.

Many evaluation sets give the evidence as quoted spans (`evidence`: a string or a list of strings)
instead of paragraph ids. A span is located by a normalized text match that ignores case,
whitespace and punctuation (`normalize_span`) in each document's text, then mapped to the chunks
whose text covers it; a span that runs across a chunk boundary is covered by the chunks together.
A span the text match cannot find (an annotator's quote that differs from the corpus in more than
punctuation: a dropped or changed word, a paraphrased clause) is then located by content: in the
windows that hold at least `share` (default 0.8) of its content words, within its question's gold
documents when the question names them (else the best-scoring windows of the corpus); a span that
no single window holds but two neighbouring ones hold together is covered by the pair. A span found
neither way is reported (`EvidenceReport.message`), not silently dropped: it cannot be retrieved by
any method, so it is left out of the gold and counted instead. The report says how many spans
were located each way.

    report = locate_evidence(corpus, questions)
    score = evidence_score(report.by_qid[q.qid], retrieved_chunks, k=5)
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.core.types import Chunk, Question

_NON_WORD = re.compile(r"[\W_]+")
#: punctuation inside a word ("Kubrick's", "U.S.", "1,000", "well-known"): dropped, not a space, so
#: the span matches a copy of the text whose punctuation was stripped ("Kubricks", "US", "1000")
#: (apostrophes, periods, commas, hyphens; a dash or a bracket still separates words)
_INNER_PUNCT = re.compile(r"(?<=[^\W_])['\u2019.,-]+(?=[^\W_])")
#: at most this many places per span: a span found in hundreds of documents says nothing about
#: where the gold is, and must not make one question's gold the whole corpus
MAX_OCCURRENCES = 50
#: the share of a span's content words a window must hold to locate the span by content
DEFAULT_SHARE = 0.8
#: words that carry no content: a quote differing from the text in these still says the same thing
_FUNCTION_WORDS = frozenset(
    """a an the and or but nor of in on at to for from by with as into onto upon about over under
    is are was were be been being has have had do does did it its it's this that these those there
    which who whom whose what when where while than then so such not no also he she they them his
    her their him i we you our your one s""".split()
)


def normalize_span(text: str) -> str:
    """Lowercase words separated by single spaces: case, whitespace and punctuation do not count,
    whether the text keeps its punctuation or had it stripped (punctuation inside a word joins it:
    "Kubrick's" and "Kubricks" are one token; punctuation between words separates them)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = _INNER_PUNCT.sub("", text)
    return " ".join(_NON_WORD.sub(" ", text).split())


@dataclass(frozen=True)
class Occurrence:
    """One place a span was found: `[start, end)` in its document's normalized text, and the chunks
    overlapping it with their own ranges (a chunk not placed in the document gets `(0, 0)` and
    holds the whole span on its own)."""

    doc_id: str
    start: int
    end: int
    chunks: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class EvidenceGold:
    """The located evidence of one question: per span, the places it was found (none = unlocated)."""

    qid: str
    spans: tuple[str, ...]
    occurrences: tuple[tuple[Occurrence, ...], ...]

    @property
    def n_located(self) -> int:
        return sum(1 for o in self.occurrences if o)

    @property
    def n_unlocated(self) -> int:
        return len(self.spans) - self.n_located

    @property
    def gold_chunk_ids(self) -> set[str]:
        return {c for occ in self.occurrences for o in occ for c, _, _ in o.chunks}


@dataclass
class EvidenceReport:
    """What locating found, over the evaluated questions that carry evidence spans."""

    n_questions: int = 0
    n_spans: int = 0
    n_unlocated: int = 0
    unlocated_examples: list[tuple[str, str]] = field(default_factory=list)  # (qid, span), a few
    by_qid: dict[str, EvidenceGold] = field(default_factory=dict)
    n_by_content: int = 0
    """spans the text match missed and the content match located"""
    share: float = DEFAULT_SHARE

    @property
    def n_exact(self) -> int:
        return self.n_spans - self.n_unlocated - self.n_by_content

    def message(self) -> str:
        if not self.n_spans:
            return ""
        text = (
            f"evidence given as text: {self.n_spans - self.n_unlocated} of {self.n_spans} span(s) of "
            f"{self.n_questions} question(s) located in the chunks ({self.n_exact} by their text, "
            f"{self.n_by_content} by content: a window holding >= {self.share:.0%} of their content words)"
        )
        if self.n_unlocated:
            eg = "; ".join(f"{q}: {s[:80]!r}" for q, s in self.unlocated_examples[:3])
            text += (
                f"; {self.n_unlocated} could not be located (left out of the gold, no method can retrieve "
                f"them), e.g. {eg}"
            )
        return text


def _chunk_ranges(
    doc_norm: str, chunks: Sequence[Chunk]
) -> list[tuple[Chunk, str, int, int] | tuple[Chunk, str, None, None]]:
    """Each chunk's `[start, end)` in the normalized document text, found in reading order (windows
    overlap, so the next chunk may start inside the previous one)."""
    out: list[Any] = []
    cursor = 0
    for c in chunks:
        norm = normalize_span(c.text)
        title = normalize_span(c.title)
        if title and norm.startswith(title + " ") and not doc_norm.startswith(title + " "):
            norm = norm[len(title) + 1 :]  # sentence chunks carry "Title: " in front
        pos = doc_norm.find(norm, cursor) if norm else -1
        if pos < 0 and norm:
            pos = doc_norm.find(norm)
        if pos < 0:
            out.append((c, norm, None, None))
            continue
        out.append((c, norm, pos, pos + len(norm)))
        cursor = pos + 1
    return out


def content_words(text: str) -> list[str]:
    """The words of `text` that carry content (normalized as `normalize_span`, function words out)."""
    return [w for w in normalize_span(text).split() if w not in _FUNCTION_WORDS]


class _ContentLocator:
    """Locates a span by the share of its content words a window holds (see the module docstring)."""

    def __init__(self, corpus: Any, share: float):
        self.corpus, self.share = corpus, share
        self._windows: dict[str, list[tuple[str, frozenset[str]]]] = {}
        self._titles: dict[str, list[str]] | None = None

    def windows(self, doc_id: str) -> list[tuple[str, frozenset[str]]]:
        if doc_id not in self._windows:
            self._windows[doc_id] = [(c.chunk_id, frozenset(content_words(c.text))) for c in self.corpus.chunks(doc_id)]
        return self._windows[doc_id]

    def gold_docs(self, q: Question) -> list[str]:
        if q.supporting_docs:
            return list(q.supporting_docs)
        if q.supporting_titles:
            if self._titles is None:
                self._titles = {}
                for info in self.corpus.documents():
                    self._titles.setdefault(normalize_span(info.title), []).append(info.doc_id)
            return [d for t in q.supporting_titles for d in self._titles.get(normalize_span(t), [])]
        return []

    def locate(self, span: str, q: Question) -> tuple[Occurrence, ...]:
        words = set(content_words(span))
        if not words:
            return ()
        need = self.share * len(words)
        gold = self.gold_docs(q)
        docs = gold or [info.doc_id for info in self.corpus.documents()]
        found: list[tuple[float, Occurrence]] = []
        for doc_id in docs:
            wins = self.windows(doc_id)
            for i, (cid, held) in enumerate(wins):
                hit = len(words & held)
                if hit >= need:
                    found.append((hit / len(words), Occurrence(doc_id, 0, 1, ((cid, 0, 1),))))
                elif i + 1 < len(wins) and len(words & (held | wins[i + 1][1])) >= need:
                    # across a window boundary: the two windows together hold it (both are needed)
                    pair = len(words & (held | wins[i + 1][1])) / len(words)
                    found.append((pair - 1e-9, Occurrence(doc_id, 0, 2, ((cid, 0, 1), (wins[i + 1][0], 1, 2)))))
        if not gold and found:  # no gold document named: only the best-holding places, not every near miss
            best = max(f for f, _ in found)
            found = [(f, o) for f, o in found if f >= best - 1e-6]
        found.sort(key=lambda fo: -fo[0])
        return tuple(o for _, o in found[:MAX_OCCURRENCES])


class _TextLocator:
    """Locates a span by its normalized text, in one string holding every document's normalized
    text (each span is then one C-speed search), mapped to the chunks covering each place."""

    def __init__(self, corpus: Any):
        self.corpus = corpus
        self.doc_ids: list[str] = []
        self.starts: list[int] = []
        self.parts: list[str] = []
        pos = 0
        for info in corpus.documents():
            doc = corpus.get_document(info.doc_id)
            norm = f" {normalize_span(doc.text if doc else '')} "
            self.doc_ids.append(info.doc_id)
            self.starts.append(pos)
            self.parts.append(norm)
            pos += len(norm) + 1
        self.haystack = "\x00".join(self.parts)
        self.ranges: dict[str, list] = {}

    def locate(self, span: str) -> tuple[Occurrence, ...]:
        """Every place of the normalized `span` (whole words only), at most MAX_OCCURRENCES."""
        needle = f" {span} "
        found: list[Occurrence] = []
        at = self.haystack.find(needle) if span else -1
        while at >= 0 and len(found) < MAX_OCCURRENCES:
            i = bisect.bisect_right(self.starts, at) - 1
            doc_id, a = self.doc_ids[i], at - self.starts[i]  # offsets in " " + doc_norm + " "
            start, end = a, a + len(span)  # in doc_norm (the leading space shifts by one)
            if doc_id not in self.ranges:
                self.ranges[doc_id] = _chunk_ranges(self.parts[i][1:-1], self.corpus.chunks(doc_id))
            hit = []
            for c, norm, s, e in self.ranges[doc_id]:
                if s is None:
                    if span in norm:
                        hit.append((c.chunk_id, 0, 0))
                elif s < end and start < e:
                    hit.append((c.chunk_id, s, e))
            if hit:
                found.append(Occurrence(doc_id, start, end, tuple(hit)))
            at = self.haystack.find(needle, at + 1)
        return tuple(found)


def locate_evidence(corpus: Any, questions: Sequence[Question], share: float = DEFAULT_SHARE) -> EvidenceReport:
    """Locate every evidence span of `questions` in `corpus` (anything with `documents()`,
    `get_document(doc_id)` and `chunks(doc_id)`): by its text, else by content (`share` of its
    content words in a window; 0 or more than 1 turns the content match off)."""
    asked = [q for q in questions if q.evidence]
    report = EvidenceReport(n_questions=len(asked), share=share)
    if not asked:
        return report
    by_text = _TextLocator(corpus)
    by_content = _ContentLocator(corpus, share) if 0 < share <= 1 else None
    cache: dict[str, tuple[Occurrence, ...]] = {}
    for q in asked:
        spans = tuple(q.evidence)
        occ = []
        for span in spans:
            norm = normalize_span(span)
            if norm not in cache:
                cache[norm] = by_text.locate(norm)
            found = cache[norm]
            if not found and by_content is not None:
                found = by_content.locate(span, q)  # per question: its gold documents bound the search
                report.n_by_content += bool(found)
            occ.append(found)
            report.n_spans += 1
            if not found:
                report.n_unlocated += 1
                if len(report.unlocated_examples) < 10:
                    report.unlocated_examples.append((q.qid, span))
        report.by_qid[q.qid] = EvidenceGold(q.qid, spans, tuple(occ))
    return report


def _covered(occ: Occurrence, got: set[str]) -> bool:
    pieces = sorted((s, e) for c, s, e in occ.chunks if c in got)
    if any(s == e == 0 for s, e in pieces):
        return True  # a chunk holding the whole span on its own
    reach = occ.start
    for s, e in pieces:
        if s > reach + 1:  # adjacent chunks are one separating space apart
            break
        reach = max(reach, e)
    return reach >= occ.end


def span_recall(gold: EvidenceGold, chunk_ids: Sequence[str]) -> tuple[int, int]:
    """(located spans covered by these chunks, located spans)."""
    got = set(chunk_ids)
    located = [occ for occ in gold.occurrences if occ]
    return sum(1 for occ in located if any(_covered(o, got) for o in occ)), len(located)
