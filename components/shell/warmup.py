"""Warm the embedding model and the selected corpus's indexes in the background at start-up.

Without this the first visitor's first question pays for loading the embedder, reading both vector
indexes and importing the methods (`runner._warm_up` shows that as "Loading models and indexes").
The server warms itself as it starts, before any visitor: `scripts/serve.py` (what `make run` and
`python -m engine app` start) calls `start_at_server_start()` in the server process and then hands
over to Streamlit, so the landing page's first visitor can ask at once. That thread picks the
corpus a new session opens on (the sample corpus, else the first one; while `make run`'s
background build is still making the sample, it waits for it) and warms it.

app.py also calls `start_warmup()` on every run, for a server started without the launcher
(`streamlit run app.py`) and for another corpus a session picks: once per corpus and process, so
a corpus the server already warmed is not warmed again. Both go through the same cached resources
the pages use (`state._open_corpus`), so what they load is what the question uses. A failure is
only logged: the question then loads what it needs itself and reports any error where the user
sees it.
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
    from components.shell import state

    if not name:
        return None
    root = str(state.settings().workspace)
    with _guard:
        if (root, name) in started:
            return None
        if not _workspace_opens(root):
            return None
        thread = started[(root, name)] = threading.Thread(
            target=warm, args=(root, name), name=f"warmup-{name}", daemon=True
        )
    thread.start()
    return thread


def _workspace_opens(root: str) -> bool:
    from components.shell import state

    try:
        state._workspace(root)  # the embedding model's weights load here
    except Exception:  # noqa: BLE001 - a broken workspace: the Corpora page says what is wrong
        log.warning("no warm-up: the workspace %s does not open", root, exc_info=True)
        return False
    return True


#: The server-start warm-up's thread (None until scripts/serve.py starts it)
server_thread: threading.Thread | None = None


def start_at_server_start(build_wait: float = 1800.0) -> threading.Thread:
    """In the server process, before Streamlit serves anyone: a daemon thread that warms the corpus a
    new session opens on (see module docstring). `build_wait` bounds how long it waits for a
    sample build that `make run` started in the background."""
    global server_thread
    # its cached resources are read outside a page run: Streamlit's "missing ScriptRunContext" is expected
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_not_warmup)
    server_thread = threading.Thread(target=_warm_default, args=(build_wait,), name="warmup-server", daemon=True)
    server_thread.start()
    return server_thread


def _not_warmup(record: logging.LogRecord) -> bool:
    return not threading.current_thread().name.startswith("warmup")


def _warm_default(build_wait: float) -> str | None:
    """Warm the default corpus of the server's workspace; its name, or None when nothing was warmed."""
    from engine.core.config import AppSettings

    try:
        root = str(AppSettings.from_env().workspace)  # what every session's settings() holds
    except ValueError:  # an operator variable that does not parse: each page says so
        log.warning("no warm-up at server start: the configuration is invalid", exc_info=True)
        return None
    if not _workspace_opens(root):
        return None
    name = _default_corpus(root, build_wait)
    if name is None:
        log.info("no corpus to warm at server start in %s (the embedding model is loaded)", root)
        return None
    with _guard:
        if (root, name) in started:  # a page view was quicker
            return None
        started[(root, name)] = threading.current_thread()
    warm(root, name)
    return name


def _default_corpus(root: str, build_wait: float) -> str | None:
    """The corpus `state.init_state` opens a new session on; while a background build is making the
    sample corpus (and up to `build_wait` seconds), wait for it."""
    from components.shell import state
    from engine.session.samples import build_status

    deadline = time.monotonic() + build_wait
    while True:
        names = sorted(state._workspace(root).list())
        if state.SAMPLE_CORPUS in names:
            return state.SAMPLE_CORPUS
        if not build_status(root).running or time.monotonic() > deadline:
            return names[0] if names else None
        time.sleep(0.5)


#: the views a question's page draws with (and what they import: plotly, the graph layout); the
#: first Ask page of a process imported them for ~0.8 s on a loaded 2-core machine
VIEW_MODULES = (
    "components.screens.method_page",
    "components.compare.view",
    "components.compare.whatif",
    "components.compare.whatif_view",
    "components.screens.run_controls",
    "components.eval.view",
)


def _import_views() -> None:
    import importlib

    for module in VIEW_MODULES:
        importlib.import_module(module)


def warm(root: str, name: str) -> float:
    """Load what a first question needs; the seconds it took (0.0 when it failed)."""
    from components.shell import state
    from engine.methods.registry import app_methods, method_class
    from engine.reasoners import make_reasoner

    t0 = time.monotonic()
    try:
        corpus = state._open_corpus(root, name)
        qv = corpus.embed(["warm-up question"])  # the embedder's weights and its first pass
        corpus.search_chunks(qv, 1)  # both vector indexes, read from disk (or rebuilt) once
        corpus.search_propositions(qv, 1)
        for method in app_methods():  # method modules and what they import (graphs, BM25)
            warm_index = getattr(method_class(method), "warm", None)  # engine.methods.base.Warms
            if callable(warm_index):  # a per-corpus index (HippoRAG 2's graph): loaded, or built once
                warm_index(corpus)
        make_reasoner("", embedder=corpus.embedder)  # the offline reasoner's compiled patterns
        _import_views()
        from components.shell.showcase import warm_captions

        warm_captions(corpus)  # the landing card's showcase, run at the default settings
    except Exception:  # noqa: BLE001 - the first question loads again and reports what failed
        log.warning("warm-up of corpus %r failed; the first question will load it", name, exc_info=True)
        return 0.0
    took = time.monotonic() - t0
    log.info("warmed corpus %r in %.1f s", name, took)
    return took
