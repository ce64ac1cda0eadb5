"""Warm the embedding model and the selected corpus's indexes in the background at start-up.

Without this the first visitor's first question pays for loading the embedder, reading both vector
indexes and importing the methods (`runner._warm_up` shows that as "Loading models and indexes").
app.py calls `start_warmup()` on every run; the first run of a server process (the landing page
of its first visitor) starts one daemon thread per corpus, so by the time a question is typed
the work is done. It goes through the same cached resources the pages use (`state._open_corpus`),
so what it loads is what the question uses. A failure is only logged: the question then loads
what it needs itself and reports any error where the user sees it.
"""
from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger(__name__)

#: (workspace root, corpus name) -> the thread warming it, once per process
started: dict[tuple[str, str], threading.Thread] = {}
_guard = threading.Lock()


def start_warmup(name: str | None) -> threading.Thread | None:
    """Start warming corpus `name` of this session's workspace once per process; the thread, or
    None when there is nothing to do (no corpus selected, or already started). Called from a page
    run: the workspace is opened (cheap) and cached here, so the thread never reads session state,
    which only a page run's thread can."""
    from components import state

    if not name:
        return None
    root = str(state.settings().workspace)
    with _guard:
        if (root, name) in started:
            return None
        try:
            state.workspace()
        except Exception:  # noqa: BLE001 - a broken workspace: the Corpora page says what is wrong
            log.warning("no warm-up: the workspace %s does not open", root, exc_info=True)
            return None
        thread = started[(root, name)] = threading.Thread(
            target=warm, args=(root, name), name=f"warmup-{name}", daemon=True
        )
    thread.start()
    return thread


def warm(root: str, name: str) -> float:
    """Load what a first question needs; the seconds it took (0.0 when it failed)."""
    from components import state
    from engine.methods.registry import app_methods, method_class
    from engine.reasoners import make_reasoner

    t0 = time.monotonic()
    try:
        corpus = state._open_corpus(root, name)
        qv = corpus.embed(["warm-up question"])  # the embedder's weights and its first pass
        corpus.search_chunks(qv, 1)  # both vector indexes, read from disk (or rebuilt) once
        corpus.search_propositions(qv, 1)
        for method in app_methods():  # method modules and what they import (graphs, BM25)
            method_class(method)
        make_reasoner("", embedder=corpus.embedder)  # the offline reasoner's compiled patterns
    except Exception:  # noqa: BLE001 - the first question loads again and reports what failed
        log.warning("warm-up of corpus %r failed; the first question will load it", name, exc_info=True)
        return 0.0
    took = time.monotonic() - t0
    log.info("warmed corpus %r in %.1f s", name, took)
    return took
