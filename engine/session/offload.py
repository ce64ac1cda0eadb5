"""Offline questions in worker processes, so concurrent visitors do not share one interpreter lock.

A Streamlit server runs every visitor's session as a thread of one process. A question answered by
the offline reasoner is pure CPU, mostly Python (the rules) and numpy dispatch, so visitors asking
at once queue on the interpreter lock behind each other. With `configure(workers)` (scripts/serve.py,
the `make run` server, when `TRIPLET_LENS_OFFLINE_WORKERS` is above 0), `Session.run_method` hands
such a question to one of `workers` spawned processes, each with the bundled model and its own
read-only handle on the corpus, and gets the `Result` back with the steps the method reported.

Off by default, because it is a trade (bench/app_concurrency.py, docs/benchmarks.md): on 2 cores
with 2 workers a question alone takes ~0.02-0.03 s longer at the server (the process hop and one
BLAS thread a worker), three visitors at once finish no sooner than without workers (last measured:
0.23 against 0.21 s), and eight up to ~20% sooner. An operator expecting many visitors at once may
turn it on.

Only what a worker can answer exactly as the session would goes there: the offline reasoner (the
one `Session.reasoner` builds without a model: no provider, no replay, no key), a corpus on this
machine with the bundled embedder and the local vector index, whose index files are small enough
to load once more per worker (`MAX_INDEX_BYTES`). Anything else, a worker that fails, or a pool
that broke runs in the calling thread as before, so the answer never depends on the pool.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from engine.core.config import OFFLINE_WORKERS_ENV

log = logging.getLogger("triplet_lens.offload")

#: A corpus whose index files are larger stays in the server process: every worker would hold its
#: own copy of them (a million-chunk corpus is gigabytes).
MAX_INDEX_BYTES = 256 << 20

_pool: ProcessPoolExecutor | None = None
_guard = threading.Lock()


def default_workers() -> int:
    """`TRIPLET_LENS_OFFLINE_WORKERS`, else 0 (off: see the module docstring for what it costs)."""
    raw = os.environ.get(OFFLINE_WORKERS_ENV, "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            raise ValueError(f"{OFFLINE_WORKERS_ENV} must be a whole number, not {raw!r}") from None
    return 0


def configure(workers: int) -> None:
    """Start `workers` worker processes (0: none; questions run in the calling thread). Each
    loads the bundled model at once, in the background, so the first question does not wait."""
    global _pool
    with _guard:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        if workers > 0:
            ctx = multiprocessing.get_context("spawn")  # the server has threads: never fork it
            _pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_start_worker)
            for _ in range(workers):
                _pool.submit(_ready)


def shutdown() -> None:
    configure(0)


def _drop(pool: ProcessPoolExecutor) -> None:
    global _pool
    with _guard:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def eligible(reasoner, corpus) -> bool:
    """Whether a worker answers this exactly as the calling thread would (module docstring)."""
    from engine.embed.sentence import BUNDLED_SPEC
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Corpus

    if type(reasoner) is not OfflineReasoner or type(corpus) is not Corpus or corpus.settings.vectors:
        return False
    if getattr(corpus.embedder, "spec", None) != BUNDLED_SPEC or reasoner.embedder is not corpus.embedder:
        return False
    size = sum(f.stat().st_size for f in corpus.path.glob("*.index*") if f.is_file())
    return size <= MAX_INDEX_BYTES


def offloaded(name: str, reasoner, question: str, corpus, settings, on_step=None):
    """The method's result from a worker, or None: no pool, not eligible, or the worker failed (the
    caller then runs it itself). The steps the method reported reach `on_step` when it is back."""
    pool = _pool
    if pool is None or not eligible(reasoner, corpus):
        return None
    try:
        result, steps = pool.submit(_answer, str(corpus.path), name, settings, question).result()
    except BrokenProcessPool:  # a worker died (killed, out of memory): stop using the pool
        log.warning("an offline worker process died; offline questions run in the server process from now on")
        _drop(pool)
        return None
    except Exception as exc:  # noqa: BLE001 - the calling thread answers, and raises what it raises
        log.warning("offline worker failed (%s: %s); answering in the server process", type(exc).__name__, exc)
        return None
    if on_step is not None:
        for label, payload in steps:
            on_step(label, payload)
    return result


# ---- in the worker process -------------------------------------------------------------------

_corpora: dict[str, tuple[tuple[int, int], Any]] = {}


def _start_worker() -> None:
    """One thread per worker: the pool runs questions side by side, one per core, and a question's
    small matrix products gain little from a second thread while its spin-wait takes a core."""
    import faiss
    from threadpoolctl import threadpool_limits

    from engine.embed import get_bundled_embedder

    threadpool_limits(1)
    faiss.omp_set_num_threads(1)
    get_bundled_embedder()


def _ready() -> int:
    return os.getpid()


def _corpus(path: str):
    """This worker's read-only handle on the corpus at `path`, opened again when the database file
    is another one (the corpus was deleted and made anew, or restored from a snapshot)."""
    from engine.embed import get_bundled_embedder
    from engine.store import Corpus

    st = (Path(path) / "corpus.sqlite").stat()
    identity = (st.st_dev, st.st_ino)
    held = _corpora.get(path)
    if held is not None and held[0] == identity:
        return held[1]
    if held is not None:
        held[1].close()
    corpus = Corpus(Path(path), embedder=get_bundled_embedder(), read_only=True)
    _corpora[path] = (identity, corpus)
    return corpus


def _answer(path: str, name: str, settings, question: str):
    from engine.reasoners import make_reasoner
    from engine.session import Session

    corpus = _corpus(path)
    reasoner = make_reasoner("", embedder=corpus.embedder, sentence_vectors=corpus.sentence_vectors)
    steps: list[tuple[str, Any]] = []

    def on_step(label: str, payload=None) -> None:
        steps.append((label, payload))

    # the session's own run (a worker has no pool, so it runs here, with the question's encode memo)
    result = Session.run_method(name, reasoner, question, corpus, settings, on_step)
    return result, steps
