"""One event loop, on one thread, for everything LightRAG does in this process.

LightRAG is asyncio through and through, and keeps process-wide state bound to the loop that first
used it: the locks of `lightrag.kg.shared_storage`, the worker tasks of its priority queues (one per
LLM role and one for embeddings), the loop its storages were initialized on. A fresh
`asyncio.run` per question (or per Streamlit thread, or per eval worker) would meet locks and
workers of a dead loop. So every LightRAG coroutine runs here, on a daemon thread that owns one
loop for the life of the process; callers on any thread block on `run(...)`.

What a coroutine needs from the caller (the question's reasoner and its call log, the corpus whose
embedder encodes, the progress callback) travels in `HOOKS`, a context variable set inside the
task, so concurrent questions on one loop never see each other's. LightRAG's queues run a call in
the context captured when it was queued, so the hooks reach the model and embedding functions,
which `run_blocking` then calls on a worker thread, in a copy of that context (the LLM door's
deadline, also a context variable, comes along).
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class Hooks:
    """What LightRAG's model and embedding functions reach for during one build or question."""

    embed: Callable[[list[str]], Any]  # texts -> (n, dim) unit vectors: the corpus's embedder
    chat: Callable[[str, list[dict[str, str]]], tuple[str, Any]] | None = None  # (job, messages) -> (text, LLMCall)
    calls: list[Any] = field(default_factory=list)  # every LLMCall made, in order
    errors: list[BaseException] = field(default_factory=list)  # errors that must end the question
    on_embedded: Callable[[int], None] | None = None  # texts embedded so far (a build's progress)
    embedded: int = 0
    caller_context: contextvars.Context | None = None  # the caller's context (the LLM deadline lives there)
    _progress: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)

    def count_embedded(self, n: int) -> None:
        """From the loop: `n` more texts embedded. The caller's thread hears of it (`drain`), so a
        progress bar is drawn where its page runs."""
        self.embedded += n
        self._progress.put(self.embedded)

    def drain(self) -> None:
        last = None
        while not self._progress.empty():
            last = self._progress.get_nowait()
        if last is not None and self.on_embedded is not None:
            self.on_embedded(last)


HOOKS: contextvars.ContextVar[Hooks | None] = contextvars.ContextVar("triplet_lens_lightrag_hooks", default=None)

_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def _ensure_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _start_lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=serve, name="lightrag-loop", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
        return _loop


def run(hooks: Hooks, make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make()` on the LightRAG loop with `hooks` in its context, and wait,
    passing its progress on from this thread. Must not be called from the loop's own thread."""
    loop = _ensure_loop()
    if threading.current_thread() is _thread:
        raise RuntimeError("LightRAG's runner was called from its own loop")
    hooks.caller_context = contextvars.copy_context()

    async def task() -> T:
        HOOKS.set(hooks)
        return await make()

    future: Future[T] = asyncio.run_coroutine_threadsafe(task(), loop)
    while not future.done():  # progress is reported from this (the caller's) thread
        wait([future], timeout=0.2)
        hooks.drain()
    return future.result()


async def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread (so the loop keeps serving other questions), inside a copy of
    the caller's context (so the LLM door sees the question's deadline)."""
    hooks = HOOKS.get()
    ctx = hooks.caller_context.copy() if hooks is not None and hooks.caller_context is not None else None
    if ctx is None:
        return await asyncio.to_thread(fn, *args)
    return await asyncio.to_thread(ctx.run, fn, *args)


def current() -> Hooks:
    hooks = HOOKS.get()
    if hooks is None:
        raise RuntimeError("LightRAG called its model or embedding function outside a Triplet Lens build or question")
    return hooks
