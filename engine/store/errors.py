"""Errors a user can act on, and the corpus-name rule."""

from __future__ import annotations

import re

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class CorpusError(RuntimeError):
    """A problem a user can act on: unknown corpus, bad name, busy corpus, broken file."""


class CorpusBusyError(CorpusError):
    pass


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name:
        raise CorpusError(
            f"invalid corpus name {name!r}: use 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit (no paths)"
        )
    return name
