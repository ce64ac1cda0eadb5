"""Chunking per SPEC section 0: paragraph windows or title-prefixed sentences.

Two granularities share one code path so a corpus is chunked once for both methods:

* `paragraph`: each blank-line paragraph becomes one chunk when it fits in `max_words`; a longer
  one is cut into windows of whole sentences with `overlap_sentences` repeated, so a fact that
  spans a cut is still whole in one window. Tiny paragraphs (headings, one-liners) are folded
  into their neighbour, because a chunk that only says "Introduction" retrieves nothing useful.
* `sentence`: one chunk per sentence, text `"{title}: {sentence}"` (KG2RAG's HotpotQA setup,
  where a bare sentence such as "He was born in 1942." would lose its subject).

Dataset documents (HotpotQA, 2Wiki, the HippoRAG corpus dict) arrive already split; their
sentence indices are the gold `sent_id`s, so they are used as they are, never re-split.
Chunk ids are `f"{doc_id}#{position}"`: the same document chunked with the same settings always
gives the same ids, which is what lets stored triplets and traces point at chunks.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from engine.core.types import Chunk, Document


@dataclass(frozen=True)
class ChunkingSettings:
    mode: str = "paragraph"
    """`paragraph`: windows of whole sentences up to `max_words`; `sentence`: one chunk per
    sentence, prefixed with the document title (KG2RAG's HotpotQA setup)."""

    max_words: int = 200
    """Upper bound of a paragraph window, in words (about 100-300 tokens)."""

    overlap_sentences: int = 1
    """Sentences repeated at the start of the next window so a fact is not cut in two."""


#: A paragraph shorter than this share of `max_words` is merged with the next one.
_MERGE_BELOW = 0.25
#: A "word" longer than this many characters per allowed word is cut by characters, so a
#: 10 MB line with no spaces still becomes chunks of bounded size.
_CHARS_PER_WORD = 30


def make_doc_id(title: str, text: str) -> str:
    """Stable 16-hex id of a document: same title and text, same id (dedupe across files)."""
    h = hashlib.sha1()
    h.update(title.encode("utf-8", "surrogatepass"))
    h.update(b"\x00")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


# --- sentence splitting ---------------------------------------------------------------------

# Never end a sentence: titles and words that are followed by a name.
_STRONG_ABBR = frozenset(
    "mr mrs ms dr prof st mt ft gen col lt sgt capt cpt cmdr adm maj rev hon gov sen rep pres "
    "supt messrs mme mlle vs cf al approx ca viz e.g i.e esp".split()
)
# End a sentence only when a number does not follow ("No. 5", "Jan. 12", "p. 4").
_NUMERIC_ABBR = frozenset(
    "c no nos vol vols p pp fig figs art ch sec op ed eds jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# Often end a sentence too ("... Apple Inc. The company"): split only before a typical opener.
_WEAK_ABBR = frozenset("inc ltd co corp etc bros dept est assn univ jr sr".split())
_STARTERS = frozenset(
    "the a an he she it they we i you this that these those there his her its their our my in on "
    "at after before during when while however but and as for from by with since although "
    "also then thus later today".split()
)
# Punctuation after a word character, closing quotes or brackets, then whitespace. A dot
# standing alone between spaces (". . .") is never a sentence end, and not even a candidate;
# the lookbehind and possessive runs keep a 10 MB line of "!!!!" or "...." linear.
_BOUNDARY = re.compile(r"(?<=[^\s.!?\u2026])([.!?\u2026]++)([\"'\u201d\u2019)\]]*+)\s+")
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]?$")  # U.S / e.g / Ph.D (final dot already cut)
_ALNUM = re.compile(r"\w")


def _is_boundary(text: str, m: re.Match) -> bool:
    nxt_pos = m.end()
    if nxt_pos >= len(text):
        return True
    nxt = text[nxt_pos]
    if nxt.islower():
        return False  # "Yahoo! is", "approx. five"
    if "." not in m.group(1):
        return True  # ! ? and ellipsis before a capital
    start = m.start()
    # the token before the dot: after the last whitespace of any kind (no-break and thin spaces
    # too: "12:25\u00a0a.m.") within 40 characters
    words = text[max(0, start - 40) : start].split()
    token = (words[-1] if words else "").lstrip("\"'(\u201c\u2018[").rstrip(".")
    if not token:
        return True
    low = token.lower()
    if low in _STRONG_ABBR:
        return False
    if len(token) == 1 and token.isalpha() and token.isupper():
        return False  # an initial: "J. R. R. Tolkien"
    if low in _NUMERIC_ABBR:
        return not nxt.isdigit()
    if low in _WEAK_ABBR or _DOTTED.match(token):
        word = text[nxt_pos : nxt_pos + 20].split(None, 1)
        return bool(word) and word[0].strip("\"'\u201c(").lower() in _STARTERS
    return True


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences with a regex and a few abbreviation rules.

    Handles titles ("Dr. Smith"), initials ("J. K. Rowling"), dotted acronyms ("the U.S. Army";
    split only before a typical opener such as "The"), decimals ("3.14" has no space after the
    dot) and "No. 5". Runs in one linear pass. A piece with no letter or digit (". . .", "!!")
    is glued to the sentence before it, so junk cannot turn into millions of one-dot sentences.
    """
    spans: list[list[int]] = []  # [start, end] of each sentence; gluing only moves an end
    pos = 0
    no_alnum_to = 0  # text[pos:no_alnum_to] is known to hold no letter or digit (keeps it linear)
    for m in _BOUNDARY.finditer(text):
        if not _is_boundary(text, m):
            continue
        end = m.end(2)
        if not _ALNUM.search(text, max(pos, no_alnum_to), end):
            if spans:
                spans[-1][1] = end
                pos = m.end()
            else:
                no_alnum_to = end  # leading junk: keep `pos`, so it joins the first real sentence
            continue
        spans.append([pos, end])
        pos = m.end()
    if text[pos:].strip():
        if spans and not _ALNUM.search(text, pos):
            spans[-1][1] = len(text)
        else:
            spans.append([pos, len(text)])
    return [text[a:b].strip() for a, b in spans]


def _count_words(s: str) -> int:
    if len(s) < 20_000:
        return len(s.split())
    return sum(1 for _ in re.finditer(r"\S+", s))  # no list of a million words in memory


def _weight(s: str) -> int:
    """Words, but a run of characters with no spaces counts as one word per `_CHARS_PER_WORD`."""
    return max(_count_words(s), len(s) // _CHARS_PER_WORD)


def _split_long(sentence: str, max_words: int) -> list[str]:
    """Cut a sentence longer than `max_words` (or absurdly long in characters) into pieces."""
    max_chars = max_words * _CHARS_PER_WORD
    if len(sentence) <= max_chars and _count_words(sentence) <= max_words:
        return [sentence]
    pieces: list[str] = []
    start = count = last_end = 0
    for w in re.finditer(r"\S+", sentence):
        if count and (count >= max_words or w.end() - start > max_chars):
            pieces.append(sentence[start:last_end])
            start, count = w.start(), 0
        count += 1
        last_end = w.end()
    pieces.append(sentence[start:last_end])
    out: list[str] = []
    for p in pieces:  # a single giant "word": cut by characters
        out.extend(p[i : i + max_chars].strip() for i in range(0, len(p), max_chars))
    return [p for p in out if p]


# --- documents -> sentences -> chunks -------------------------------------------------------

_PARA_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")  # any run of blank lines is one break


def _paragraphs(doc: Document) -> list[list[tuple[int, str]]]:
    """Paragraphs as lists of `(sentence index in the document, sentence)`."""
    if doc.sentences is not None:
        return [[(i, s.strip()) for i, s in enumerate(doc.sentences)]]
    paras: list[list[tuple[int, str]]] = []
    idx = 0
    for para in _PARA_BREAK.split(doc.text):
        sents = split_sentences(para)
        if sents:
            paras.append([(idx + j, s) for j, s in enumerate(sents)])
            idx += len(sents)
    return paras


def document_sentences(doc: Document) -> list[str]:
    """The document's sentences in the numbering that `Chunk.sent_start/sent_end` use."""
    return [s for para in _paragraphs(doc) for _, s in para]


@dataclass
class _Unit:
    sent: int  # index of the document sentence this text belongs to
    text: str
    words: int
    para: int


def _windows(units: list[_Unit], max_words: int, overlap: int) -> list[list[_Unit]]:
    out: list[list[_Unit]] = []
    start, n = 0, len(units)
    while start < n:
        end, words = start, 0
        while end < n and (end == start or words + units[end].words <= max_words):
            words += units[end].words
            end += 1
        out.append(units[start:end])
        if end >= n:
            break
        # Repeat as many of the last `overlap` units as still leave room for a new one, so a
        # window never consists of repeated text only.
        k = min(overlap, end - start - 1)
        while k > 0 and sum(u.words for u in units[end - k : end]) + units[end].words > max_words:
            k -= 1
        start = end - k
    return out


def _join(units: list[_Unit]) -> str:
    parts: list[str] = []
    for i, u in enumerate(units):
        if i:
            parts.append("\n" if u.para != units[i - 1].para else " ")
        parts.append(u.text)
    return "".join(parts)


def chunk_document(doc: Document, settings: ChunkingSettings = ChunkingSettings()) -> list[Chunk]:
    """Chunks of one document, ids `f"{doc_id}#{position}"`, in reading order."""
    max_words = max(1, settings.max_words)
    paras = _paragraphs(doc)
    chunks: list[Chunk] = []

    def emit(text: str, s0: int, s1: int) -> None:
        pos = len(chunks)
        chunks.append(Chunk(f"{doc.doc_id}#{pos}", doc.doc_id, pos, doc.title, text, s0, s1))

    if settings.mode == "sentence":
        prefix = f"{doc.title}: " if doc.title.strip() else ""
        for para in paras:
            for i, s in para:
                for piece in _split_long(s, max_words) if s else []:
                    emit(prefix + piece, i, i + 1)
        return chunks
    if settings.mode != "paragraph":
        raise ValueError(f"unknown chunking mode {settings.mode!r}; use 'paragraph' or 'sentence'")

    groups: list[list[_Unit]] = []
    group_words: list[int] = []
    for p, para in enumerate(paras):
        units = [_Unit(i, piece, _weight(piece), p) for i, s in para if s for piece in _split_long(s, max_words)]
        if not units:
            continue
        words = sum(u.words for u in units)
        if groups and group_words[-1] < max_words * _MERGE_BELOW and group_words[-1] + words <= max_words:
            groups[-1].extend(units)
            group_words[-1] += words
        else:
            groups.append(units)
            group_words.append(words)
    whole_dataset_para = doc.sentences is not None and len(groups) == 1
    for group, words in zip(groups, group_words):
        if words <= max_words:
            text = doc.text.strip() if whole_dataset_para and doc.text.strip() else _join(group)
            emit(text, group[0].sent, group[-1].sent + 1)
            continue
        for win in _windows(group, max_words, max(0, settings.overlap_sentences)):
            emit(_join(win), win[0].sent, win[-1].sent + 1)
    return chunks


def chunk_documents(docs: list[Document], settings: ChunkingSettings = ChunkingSettings()) -> list[Chunk]:
    return [c for d in docs for c in chunk_document(d, settings)]
