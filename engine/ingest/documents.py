"""Readers for single documents: plain text, Markdown, HTML and PDF.

Each reader takes the file's base name and its bytes and returns one `Document`, or raises
`IngestError` with a message a user can act on. Markup is stripped lightly: the goal is the
prose an extractor should read, not a faithful rendering.
"""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Any

from engine.core.chunking import make_doc_id
from engine.core.types import Document
from engine.ingest.decode import IngestError, clean_text, decode_text


def stem(name: str) -> str:
    return PurePosixPath(name).stem or name


def _make(name: str, title: str, text: str, kind: str) -> Document:
    text = clean_text(text).strip()
    title = clean_text(title).strip() or stem(name)
    if not text:
        raise IngestError("has no readable text")
    return Document(make_doc_id(title, text), title, text, source=name, kind=kind)


# --- plain text and Markdown ----------------------------------------------------------------


def read_text(name: str, data: bytes) -> Document:
    return _make(name, stem(name), decode_text(data), "text")


_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*)$")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\[\]\n]+\]:\s+\S")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
# Inline patterns. Each character class stops at the next marker of its own kind, so a scan
# never runs past it: a 10 MB line full of "[" or "*" is still read in linear time.
_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\([^()\n]*\)")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\([^()\n]*\)")
_REF_LINK = re.compile(r"\[([^\[\]\n]+)\]\[[^\[\]\n]*\]")
# A tag: name, then attributes where a quoted value may hold `>` (`title="a>b"` must not end the
# tag early); bounded, so a line full of `<a` without a closing `>` is scanned in linear time.
_HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:[^<>\"'\n]|\"[^\"\n]*\"|'[^'\n]*'){0,400})>")
#: HTML elements: their tags are markup and go, the text between them stays. Anything else in
#: angle brackets (`<Zorblat Museum>`, `<https://example.org>`) is prose and keeps its words:
#: deleting it made "The curator of <Zorblat Museum> is ..." lose its subject.
_HTML_ELEMENTS = frozenset(
    "a abbr address article aside audio b bdi bdo big blockquote body br caption center cite code col colgroup "
    "dd del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hr html i img ins "
    "kbd label li main mark nav ol p picture pre q rp rt ruby s samp section small source span strike strong "
    "sub summary sup table tbody td tfoot th thead time tr tt u ul var video wbr".split()
)
_CODE = re.compile(r"`+([^`\n]*)`+")
_EMPHASIS = (
    re.compile(r"(\*{1,3})(?=\S)([^*\n]+)(?<=\S)\1"),
    re.compile(r"(_{2,3})(?=\S)([^_\n]+)(?<=\S)\1"),
    re.compile(r"(~~)(?=\S)([^~\n]+)(?<=\S)\1"),
)
_MAX_INLINE = 20_000  # longer "lines" are not prose; leave them as they are


def _inline(line: str) -> str:
    if len(line) > _MAX_INLINE:
        return line
    if "[" in line:  # the `in` checks skip patterns that cannot match: most lines have no markup
        for pat in (_IMAGE, _LINK, _REF_LINK):
            line = pat.sub(r"\1", line)
    if "<" in line:  # inline HTML: the tags go, their text stays; a block tag still separates words
        line = _HTML_TAG.sub(_tag_text, line)
        line = re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", line)
    if "`" in line:
        line = _CODE.sub(r"\1", line)
    for marker, pat in zip("*_~", _EMPHASIS):
        if marker in line:
            line = pat.sub(r"\2", pat.sub(r"\2", line))  # twice: "**bold *and italic* text**"
    if "|" in line:
        s = line.strip()
        if s.startswith("|") or s.endswith("|"):  # a table row reads as one line
            line = " | ".join(cell.strip() for cell in s.strip("|").split("|"))
    return line


_BLOCK_TAG = re.compile(
    r"</?(?:p|div|br|hr|li|ul|ol|tr|td|th|table|summary|details|section|article|header|"
    r"footer|blockquote|h[1-6]|dd|dt|dl|figure|figcaption)\b",
    re.I,
)
#: Raw HTML whose content is never text: scripts, styles and comments (dropped whole).
_RAW_OPEN = ("<script", "<style", "<!--")
_RAW_CLOSE = {"<script": "</script", "<style": "</style", "<!--": "-->"}


