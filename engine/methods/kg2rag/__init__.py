"""KG2RAG (NAACL 2025): semantic seed chunks, expansion along the knowledge graph of their triplets,
a maximum spanning tree per component to filter and order the context (SPEC.md section 2).

    from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
    result = KG2RAG(reasoner).answer("Who directed ...?", corpus, KG2RAGSettings(k=10))

`method.py` wires the steps to a corpus and a reasoner, `graph.py` expands and builds the trees,
`authors.py` holds the authors' own choices (the `paper` preset), `context.py` the answer context,
`rank.py` scores trees without a cross-encoder, `select.py` picks trees for the budget, `trace.py`
holds the settings and typed trace.
"""

from engine.methods.kg2rag.method import (
    FILL_SEPARATOR,
    KG2RAG,
    TREE_SEPARATOR,
    tree_context,
)
from engine.methods.kg2rag.trace import KG2RAGSettings, KG2RAGTrace, SeedChunk

__all__ = ["FILL_SEPARATOR", "KG2RAG", "KG2RAGSettings", "KG2RAGTrace", "SeedChunk", "TREE_SEPARATOR", "tree_context"]
