"""HippoRAG 2 over the corpus's stored triplets: see method.py (the steps), graph.py (graph, seeds,
PPR), memory.py (recognition memory), index.py (per-corpus index), trace.py (settings and trace)."""

from engine.methods.hipporag2.method import HippoRAG2
from engine.methods.hipporag2.trace import HippoRAG2Settings, HippoRAG2Trace

__all__ = ["HippoRAG2", "HippoRAG2Settings", "HippoRAG2Trace"]
