"""Bytes -> text with readable refusals: binary files, unknown encodings, hostile JSON.

Every refusal is an `IngestError` whose message a user can act on; the batch loader turns it into
one `(name, message)` entry and goes on with the next file.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, BinaryIO


class IngestError(ValueError):
    """One input that cannot be read; the message names the problem, not a traceback."""


_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: its BOM starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def read_capped(fh: BinaryIO, size_hint: int, max_bytes: int) -> bytes:
    """Read an open file to its end, or to `max_bytes + 1` bytes when it is longer.

    Allocates about what the file holds (`fh.read(max_bytes + 1)` would reserve the whole limit for
    an empty file), and stops on a file that grows or never ends (/dev/zero, a FIFO) whose stat size
    said nothing. A result longer than `max_bytes` means "over the limit".
    """
    data = fh.read(min(max(size_hint, 0), max_bytes) + 1)
    while len(data) <= max_bytes:
        more = fh.read(min(1 << 20, max_bytes + 1 - len(data)))
        if not more:
            break
        data += more
    return data


def clean_text(s: str) -> str:
    """Drop what SQLite, JSON and the UI choke on: NULs, control characters, lone surrogates
    (JSON escapes such as "\\ud800" decode to them) and Windows line ends."""
    s = _LONE_SURROGATE.sub("\ufffd", s)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", s)


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), or UTF-16/32 when a BOM says so; otherwise refuse.

    No guessing of legacy code pages: a wrong guess silently garbles every name in the corpus,
    while a refusal naming the byte offset tells the user to re-save the file as UTF-8.
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(enc)
            except UnicodeDecodeError as e:
                raise IngestError(f"is not valid {enc.upper()} text (bad bytes at offset {e.start})") from None
    if b"\x00" in data[:8192]:
        raise IngestError("looks like a binary file (it contains NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = data[e.start : e.start + 4].hex(" ")
        raise IngestError(
            f"is not valid UTF-8: undecodable byte(s) {bad} at byte offset {e.start}; save it as UTF-8 and try again"
        ) from None


def parse_json(text: str) -> Any:
    """`json.loads` with messages a user can act on (line and column, depth, NaN)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        hint = " (the file looks truncated)" if e.pos >= len(text.rstrip()) else ""
        raise IngestError(f"is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}{hint}") from None
    except RecursionError:
        raise IngestError("is JSON nested too deeply to read (thousands of levels); not a dataset") from None
    if isinstance(value, float) and not math.isfinite(value):
        shown = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        raise IngestError(f"holds only the bare number {shown}, not a dataset")
    return value


def parse_jsonl(text: str) -> tuple[list[Any], list[str]]:
    """One JSON value per non-empty line -> (values, problems). A bad line (a truncated last
    record, say) is reported by number and the others still load; all bad -> IngestError."""
    out: list[Any] = []
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            problems.append(f"line {n} is not valid JSON ({e.msg} at column {e.colno})")
        except RecursionError:
            problems.append(f"line {n} is JSON nested too deeply to read")
    if not out:
        raise IngestError(problems[0] if problems else "holds no JSON lines")
    return out, problems


def looks_like_jsonl(text: str) -> bool:
    """Several top-level values on separate lines (`{...}\\n{...}`), not one JSON document."""
    head = text.lstrip()[:1]
    if head != "{":
        return False
    first_line = text.lstrip().split("\n", 1)[0].strip()
    if not first_line.endswith("}"):
        return False
    try:
        json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return bool(text.lstrip()[len(first_line) :].strip())
