"""The read interface the methods need from a corpus (`CorpusView`), as a `typing.Protocol`.

Methods are typed against this protocol and import nothing else of the store: the SQLite corpus
(engine/store/corpus.py) implements it, and so does the in-memory corpus the tests use
(tests/doubles.py). It is also the seam for other backends: a corpus whose vectors live in Milvus
implements the same calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from engine.core.phrases import SYNONYM_THRESHOLD, SYNONYM_TOPK, PhraseGraph
from engine.core.progress import ProgressCallback, no_progress
from engine.core.types import Chunk, Triplet

if TYPE_CHECKING:
    import networkx as nx

    from engine.store.settings import CorpusCounts


@runtime_checkable
class CorpusView(Protocol):
    """What a method may ask of a corpus. Vectors are unit length (inner product = cosine)."""

    @property
    def embedder(self) -> Any:
        """The corpus's embedder (`engine.embed.Embedder`): questions are encoded with it."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit rows, with the embedder the corpus was built with."""

    def search_chunks(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Per query, up to k (chunk_id, cosine) best first."""

    def search_propositions(self, query_vecs: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """Per query, up to k (triplet_id, cosine) best first."""

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks in the order asked (unknown ids left out)."""

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every chunk (of one document), in document order (BM25 indexes them once per corpus state)."""

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of the chunks, in the order asked."""

    def proposition_vectors(self, triplet_ids: Sequence[int]) -> np.ndarray:
        """Stored vectors of the propositions, in the order asked."""

    def get_triplets(self, triplet_ids: Sequence[int]) -> list[Triplet]:
        """Triplets by id, each with every chunk stating it."""

    def triplets(self, chunk_ids: Sequence[str] | None = None) -> list[Triplet]:
        """Triplets stated by these chunks (all when None)."""

    def entity_neighbourhood(
        self, entities: Iterable[str], hops: int, per_entity: int = -1, keep: Iterable[int] = ()
    ) -> nx.MultiGraph:
        """The entity graph within `hops` of `entities` (normalized names): nodes are entities, one
        edge per triplet keyed by triplet id with subject, predicate, object and chunk_ids. With
        `per_entity` >= 0, at most that many edges of each entity are read: its first by triplet id;
        the triplets in `keep` are read whatever the cap, and `graph.graph["entity_degrees"]` gives
        the true degree of each entity the cap cut."""

    def entity_graph(self) -> nx.MultiGraph:
        """The whole entity graph (small corpora and views only; methods use the neighbourhood)."""

    def phrase_graph(
        self,
        topk: int = SYNONYM_TOPK,
        threshold: float = SYNONYM_THRESHOLD,
        on_progress: ProgressCallback = no_progress,
    ) -> PhraseGraph:
        """HippoRAG 2's phrase nodes (processed subjects and objects) and synonym edges, in step with
        the triplets; the SQLite corpus keeps them (engine/store/phrase_graph.py) and reports on
        `on_progress` when it has to build or update them first."""

    def counts(self) -> CorpusCounts:
        """Documents, chunks, triplets, questions and extraction progress."""
