"""Triplet Lens engine: T2RAG and KG2RAG over your own documents, with full traces.

The library surface (everything the app and the CLI do goes through these):

    from engine import AppSettings, Session, Workspace
    app = AppSettings.from_env()
    corpus = Workspace(app.workspace).open("hotpotqa-sample")
    session = Session.for_cli(app)            # the model named by TRIPLET_LENS_MODEL; none: offline rules
    result = session.answer("t2rag", "Which city is the capital of the country where Hamburg is?", corpus)
    print(result.answer, result.usage)

A reasoner on its own (the four jobs of SPEC, with or without a model):

    from engine import make_reasoner
    reasoner = make_reasoner("")              # "" = the offline rules, no key needed
    print(reasoner.name)                      # offline-rules

Names are imported lazily so `import engine` stays cheap (no torch, faiss or litellm).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AppSettings": "engine.core.config",
    "Workspace": "engine.store",
    "Corpus": "engine.store",
    "CorpusSettings": "engine.store",
    "CorpusError": "engine.store",
    "ChunkingSettings": "engine.core.chunking",
    "make_reasoner": "engine.reasoners",
    "build_method": "engine.methods",
    "Result": "engine.methods.base",
    "save_result": "engine.methods.base",
    "load_result": "engine.methods.base",
    "Run": "engine.runs",
    "save_run": "engine.runs",
    "load_run": "engine.runs",
    "Session": "engine.session",
    "run_extraction": "engine.triplets.extraction",
    "load_paths": "engine.ingest",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
