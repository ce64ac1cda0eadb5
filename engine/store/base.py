"""What the Corpus's parts share, declared once for the type checker.

`Corpus` (engine/store/corpus.py) is assembled from parts: `CorpusLocks`, `CorpusIndexes`,
`CorpusReads`, `CorpusGraph`, `CorpusWrites`. Each part reads state the core sets up in
`Corpus.__init__` and calls methods another part defines. This base declares both, so each part
type-checks on its own; at run time it adds nothing (annotations only, and method signatures under
TYPE_CHECKING).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from engine.core.progress import ProgressCallback
    from engine.core.types import Triplet
    from engine.store.settings import CorpusSettings


class CorpusBase:
    path: Path
    name: str
    read_only: bool
    settings: CorpusSettings
    token: str
    #: called before a destructive change (a workspace snapshots the corpus there)
    before_destructive: Callable[[Any, str], Any] | None
    _db: sqlite3.Connection
    _lock: threading.RLock
    _plock_guard: threading.Lock
    _plock_count: int
    _plock_fh: Any
    _identity: tuple[int, int] | None
    _indexes: dict[str, Any]
    _given_embedder: Any
    _embedder: Any
    _milvus_client: Any
    _graph: Any
    _graph_gen: int
    _no_pending_at_gen: int
    _vec_upto: int
    _edges_ready: bool
    _fts_ready: bool
    #: whether the tables have their `digest` column (engine/store/digests.py)
    _digests: bool

    if TYPE_CHECKING:  # defined by the core or another part

        def _get_meta(self, key: str) -> Any: ...
        def _set_meta(self, key: str, value: Any) -> None: ...
        def _bump(self, key: str) -> int: ...
        def index_stamp(self, which: str, gen: int) -> str: ...
        def _write(self, timeout: float = 30.0) -> AbstractContextManager[None]: ...
        def _process_lock(self, timeout: float) -> AbstractContextManager[None]: ...
        def _may_save(self, timeout: float = 0.0, strict: bool = False) -> AbstractContextManager[bool]: ...
        def _in_query(self, sql: str, values: Sequence) -> list[tuple]: ...
        def _index(self, which: str) -> Any: ...
        def _kind_for(self, which: str) -> str: ...
        def _save_index(self, which: str, store: Any, gen: int) -> Any: ...
        def _embed_batched(
            self, texts: list[str], on_progress: ProgressCallback, label: str, block: int = 256
        ) -> np.ndarray: ...
        def refresh_indexes(self, on_progress: ProgressCallback = ...) -> None: ...
        def refresh_phrase_graph(self, on_progress: ProgressCallback = ...) -> Any: ...
        def get_triplets(self, triplet_ids: Sequence[int]) -> list[Triplet]: ...
        def _triplets_where(self, where: str = "", values: Sequence = ()) -> list[Triplet]: ...
