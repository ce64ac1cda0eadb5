"""Text that is safe to print on a terminal.

A name, title, path or reply comes from files, datasets, providers and other people: printed as
it is, an escape sequence in it (`\\x1b]0;TITLE\\x07` sets the window title, `\\x1b[2J` clears the
screen) drives the user's terminal, and a newline splits one table row into false ones. `shown`
writes every such character visibly instead, the way Python writes it in a string literal.
"""

from __future__ import annotations

import re

#: C0 controls (newline and tab too), DEL, C1 controls (`\x9b` is a one-byte CSI on some
#: terminals), the line and paragraph separators, and the bidirectional overrides and isolates
#: that make a terminal show text in another order than it is
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(value: object) -> str:
    """`str(value)` with every control character written visibly (`\\x1b`, `\\n`): one line, and
    nothing in it that a terminal would act on. A backslash stays as it is."""
    return _UNSAFE.sub(_escape, str(value))
