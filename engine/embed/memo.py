"""A question's texts are encoded once, however many steps ask for them.

Within one question the same short texts come back: KG2RAG's seed search and its answer step both
embed the question, T2RAG's next round searches a proposition it searched before. `one_question()`
(around each method run: `Session.run_method`, which a worker process in engine/session/offload.py
calls too)
opens a memo for the calling thread; the bundled embedder serves texts it holds from it and
encodes only the rest, in one call. The memo ends with the question, so nothing is shared between
visitors or kept between questions. A row served from the memo may come from a call with other
texts in it; the encoder's rows differ from a text's own call by float rounding only (<= 1e-5,
tests/engine/llm/test_light_encoder.py), as with calls coalesced across visitors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

_memo: ContextVar[dict[tuple[int, str], np.ndarray] | None] = ContextVar("encode_memo", default=None)


@contextmanager
def one_question() -> Iterator[None]:
    """Texts encoded inside the block are encoded once (the thread's own context: threads a method
    starts run without the memo, as before)."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def encode_once(owner: object, encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> np.ndarray:
    """`encode(texts)`, inside `one_question` encoding only texts `owner` has not encoded in it."""
    memo = _memo.get()
    if memo is None or not texts:
        return encode(texts)
    me = id(owner)
    todo = [t for t in dict.fromkeys(texts) if (me, t) not in memo]
    if todo:
        for t, row in zip(todo, encode(todo), strict=True):
            memo[(me, t)] = row
    return np.stack([memo[(me, t)] for t in texts])
