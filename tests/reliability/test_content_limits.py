"""Work bounded by content, not only by bytes: small hostile files are refused or read at once."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from engine.ingest.documents import MAX_PDF_PAGES, IngestError, html_to_text, read_pdf


def _shared_page_pdf(n: int) -> bytes:
    """A PDF whose page tree names one page `n` times (62 KB for 96k pages in the wild)."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, NameObject, NumberObject

    w = PdfWriter()
    w.add_blank_page(100, 100)
    pages: Any = w._root_object["/Pages"].get_object()  # a DictionaryObject; pypdf types it loosely
    ref = pages["/Kids"][0]
    pages[NameObject("/Kids")] = ArrayObject([ref] * n)
    pages[NameObject("/Count")] = NumberObject(n)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def test_pdf_naming_one_page_thousands_of_times_is_refused_naming_the_limit():
    with pytest.raises(IngestError, match=f"96000 pages; the limit is {MAX_PDF_PAGES}"):
        read_pdf("shared.pdf", _shared_page_pdf(96_000))


def test_megabyte_of_empty_headings_reads_in_linear_time():
    html = "<h2></h2>" * (1_000_000 // 9)  # was quadratic: still running after 180 s
    start = time.perf_counter()
    title, text = html_to_text(html)
    assert text == "" and title == ""
    assert time.perf_counter() - start < 30  # generous: a regression to quadratic takes minutes


def test_headings_still_end_their_sentence():
    assert html_to_text("<h1>Title</h1><p>Some text</p><h2>Sub</h2><h3></h3><p>More</p>") == (
        "Title",
        "Title.\n\nSome text\n\nSub.\n\nMore",
    )
