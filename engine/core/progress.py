"""Progress reporting: every long step takes `on_progress(done, total, label)`.

The app connects it to `st.progress`; the CLI to `TerminalProgress`, a dependency-free bar on
stderr that redraws at most ten times a second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from engine.core.terminal import shown

ProgressCallback = Callable[[int, int, str], None]


def no_progress(done: int, total: int, label: str = "") -> None:
    """The default callback: report nothing."""


class Throttle:
    """Lets a redraw through at most every `interval` seconds, and always on the final step, so a
    callback fired per chunk does not spend more time drawing than the work it reports."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self._last = 0.0

    def due(self, done: int, total: int) -> bool:
        now = time.monotonic()
        if total > 0 and done >= total or now - self._last >= self.interval:
            self._last = now
            return True
        return False


class TerminalProgress:
    def __init__(self, stream: TextIO | None = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.width = width
        self._throttle = Throttle()
        self._open = False

    def __call__(self, done: int, total: int, label: str = "") -> None:
        if not self._throttle.due(done, total):
            return
        final = total > 0 and done >= total
        frac = done / total if total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"\r[{bar}] {done}/{total} {shown(label)[:60]:<60}"  # a title is data: no control character
        if self.stream.isatty() or final:
            self.stream.write(line)
            if final:
                self.stream.write("\n")
                self._open = False
            else:
                self._open = True
            self.stream.flush()

    def close(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