def _tag_text(m: re.Match) -> str:
    if m.group(2).lower() in _HTML_ELEMENTS:
        return " " if _BLOCK_TAG.match(m.group(0)) else ""
    if m.group(1):
        return ""  # a closing tag of no HTML element (`</Zorblat>`) holds no words
    return m.group(0)[1:-1]  # not HTML: angle brackets around words; keep the words


def _find_open(low: str, opener: str, start: int) -> int:
    """Next `opener` at or after `start` that is a whole tag name (`<script`, not `<scripts`)."""
    i = low.find(opener, start)
    while (
        i >= 0
        and opener != "<!--"
        and i + len(opener) < len(low)
        and (low[i + len(opener)].isalnum() or low[i + len(opener)] == "-")
    ):
        i = low.find(opener, i + 1)
    return i


def drop_raw_html(md: str) -> str:
    """Remove `<script>`/`<style>` elements and HTML comments with their content, in one forward
    pass: the next position of each opener and closer is remembered and searched again only once
    passed, so the work is linear whatever the input. An opening tag never closed loses only
    itself, not the rest of the file."""
    low = md.lower()
    if not any(o in low for o in _RAW_OPEN):
        return md
    nxt = {o: _find_open(low, o, 0) for o in _RAW_OPEN}
    close_at: dict[str, int] = {}
    out, pos = [], 0
    while True:
        live = [(i, o) for o, i in nxt.items() if i >= 0]
        if not live:
            break
        i, o = min(live)
        close = _RAW_CLOSE[o]
        if close_at.get(close, 0) != -1 and close_at.get(close, -2) < i + len(o):
            close_at[close] = low.find(close, i + len(o))
        j = close_at[close]
        if j < 0:  # never closed: drop the opening tag only (or its name, if it has no ">")
            end = low.find(">", i, i + 300)
            end = i + len(o) if end < 0 else end + 1
        elif o == "<!--":
            end = j + 3
        else:
            gt = low.find(">", j, j + 300)
            end = j + len(close) if gt < 0 else gt + 1
        out.append(md[pos:i])
        out.append(" ")
        pos = end
        for k, v in nxt.items():
            if 0 <= v < pos:
                nxt[k] = _find_open(low, k, pos)
    out.append(md[pos:])
    return re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", "".join(out))


def _is_rule(s: str) -> bool:
    t = s.replace(" ", "").replace("\t", "")
    return len(t) >= 3 and t[0] in "-*_" and t == t[0] * len(t)


def _is_table_sep(s: str) -> bool:
    return "|" in s and "-" in s and not s.strip(" \t:|-")


def _as_heading(h: str) -> str:
    h = h.strip()
    return f"\n{h}{'' if h[-1:] in '.!?:' else '.'}\n" if h else ""


def strip_markdown(md: str) -> tuple[str, str]:
    """`(title, text)`: the first heading (empty if none) and the prose without markup.

    Line by line, so no pattern can scan across the whole file. Headings end in a period so
    the sentence splitter does not glue them to the next line; code is kept as plain text.
    """
    md = drop_raw_html(_FRONT_MATTER.sub("", md.replace("\r\n", "\n"), count=1))
    out: list[str] = []
    title = ""
    prev_text = False  # the previous line is plain text (a setext underline makes it a heading)
    for line in md.split("\n"):
        s = line.strip()
        if s[:3] in ("```", "~~~"):
            prev_text = False
            continue
        if prev_text and s and (s == "=" * len(s) or s == "-" * len(s)):
            heading = out.pop().strip()
            title = title or heading
            out.append(_as_heading(heading))
            prev_text = False
            continue
        if _is_rule(s) or _is_table_sep(s) or _LINK_DEF.match(line):
            prev_text = False
            continue
        m = _HEADING.match(line)
        if m:
            heading = _inline(m.group(1).rstrip(" \t#")).strip()
            title = title or heading
            out.append(_as_heading(heading))
            prev_text = False
            continue
        line = _inline(_LIST.sub("", _QUOTE.sub("", line, count=1), count=1))
        out.append(line)
        prev_text = bool(s)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    return title, text


def read_markdown(name: str, data: bytes) -> Document:
    title, text = strip_markdown(decode_text(data))
    return _make(name, title or stem(name), text, "markdown")


# --- HTML -----------------------------------------------------------------------------------

_SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg", "iframe", "object"})
_BLOCK = frozenset(
    "p div li ul ol h1 h2 h3 h4 h5 h6 tr table section article header footer nav aside main "
    "blockquote pre dd dt dl figcaption figure hr form fieldset address caption td th".split()
)


_WS = re.compile(r"\s+")


class _Visible(HTMLParser):
    """Collects visible text; `<title>` is read even though `<head>` is otherwise skipped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.h1_parts: list[str] = []
        self._skip: list[str] = []  # open skipped elements, so nesting inside them is ignored
        self._in_title = self._in_h1 = False
        self._last_text = -1  # index in `parts` of the last part with visible text

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip.append(tag)
        elif tag == "h1":
            self._in_h1 = True
        if tag == "br" and not self._skip:
            self.parts.append("\n")  # a line break, not a new paragraph
        elif tag in _BLOCK and not self._skip:
            self.parts.append("\n\n")

    def handle_startendtag(self, tag: str, attrs) -> None:
        # `<br/>`, `<hr/>`: a break only; a self-closed `<script/>` must not hide the rest
        if tag == "br" and not self._skip:
            self.parts.append("\n")
        elif tag in _BLOCK and not self._skip:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP and tag in self._skip:
            while self._skip and self._skip.pop() != tag:
                pass
        elif tag == "h1":
            self._in_h1 = False
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and not self._skip:
            self._end_sentence()
        if tag in _BLOCK and not self._skip:
            self.parts.append("\n\n")

    def _end_sentence(self) -> None:
        """A heading is its own sentence (see strip_markdown): give it a period if it has none.
        The last text part is remembered, not searched for: a page of empty headings stays linear."""
        i = self._last_text
        if i >= 0:
            t = self.parts[i].rstrip()
            if t[-1] not in ".!?:":
                self.parts[i] = t + "."

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            data = _WS.sub(" ", data)  # source line wraps are not paragraph breaks; block tags are
            self.parts.append(data)
            if data.strip():
                self._last_text = len(self.parts) - 1
            if self._in_h1:
                self.h1_parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """`(title, visible text)` of an HTML page, paragraphs separated by blank lines."""
    p = _Visible()
    p.feed(html)
    p.close()
    text = "".join(p.parts)
    text = re.sub(r"[ \t\r\f\v\u00a0]+", " ", text)
    text = re.sub(r" ?\n ?", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    title = " ".join("".join(p.title_parts).split()) or " ".join("".join(p.h1_parts).split())
    return title, text


def read_html(name: str, data: bytes) -> Document:
    title, text = html_to_text(decode_text(data))
    return _make(name, title or stem(name), text, "html")


# --- PDF ------------------------------------------------------------------------------------


#: Work bounded by content, not only by bytes: a small PDF can name one page thousands of times.
MAX_PDF_PAGES = 5000
MAX_EXTRACTED_CHARS = 20_000_000


def read_pdf(name: str, data: bytes) -> Document:
    """The PDF's text layer, pages separated by blank lines; no OCR. Refused beyond
    MAX_PDF_PAGES pages or MAX_EXTRACTED_CHARS characters of text."""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-PDF warnings are not for users
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise IngestError("is an encrypted PDF; remove the password and try again")
            except IngestError:
                raise
            except Exception:
                raise IngestError("is an encrypted PDF; remove the password and try again") from None
        n_pages = len(reader.pages)
        if n_pages > MAX_PDF_PAGES:
            raise IngestError(f"has {n_pages} pages; the limit is {MAX_PDF_PAGES} pages per PDF (split it)")
        pages, total = [], 0
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            total += len(pages[-1])
            if total > MAX_EXTRACTED_CHARS:
                raise IngestError(
                    f"gives more than {MAX_EXTRACTED_CHARS:,} characters of text (the limit per file) "
                    f"by page {len(pages)} of {n_pages}"
                )
        meta_title = ""
        try:
            meta: Any = reader.metadata or {}
            meta_title = str(meta.get("/Title") or "")
        except Exception:
            meta_title = ""
    except IngestError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError, RecursionError) as e:
        raise IngestError(f"is not a readable PDF ({type(e).__name__}: {str(e)[:120]})") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not clean_text(text).strip():
        n = len(pages)
        raise IngestError(f"has no text layer (scanned?): {n} page{'s' if n != 1 else ''} without extractable text")
    return _make(name, meta_title or stem(name), text, "pdf")
