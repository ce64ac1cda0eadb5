"""Resolving an imported triplet's reference (chunk id, title, title + sentence, or passage text)
to the corpus's chunk ids, and linking each triplet to the window(s) that state it."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from engine.core.types import Chunk
from engine.triplets.files import TripletRow

_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
#: words in a row a window must share with a passage to count as part of it (a title or a
#: common phrase is shorter; a window boundary inside the passage still leaves longer runs)
_SHINGLE = 8


def _norm(s: str) -> str:
    return _WS.sub(" ", s).strip().casefold()


def _body(c: Chunk) -> str:
    """Chunk text without the sentence-mode title prefix."""
    prefix = f"{c.title}: "
    return c.text[len(prefix) :] if c.title and c.text.startswith(prefix) else c.text


class _Index:
    def __init__(self, chunks: Iterable[Chunk]):
        self.by_id: dict[str, Chunk] = {}
        self.by_title: dict[str, list[Chunk]] = defaultdict(list)
        self.by_body: dict[str, list[Chunk]] = defaultdict(list)
        for c in chunks:
            self.by_id[c.chunk_id] = c
            self.by_title[c.title].append(c)
            self.by_body[_norm(_body(c))].append(c)
        for t in list(self.by_title):  # KG2RAG writes "/" in titles as "_" in file names
            alt = t.replace("/", "_")
            if alt not in self.by_title:
                self.by_title[alt] = self.by_title[t]
        self._passages: dict[str, list[Chunk]] = {}
        self._shingles: dict[tuple[str, ...], list[Chunk]] | None = None
        self._folded: dict[str, str] = {}
        self._words: dict[str, set[str]] = {}

    def folded(self, c: Chunk) -> str:
        """Case-folded chunk text without the sentence-mode title prefix (which would make every
        chunk "mention" the title), computed once per chunk however many rows ask."""
        f = self._folded.get(c.chunk_id)
        if f is None:
            f = self._folded[c.chunk_id] = _body(c).casefold()
        return f

    def words(self, c: Chunk) -> set[str]:
        """The chunk's case-folded words (title prefix left out), computed once per chunk."""
        w = self._words.get(c.chunk_id)
        if w is None:
            w = self._words[c.chunk_id] = _words(self.folded(c))
        return w

    def titled(self, title: str) -> list[Chunk]:
        return self.by_title.get(title) or self.by_title.get(title.strip()) or []

    def passage(self, passage: str) -> list[Chunk]:
        if passage in self._passages:
            return self._passages[passage]
        title, _, body = passage.partition("\n") if "\n" in passage else ("", "", passage)
        nbody = _norm(body)
        found = [c for c in self.titled(title.strip()) if _overlaps(_norm(_body(c)), nbody)] if title else []
        if not found:
            found = self.by_body.get(nbody, []) or self.by_body.get(_norm(passage), [])
        if not found:  # a passage inside a longer document: the windows that share a run of its words
            found = self.windows_of(body or passage)
        self._passages[passage] = found
        return found

    def windows_of(self, text: str) -> list[Chunk]:
        """The windows sharing a run of `_SHINGLE` consecutive words with `text`, in reading order:
        the windows a passage was split into when its document joined several passages."""
        if self._shingles is None:
            self._shingles = defaultdict(list)
            for c in self.by_id.values():
                words = _WORD.findall(self.folded(c))
                for sh in {tuple(words[i : i + _SHINGLE]) for i in range(max(0, len(words) - _SHINGLE + 1))}:
                    self._shingles[sh].append(c)
        words = _WORD.findall(text.casefold())
        hit: dict[str, Chunk] = {}
        for i in range(max(0, len(words) - _SHINGLE + 1)):
            for c in self._shingles.get(tuple(words[i : i + _SHINGLE]), ()):
                hit.setdefault(c.chunk_id, c)
        return sorted(hit.values(), key=lambda c: (c.doc_id, c.position))


def _overlaps(chunk_body: str, passage_body: str) -> bool:
    return bool(chunk_body) and (chunk_body in passage_body or passage_body in chunk_body)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _mentioning(idx: _Index, cands: list[Chunk], s: str, o: str, p: str = "") -> list[Chunk]:
    """Among a document's windows, the one that states the triplet best: one naming both subject
    and object, else one naming the object (the new fact; the subject is often a pronoun there),
    else the subject; among those, the one holding most of the triplet's words (subject,
    predicate, object), then the first in reading order. One window per triplet and passage:
    linking it to every window naming one of its entities let one proposition fill all of T2RAG's
    chunk slots (11,808 links for 4,966 triplets on a long-document set), and to every window
    naming both still gave 1.26 windows per proposition there (1.04 on bench/long_documents.py's
    set, where this rule gives 1.00: docs/benchmarks.md)."""
    if len(cands) <= 1:
        return cands
    s, o = s.casefold(), o.casefold()
    want = _words(f"{s} {p} {o}")

    def key(pos_c: tuple[int, Chunk]) -> tuple[bool, bool, bool, float, int]:
        pos, c = pos_c
        text = idx.folded(c)
        has_s, has_o = s in text, o in text
        overlap = len(want & idx.words(c)) / len(want) if want else 0.0
        return (has_s and has_o, has_o, has_s, overlap, -pos)

    return [max(enumerate(cands), key=key)[1]]


def resolve_rows(rows: Iterable[TripletRow], chunks: Iterable[Chunk]) -> tuple[list[tuple[str, str, str, str]], int]:
    """Map rows onto chunk ids -> (`(chunk_id, s, p, o)` list without duplicates, unresolved count).

    chunk_id: that chunk if it exists. title: the window of the document(s) with that title that
    states the triplet best (`_mentioning`). title_sentence: the chunks whose sentence range covers
    the index. passage: the window of the matching chunks that states it best.
    """
    idx = _Index(chunks)
    out: list[tuple[str, str, str, str]] = []
    seen: set[tuple[str, str, str, str]] = set()
    unresolved = 0
    for r in rows:
        if r.ref_kind == "chunk_id":
            cands = [idx.by_id[r.chunk_ref]] if r.chunk_ref in idx.by_id else []
        elif r.ref_kind == "title_sentence" and r.sent_id is not None:
            cands = [c for c in idx.titled(r.chunk_ref) if c.sent_start <= r.sent_id < c.sent_end]
        elif r.ref_kind in ("title", "title_sentence"):
            cands = _mentioning(idx, idx.titled(r.chunk_ref), r.subject, r.object, r.predicate)
        elif r.ref_kind == "passage":
            cands = _mentioning(idx, idx.passage(r.chunk_ref), r.subject, r.object, r.predicate)
        else:
            cands = []
        if not cands:
            unresolved += 1
        for c in cands:
            key = (c.chunk_id, r.subject, r.predicate, r.object)
            if key not in seen:
                seen.add(key)
                out.append(key)
    return out, unresolved
