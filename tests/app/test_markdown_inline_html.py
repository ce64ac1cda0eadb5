"""Markdown keeps the text of inline HTML (a sentence must not lose its words and make a false
fact); scripts, styles and comments are dropped with their content, never kept as text."""

from __future__ import annotations

import pytest

from engine.ingest.documents import drop_raw_html, strip_markdown


@pytest.mark.parametrize(
    "md, text",
    [
        (
            'The <em>Zorblat</em> Museum was founded by <span class="x">Mira Dobb</span>, who was born in Quillton.',
            "The Zorblat Museum was founded by Mira Dobb, who was born in Quillton.",
        ),
        ('The Zorblat Museum <br> was built by <abbr title="Mira">MD</abbr>.', "The Zorblat Museum was built by MD."),
        (
            "<details><summary>The Zorblat Museum</summary>was founded by Mira Dobb.</details>",
            "The Zorblat Museum was founded by Mira Dobb.",
        ),
        ("Prices: 3 < 5 and 7 > 2 hold for <b>Zorblat</b>.", "Prices: 3 < 5 and 7 > 2 hold for Zorblat."),
        ("x <script>alert(1)</script> y <style>.a{color:red}</style> z <!-- a hidden note --> w", "x y z w"),
        ("a <SCRIPT src=x>\nvar s = 'Quillton';\n</SCRIPT> b", "a b"),
        ("an unclosed <script tag keeps the rest", "an unclosed tag keeps the rest"),
    ],
)
def test_inline_html_keeps_its_text_and_drops_code(md, text):
    assert strip_markdown(md)[1].strip() == text


def test_dropping_raw_html_is_linear_on_hostile_input():
    import time

    hostile = "<script" * 200_000 + "<!--" * 100_000  # nothing ever closes
    start = time.perf_counter()
    out = drop_raw_html(hostile)
    assert "<script" not in out and time.perf_counter() - start < 30  # generous: quadratic takes hours
