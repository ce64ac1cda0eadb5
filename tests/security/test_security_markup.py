"""Issue 11, Markdown import: inline HTML keeps its words (a lost phrase made the false fact
"Zorblat Museum born in Quillton"), script/style/comment content is dropped, hostile input is
still read in linear time. (tests/app/test_markdown_inline_html.py has the per-construct table.)"""

from __future__ import annotations

import time

from engine.ingest.documents import read_markdown, strip_markdown


def test_inline_html_keeps_its_words_and_never_invents_a_fact():
    md = (
        '# Zorblat Museum\n\nThe <span class="role" title="a>b">founder of the</span> Zorblat Museum, '
        '<b>Ada Vel</b>, was born in <a href="https://q.example">Quillton</a>.\n\n'
        "The curator of <Zorblat Museum> is Ben<br>Ode. See <https://zorblat.example/about>.\n"
    )
    text = strip_markdown(md)[1]
    assert "The founder of the Zorblat Museum, Ada Vel, was born in Quillton." in text
    assert "The curator of Zorblat Museum is Ben Ode." in text
    assert "https://zorblat.example/about" in text
    assert "<" not in text.replace("<3", "")


def test_scripts_styles_and_comments_are_dropped_with_their_content():
    md = (
        "Before <script>alert('x'); var secret = 1;</script> after.\n"
        "<style>\n.hidden { display: none }\n</style>\n"
        "<SCRIPT src=x>\nmultiline();\n</SCRIPT >Tail <!-- a hidden note --> end.\n"
        "Keep <scripts>this</scripts> too.\n"
    )
    doc = read_markdown("page.md", md.encode())
    for gone in ("alert", "secret", "display", "multiline", "hidden note"):
        assert gone not in doc.text, gone
    for kept in ("Before", "after.", "Tail", "end.", "Keep", "this"):
        assert kept in doc.text, kept


def _seconds(md: str) -> float:
    """Best of three: the machine is shared, and a slow run says nothing about the algorithm."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        strip_markdown(md)
        best = min(best, time.perf_counter() - t0)
    return best


def test_hostile_markdown_is_still_read_in_linear_time():
    """Four times the input costs about four times the time (a quadratic reader: sixteen), measured
    against the same reader in the same process rather than against a wall-clock limit."""
    for unit, n in (("<script", 60_000), ("<", 400_000), ('<a "' * 4000 + "\n", 24), ("<!--", 60_000)):
        small, large = _seconds(unit * n), _seconds(unit * (4 * n))
        assert large < 9 * max(small, 1e-3), (unit[:8], small, large)
