"""Document text is data, never markup: escaping, highlighting, and readable engine errors.

Chunks, entities and relations come from user files and LLM replies. Whatever they contain
(`<img src=x onerror=alert(1)>`, `</script>`) is shown as text. Every helper here escapes first
and adds its own markup after, so the only tags on the page are the ones this module wrote.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

import streamlit as st

log = logging.getLogger("triplet_lens.app")


def esc(text: object) -> str:
    """HTML-escape any value (quotes included, so it is safe inside attributes too)."""
    return html.escape("" if text is None else str(text), quote=True)


def json_for_script(data: object) -> str:
    """JSON that can sit inside a <script> element: `<`, `>`, `&` and line separators become
    escapes, so a string holding `</script>` cannot close the element."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


@lru_cache(maxsize=32)
def script_hash(source: str) -> str:
    """The CSP source for one inline script: `'sha256-<base64 digest>'` (kept: the graph library's
    half-megabyte script is hashed once per process, not on every page run)."""
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


def csp_meta(scripts: Iterable[str], extra: str = "") -> str:
    """A Content-Security-Policy meta element allowing exactly these inline scripts (by hash):
    a script injected through a slip in escaping has another hash and does not run."""
    hashes = " ".join(script_hash(x) for x in scripts)
    return (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"script-src {hashes}; style-src 'unsafe-inline'; img-src data:{extra}\">"
    )


def sandboxed(page: str, scripts: Iterable[str], height: int, *, fixed: str = "") -> str:
    """`page` inside an iframe with `sandbox="allow-scripts"` only: its scripts run in an opaque
    origin, so even a slip in escaping could not reach the app (its cookies, its DOM, its
    websocket). Streamlit's own iframe (same-origin) holds only this wrapper, which runs no script
    of its own; the wrapper's CSP is inherited by the inner page and allows only its scripts.
    `fixed`: a large text the page holds once, the same on every call (a library's script)."""
    scripts = list(scripts)
    return (
        f'<!doctype html><html><head><meta charset="utf-8">{csp_meta(scripts)}'
        "<style>html,body{margin:0;padding:0;overflow:hidden}</style></head><body>"
        f'<iframe sandbox="allow-scripts" title="graph" srcdoc="{esc_holding(page, fixed)}" '
        f'style="border:0;width:100%;height:{int(height)}px;display:block"></iframe></body></html>'
    )


def esc_holding(page: str, fixed: str) -> str:
    """`page` escaped for an attribute, tabs and line breaks as character references too (the
    browser reads the same page; Streamlit's URL check on the frame, which strips them from a copy
    of the whole megabyte, finds none). The escape of `fixed` (in `page` once) is computed once per
    process: escaping the graph library's script was ~5 ms of every page run showing a graph."""
    at = _find(page, fixed) if fixed else -1
    if at < 0:
        return _esc_attr(page)
    return _esc_attr(page[:at]) + _esc_kept(fixed) + _esc_attr(page[at + len(fixed) :])


def _find(page: str, fixed: str) -> int:
    """Where `fixed` first starts in `page`, or -1. str.find prepares a long needle on every call
    (~1 ms for the half-megabyte script); a short prefix finds the place, a comparison confirms it."""
    at = page.find(fixed[:64])
    while at >= 0 and not page.startswith(fixed, at):
        at = page.find(fixed[:64], at + 1)
    return at


def _esc_attr(text: str) -> str:
    return esc(text).replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;")


@lru_cache(maxsize=4)
def _esc_kept(text: str) -> str:
    return _esc_attr(text)


def _spans(text: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """Case-insensitive occurrences of each needle, merged into non-overlapping spans."""
    found: list[tuple[int, int]] = []
    low = text.lower()
    for n in needles:
        n = (n or "").strip()
        if len(n) < 2:
            continue
        for m in re.finditer(re.escape(n.lower()), low):
            found.append((m.start(), m.end()))
    found.sort()
    merged: list[tuple[int, int]] = []
    for a, b in found:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def highlight(text: str, needles: Iterable[str], css_class: str = "") -> str:
    """Escaped `text` with each occurrence of a needle wrapped in <mark>.

    The spans are found on the raw text and each piece is escaped on its own, so escaping never
    shifts a span and a needle can never inject markup.
    """
    text = text or ""
    out: list[str] = []
    pos = 0
    cls = f' class="{esc(css_class)}"' if css_class else ""
    for a, b in _spans(text, needles):
        out.append(esc(text[pos:a]))
        out.append(f"<mark{cls}>{esc(text[a:b])}</mark>")
        pos = b
    out.append(esc(text[pos:]))
    return "".join(out)


def html_block(inner_html: str) -> None:
    """Render markup this app built from escaped pieces (st.html sanitizes once more)."""
    st.html(f'<div class="tl-block" style="line-height:1.55">{inner_html}</div>')


def _readable(exc: BaseException) -> str:
    msg = str(exc).strip() or exc.__class__.__name__
    # a provider message can be long; the first lines say what to fix
    lines = msg.splitlines()
    return "\n".join(lines[:6])


@contextlib.contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Show an engine failure as one readable st.error, never a traceback.

    The full traceback goes to the server log for whoever runs the app.
    """
    # st.rerun / st.stop raise BaseException subclasses, so they pass through untouched
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the UI boundary: every engine error stops here
        log.exception("%s failed", action)
        st.error(f"{action} failed: {_readable(exc)}")
