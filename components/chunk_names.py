"""Human names for chunks: "<document title> · chunk <n>" instead of the stored hash id.

A chunk id (`4693eb5d1be3b122#0`) is stable but tells a reader nothing; the title and the chunk's
position in its document do. Names are looked up in the open corpus once per set of ids.
"""

from __future__ import annotations

from collections.abc import Iterable


def chunk_name(title: str, position: int) -> str:
    return f"{title or 'untitled'} · chunk {int(position) + 1}"


def _fallback(chunk_id: str) -> str:
    # the id is "<doc hash>#<position>": keep the position readable even without the corpus
    head, _, pos = chunk_id.rpartition("#")
    return f"{head[:8]}… · chunk {int(pos) + 1}" if head and pos.isdigit() else chunk_id


def chunk_names(corpus, chunk_ids: Iterable[str]) -> dict[str, str]:
    """`chunk_id -> readable name` for each id (ids missing from the corpus keep a short form)."""
    ids = list(dict.fromkeys(c for c in chunk_ids if c))
    found = {}
    if corpus is not None and ids:
        try:
            found = {c.chunk_id: chunk_name(c.title, c.position) for c in corpus.get_chunks(ids)}
        except Exception:  # a reopened run whose corpus changed or closed: short forms only
            found = {}
    return {c: found.get(c) or _fallback(c) for c in ids}


def chunk_texts(corpus, chunk_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """`chunk_id -> (name, text)` for the ids the corpus still holds."""
    ids = list(dict.fromkeys(c for c in chunk_ids if c))
    if corpus is None or not ids:
        return {}
    try:
        return {c.chunk_id: (chunk_name(c.title, c.position), c.text) for c in corpus.get_chunks(ids)}
    except Exception:
        return {}
