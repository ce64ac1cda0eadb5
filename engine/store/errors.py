"""Errors a user can act on, and the corpus-name rule."""

from __future__ import annotations

import re

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class CorpusError(RuntimeError):
    """A problem a user can act on: unknown corpus, bad name, busy corpus, broken file."""


class CorpusBusyError(CorpusError):
    pass


class CorpusGoneError(CorpusError):
    """The corpus folder this object opened was dropped or replaced by another process (or thread):
    nothing more is written to it."""

    @classmethod
    def of(cls, name: str, replaced: bool) -> CorpusGoneError:
        if replaced:
            return cls(
                f"corpus {name!r} was replaced by another process (corpus restore) while this one was using it; "
                "nothing more was written to it: run the command again on the restored corpus"
            )
        return cls(
            f"corpus {name!r} was dropped by another process while this one was using it; nothing more was "
            f"written to it, and what was written before is in the dropped corpus: bring it back with "
            f"corpus undo-drop {name}"
        )


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name:
        raise CorpusError(
            f"invalid corpus name {name!r}: use 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit (no paths)"
        )
    return name
