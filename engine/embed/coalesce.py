"""Concurrent small encodes share one forward pass (issue 30: visitors asking at once).

A question's encodes are small: the question, a few relation phrases. For such batches the numpy
forward pass is mostly per-call overhead (Python and numpy dispatch under the GIL), not arithmetic,
so three visitors encoding one text each cost about three times one visitor, although one forward
over their three texts costs little more than one over a single text.

`CoalescingEncoder` groups them without adding a wait: a call that finds no forward running runs
one at once (alone, nothing changes). Calls arriving while it runs queue up; when it ends, the
first of them leads the next forward, over every text queued meanwhile, and hands each caller its
own rows. Rows are the same as separate encodes give (the encoder masks padding; float rounding
aside). A failure reaches every caller of that forward; the queue goes on with the next one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class _Call:
    texts: list[str]
    woken: threading.Event = field(default_factory=threading.Event)
    rows: np.ndarray | None = None
    error: BaseException | None = None
    lead: bool = False  # woken to run the next forward, not with its rows


class CoalescingEncoder:
    """Wraps `encode(texts) -> rows` (see the module docstring); calls of more than `max_texts`
    texts (bulk indexing) go straight through."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], max_texts: int = 16):
        self._encode = encode
        self.max_texts = max_texts
        self._lock = threading.Lock()
        self._queue: list[_Call] = []
        self._running = False
        #: forwards run and calls served (a call served in a shared forward counts once)
        self.forwards = 0
        self.calls = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts or len(texts) > self.max_texts:
            return self._encode(texts)
        call = _Call(texts)
        with self._lock:
            self._queue.append(call)
            lead = not self._running
            self._running = True
        if not lead:
            call.woken.wait()
            lead = call.lead
        if lead:
            self._lead()
        if call.error is not None:
            raise call.error
        assert call.rows is not None
        return call.rows

    def _lead(self) -> None:
        """Run one forward over everything queued, hand out the rows, pass the lead on."""
        with self._lock:
            batch, self._queue = self._queue, []
        try:
            rows = self._encode([t for c in batch for t in c.texts])
            at = 0
            for c in batch:
                c.rows, at = rows[at : at + len(c.texts)], at + len(c.texts)
        except BaseException as exc:  # every caller of this forward gets it
            for c in batch:
                c.error = exc
        with self._lock:
            self.forwards += 1
            self.calls += len(batch)
            successor = self._queue[0] if self._queue else None
            if successor is None:
                self._running = False
            else:
                successor.lead = True
        for c in batch:
            c.woken.set()
        if successor is not None:
            successor.woken.set()
