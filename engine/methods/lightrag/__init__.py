"""LightRAG through its own library (`lightrag-hku`, pinned in requirements.txt) over the corpus's
stored chunks and triplets: see method.py (the steps), storage.py (the per-corpus storage: built,
loaded, reused), manifest.py (its layout in the corpus folder, stamp and hashes), kg.py (chunks and
triplets as LightRAG's custom knowledge graph), library.py (the guarded import: no installs, no
`.env`, no downloads), runner.py (its one event loop) and trace.py (settings and trace)."""

from engine.methods.lightrag.method import LightRAG
from engine.methods.lightrag.trace import LightRAGSettings, LightRAGTrace

__all__ = ["LightRAG", "LightRAGSettings", "LightRAGTrace"]
