"""Searchable tables of a corpus's documents, chunks, triplets and questions.

st.dataframe draws cells on a canvas as plain text, so document text can never become markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from components.chunk_names import chunk_name

#: Rows a table shows at most; the caption says when more matched.
MAX_ROWS = 2000


def _filter(df: pd.DataFrame, query: str, columns: Iterable[str]) -> pd.DataFrame:
    q = (query or "").strip().lower()
    if not q or df.empty:
        return df
    mask = pd.Series(False, index=df.index)
    for c in columns:
        mask |= df[c].astype(str).str.lower().str.contains(q, regex=False)
    return df[mask]


def searchable_table(
    df: pd.DataFrame,
    *,
    key: str,
    search_cols: Iterable[str],
    label: str,
    column_config: dict[str, Any] | None = None,
    height: int | str = 360,
) -> pd.DataFrame:
    """A search box over `search_cols` and the matching rows (at most MAX_ROWS shown)."""
    query = st.text_input(f"Search {label}", key=f"search_{key}", placeholder="type to filter")
    shown = _filter(df, query, search_cols)
    st.caption(f"{len(shown)} of {len(df)} {label}" + (f" (first {MAX_ROWS} shown)" if len(shown) > MAX_ROWS else ""))
    st.dataframe(shown.head(MAX_ROWS), hide_index=True, width="stretch", column_config=column_config, height=height)
    return shown


def documents_frame(docs: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"doc_id": d.doc_id, "title": d.title, "source": d.source, "kind": d.kind, "chunks": d.n_chunks}
            for d in docs
        ],
        columns=["doc_id", "title", "source", "kind", "chunks"],
    )


def chunks_frame(chunks: list, statuses: dict | None = None) -> pd.DataFrame:
    statuses = statuses or {}
    rows = []
    for c in chunks:
        s = statuses.get(c.chunk_id)
        rows.append(
            {
                "chunk": chunk_name(c.title, c.position),
                "extraction": getattr(s, "status", "pending"),
                "text": c.text,
                "chunk_id": c.chunk_id,
            }
        )
    return pd.DataFrame(rows, columns=["chunk", "extraction", "text", "chunk_id"])


def triplets_frame(triplets: list, names: dict[str, str] | None = None) -> pd.DataFrame:
    """`names` (chunk id -> "title · chunk n") names each triplet's source chunks."""
    names = names or {}
    return pd.DataFrame(
        [
            {
                "id": t.triplet_id,
                "subject": t.subject,
                "predicate": t.predicate,
                "object": t.object,
                "chunks": ", ".join(names.get(c, c) for c in t.chunk_ids),
            }
            for t in triplets
        ],
        columns=["id", "subject", "predicate", "object", "chunks"],
    )


def questions_frame(questions: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"qid": q.qid, "question": q.question, "answer": q.answer, "type": q.qtype, "dataset": q.dataset}
            for q in questions
        ],
        columns=["qid", "question", "answer", "type", "dataset"],
    )
