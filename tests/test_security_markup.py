"""Issue 11, markup: Markdown keeps the words of inline HTML and drops script/style content;
the graph and export pages admit only their own scripts (CSP by hash); graph frames are sandboxed
with `allow-scripts` only. (The browser proves the same in tests/test_security_browser.py.)"""
from __future__ import annotations

import html
import re
import time

from engine.ingest.documents import read_markdown, strip_markdown


def test_inline_html_keeps_its_words_and_never_invents_a_fact():
    md = ("# Zorblat Museum\n\nThe <span class=\"role\" title=\"a>b\">founder of the</span> Zorblat Museum, "
          "<b>Ada Vel</b>, was born in <a href=\"https://q.example\">Quillton</a>.\n\n"
          "The curator of <Zorblat Museum> is Ben<br>Ode. See <https://zorblat.example/about>.\n")
    text = strip_markdown(md)[1]
    assert "The founder of the Zorblat Museum, Ada Vel, was born in Quillton." in text
    assert "The curator of Zorblat Museum is Ben Ode." in text
    assert "https://zorblat.example/about" in text
    assert "<" not in text.replace("<3", "")


def test_scripts_styles_and_comments_are_dropped_with_their_content():
    md = ("Before <script>alert('x'); var secret = 1;</script> after.\n"
          "<style>\n.hidden { display: none }\n</style>\n"
          "<SCRIPT src=x>\nmultiline();\n</SCRIPT >Tail <!-- a hidden note --> end.\n"
          "Keep <scripts>this</scripts> and <noscript>not this</noscript>.\n")
    doc = read_markdown("page.md", md.encode())
    for gone in ("alert", "secret", "display", "multiline", "hidden note", "not this"):
        assert gone not in doc.text, gone
    for kept in ("Before", "after.", "Tail", "end.", "Keep", "this"):
        assert kept in doc.text, kept


def test_hostile_markdown_is_still_read_in_linear_time():
    for md in ("<script" * 500_000, "<" * 3_000_000, ("<a \"" * 4000 + "\n") * 200, "<!--" * 500_000):
        t0 = time.perf_counter()
        strip_markdown(md)
        assert time.perf_counter() - t0 < 3.0


def _inline_scripts(page: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", page, re.S)


def _csp(page: str) -> str:
    return re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)


def test_export_csp_admits_exactly_its_own_script():
    from components.export import export_html
    from components.runs import Run
    from components.safe import script_hash

    page = export_html(Run(question="Who <b>?", results=[]))
    policy = _csp(page)
    assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";")[0]
    assert "default-src 'none'" in policy
    scripts = _inline_scripts(page)
    assert scripts and all(script_hash(s) in policy for s in scripts)
    assert script_hash("alert(1)") not in policy


def test_graph_page_and_its_sandboxed_frame():
    from components.graph import GEdge, GNode, graph_html, graph_scripts
    from components.safe import sandboxed_page, script_hash

    page = graph_html([GNode("a", "<img src=x onerror=alert(1)>"), GNode("b", "B")], [GEdge("a", "b")])
    policy = _csp(page)
    assert all(script_hash(s) in policy for s in _inline_scripts(page)) and len(_inline_scripts(page)) == 2
    wrapper = sandboxed_page(page, graph_scripts(), 300)
    assert "<script" not in wrapper.split("srcdoc=", 1)[0]  # the wrapper itself runs nothing
    assert "allow-same-origin" not in wrapper
    frame = re.search(r'<iframe sandbox="([^"]*)"[^>]*srcdoc="([^"]*)"', wrapper)
    assert frame.group(1) == "allow-scripts"
    assert html.unescape(frame.group(2)) == page  # the attribute holds the page exactly, escaped
    assert _csp(wrapper) == policy  # the frame inherits the wrapper's policy: the same scripts only
