"""Triplet Lens engine: T2RAG and KG2RAG over your own documents, with full traces.

The library surface (everything the app and the CLI do goes through these):

    from engine import Workspace, AppSettings, make_reasoner, build_method
    ws = Workspace(AppSettings.from_env().workspace)
    corpus = ws.open("hotpotqa-sample")
    result = build_method("t2rag", make_reasoner("")).answer("Who ...?", corpus)
    print(result.answer, result.usage)

Names are imported lazily so `import engine` stays cheap (no torch, faiss or litellm).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AppSettings": "engine.config",
    "Workspace": "engine.store",
    "Corpus": "engine.store",
    "CorpusSettings": "engine.store",
    "CorpusError": "engine.store",
    "ChunkingSettings": "engine.chunking",
    "make_reasoner": "engine.llm",
    "build_method": "engine.methods",
    "Result": "engine.methods.base",
    "save_result": "engine.methods.base",
    "load_result": "engine.methods.base",
    "Run": "engine.runs",
    "save_run": "engine.runs",
    "load_run": "engine.runs",
    "SessionConfig": "engine.session",
    "run_extraction": "engine.extraction",
    "load_paths": "engine.ingest",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
