"""HippoRAG 2's phrase nodes and synonym edges: the authors' rules, shared by the store (which keeps
the phrase graph with the corpus: engine/store/phrase_graph.py) and the method
(engine/methods/hipporag2/).

Restated from OSU-NLP-Group/HippoRAG (MIT): `utils/misc_utils.py` `text_processing` and
`HippoRAG.add_synonymy_edges`:

* a phrase node is a triplet's subject or object after `text_processing` (lower case, every
  character that is not a letter, a digit or a space turned into a space, stripped);
* each phrase of more than two alphanumerics gets synonym edges to its nearest phrases (cosine of
  their embeddings, `synonymy_edge_topk` = 2047 nearest looked at) while the cosine is at least the
  threshold (0.8), at most 101 of them (the authors break once `num_nns > 100`), never to itself or
  to the empty phrase; the edge's weight is the cosine.

A phrase's edges depend only on the set of phrases and their vectors, so a row can be recomputed
alone: the store updates the rows a change touches instead of the whole graph.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: The authors' `BaseConfig` defaults for synonym edges (`synonymy_edge_topk`, `..._sim_threshold`).
SYNONYM_TOPK = 2047
SYNONYM_THRESHOLD = 0.8
MAX_SYNONYMS = 100  # the authors break once `num_nns > 100`: at most 101 synonym edges per phrase
_NOT_ALNUM = re.compile("[^A-Za-z0-9]")


def text_processing(text: str) -> str:
    """The authors' normalization of triplet parts (and so of phrase nodes)."""
    return re.sub("[^A-Za-z0-9 ]", " ", str(text).lower()).strip()


def has_synonyms(phrase: str) -> bool:
    """Only phrases of more than two alphanumerics look for synonyms (the authors' rule)."""
    return len(_NOT_ALNUM.sub("", phrase)) > 2


def synonym_row(
    i: int, sims: np.ndarray, phrases: Sequence[str], topk: int, threshold: float
) -> list[tuple[int, float]]:
    """Phrase `i`'s synonym edges `(j, cosine)` in the authors' order, from `sims` (its cosine with
    every phrase)."""
    if not has_synonyms(phrases[i]):
        return []
    n = len(phrases)
    k = min(topk, n)
    top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
    top = top[np.argsort(-sims[top], kind="stable")]
    out: list[tuple[int, float]] = []
    for j in top.tolist():
        if sims[j] < threshold or len(out) > MAX_SYNONYMS:
            break
        if j != i and phrases[j] != "":
            out.append((j, float(sims[j])))
    return out


def synonym_rows(
    phrases: Sequence[str],
    vecs: np.ndarray,
    topk: int,
    threshold: float,
    rows: Sequence[int] | None = None,
    batch: int = 1000,
    on_batch: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[int, list[tuple[int, float]]]]:
    """`(i, phrase i's synonym edges)` for each row of `rows` (every phrase when None), their
    cosines computed a batch of rows at a time against every phrase (memory: batch x phrases)."""
    todo = list(range(len(phrases))) if rows is None else list(rows)
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        sims = vecs[part] @ vecs.T
        for row, i in enumerate(part):
            yield i, synonym_row(i, sims[row], phrases, topk, threshold)
        if on_batch is not None:
            on_batch(min(start + batch, len(todo)), len(todo))


def synonym_pairs(
    phrases: Sequence[str], vecs: np.ndarray, topk: int = SYNONYM_TOPK, threshold: float = SYNONYM_THRESHOLD
) -> list[tuple[str, str, float]]:
    """Every synonym edge `(phrase, neighbour, cosine)` of `phrases` (with unit vectors `vecs`)."""
    if not len(phrases):
        return []
    return [(phrases[i], phrases[j], s) for i, edges in synonym_rows(phrases, vecs, topk, threshold) for j, s in edges]


def rows_to_redo(
    phrases: Sequence[str],
    vecs: np.ndarray,
    new: Sequence[int],
    kept: Iterable[tuple[str, str, float]],
    threshold: float,
) -> list[int]:
    """The rows of `phrases` (now) whose synonym edges can differ from `kept` (the edges of the
    phrases before): the new phrases' rows, the rows with an edge to a phrase gone since, and the
    rows with a new phrase at or above the threshold: the only ways a row's list can change."""
    index = {p: i for i, p in enumerate(phrases)}
    redo = set(new)
    redo.update(index[a] for a, b, _ in kept if a in index and b not in index)
    if len(new):
        fresh = set(new)
        old = np.array([i for i in range(len(phrases)) if i not in fresh], dtype=np.int64)
        for start in range(0, len(old), 4096):
            part = old[start : start + 4096]
            near = (vecs[part] @ vecs[list(new)].T).max(axis=1) >= threshold
            redo.update(part[near].tolist())
    return sorted(redo)


def merged_synonyms(
    phrases: Sequence[str], found: dict[int, list[tuple[int, float]]], kept: Iterable[tuple[str, str, float]]
) -> tuple[tuple[str, str, float], ...]:
    """The edges after an update: the kept rows not redone (between phrases still there) and the
    redone rows `found` (row -> its edges)."""
    index = {p: i for i, p in enumerate(phrases)}
    old = [(a, b, s) for a, b, s in kept if a in index and b in index and index[a] not in found]
    return tuple(old + [(phrases[i], phrases[j], s) for i, row in found.items() for j, s in row])


@dataclass(frozen=True)
class PhraseGraph:
    """A corpus's phrase nodes (sorted, as the authors' `np.unique`) and synonym edges, as the
    store keeps them (or as computed for a corpus that cannot keep them)."""

    phrases: tuple[str, ...]
    synonyms: tuple[tuple[str, str, float], ...]  # (phrase, neighbour, cosine), each row in the authors' order
    topk: int = SYNONYM_TOPK
    threshold: float = SYNONYM_THRESHOLD
    stamp: str = ""  # the corpus state it is in step with ("" when computed for a view that keeps nothing)
    how: str = ""  # what producing it took: "stored", "updated: 12 phrases embedded, 40 rows", "computed in memory"
    seconds: float = 0.0
