"""KG2RAG step 8's context: the selected trees' paragraphs in rank order, then the fill."""

from __future__ import annotations

from engine.methods.common import format_context
from engine.methods.kg2rag.records import Tree
from engine.store.protocol import CorpusView

#: Marks the start of every selected tree after the first, and of the fill: a sentence of its own
#: (the final period) in plain lower-case words, with no name or number in it. The offline reasoner
#: reads answers off the context's sentences: a header such as "[Knowledge tree 2 of 3: ...]", or
#: one before the first tree, cost it 4 of 100 HotpotQA answers; one without a period was glued to
#: the next passage's first sentence. These cost none (docs/benchmarks.md).
TREE_SEPARATOR = "(next knowledge tree.)"
FILL_SEPARATOR = "(seed passages.)"


def tree_context(selected: list[Tree], fill_ids: list[str], corpus: CorpusView) -> str:
    """The answer context: each selected tree's paragraphs in rank order (each tree in walk
    order), a separator line between trees, then the seed chunks added as fill under their own
    separator. The separators keep tree boundaries visible, so the reader can tell one reasoning
    chain from the next (flattening them hides where a chain ends). Each separator is a paragraph
    of its own: a reader that splits the context on blank lines would otherwise take it for the
    title of the next passage."""
    parts: list[str] = []
    shown: set[str] = set()  # a chunk stating triplets of two components sits in two trees: shown once
    for t in selected:
        ids = [c for c in t.chunk_ids if c not in t.cut_chunk_ids and c not in shown]
        shown.update(ids)
        if ids:
            body = format_context(corpus.get_chunks(ids))
            parts.append(f"{TREE_SEPARATOR}\n\n{body}" if parts else body)
    if fill_ids:
        body = format_context(corpus.get_chunks(fill_ids))
        parts.append(f"{FILL_SEPARATOR}\n\n{body}" if parts else body)
    return "\n\n".join(parts)
