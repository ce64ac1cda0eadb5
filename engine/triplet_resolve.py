"""Resolving an imported triplet's reference (chunk id, title, title + sentence, or passage text)
to the corpus's chunk ids, and linking each triplet to the window(s) that state it."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from engine.triplet_io import TripletRow
from engine.types import Chunk

_WS = re.compile(r"\s+")


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
        self._folded: dict[str, str] = {}

    def folded(self, c: Chunk) -> str:
        """Case-folded chunk text without the sentence-mode title prefix (which would make every
        chunk "mention" the title), computed once per chunk however many rows ask."""
        f = self._folded.get(c.chunk_id)
        if f is None:
            f = self._folded[c.chunk_id] = _body(c).casefold()
        return f

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
        self._passages[passage] = found
        return found


def _overlaps(chunk_body: str, passage_body: str) -> bool:
    return bool(chunk_body) and (chunk_body in passage_body or passage_body in chunk_body)


def _mentioning(idx: _Index, cands: list[Chunk], s: str, o: str) -> list[Chunk]:
    """Among a document's windows, the one(s) that state the triplet: those naming both subject
    and object; else the first naming the object (the new fact; the subject is often a pronoun
    there), else the first naming the subject, else the first window. Linking a triplet to every
    window that names one of its entities let one proposition fill all of T2RAG's chunk slots
    (11,808 links for 4,966 triplets on a long-document set)."""
    if len(cands) <= 1:
        return cands
    s, o = s.casefold(), o.casefold()
    both = [c for c in cands if s in idx.folded(c) and o in idx.folded(c)]
    if both:
        return both
    for part in (o, s):
        hit = next((c for c in cands if part in idx.folded(c)), None)
        if hit is not None:
            return [hit]
    return cands[:1]


def resolve_rows(rows: Iterable[TripletRow], chunks: Iterable[Chunk]) -> tuple[list[tuple[str, str, str, str]], int]:
    """Map rows onto chunk ids -> (`(chunk_id, s, p, o)` list without duplicates, unresolved count).

    chunk_id: that chunk if it exists. title: the window(s) of the document(s) with that title that
    state the triplet (`_mentioning`). title_sentence: the chunks whose sentence range covers the
    index. passage: the window(s) of the matching chunks that state it.
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
            cands = _mentioning(idx, idx.titled(r.chunk_ref), r.subject, r.object)
        elif r.ref_kind == "passage":
            cands = _mentioning(idx, idx.passage(r.chunk_ref), r.subject, r.object)
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
