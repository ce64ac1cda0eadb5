"""A corpus's fixed settings and the records it reports."""

from __future__ import annotations

from dataclasses import dataclass

from engine.core.chunking import ChunkingSettings
from engine.store.errors import CorpusError

#: `auto` indexes switch from exact search to HNSW at this many vectors. Exact search leaves the CPU
#: cache between 20k and 30k 384-d vectors (one core: 0.52 ms a query at 10k, 0.93 at 20k, 2.4 at
#: 30k, 4.1 at 40k); HNSW's search time barely grows with n, with recall@10 >= 0.95 on real text
#: (bench/scale_bench.py, docs/scaling.md).
AUTO_HNSW_AT = 20_000


@dataclass(frozen=True)
class CorpusSettings:
    chunking: ChunkingSettings = ChunkingSettings()
    embedder: str = "bundled"
    """Embedder spec (see engine.embed.make_embedder); fixed at creation: vectors must agree."""
    index_kind: str = "auto"
    """`flat` (exact inner product), `hnsw` or `ivf` (approximate, for large corpora), or `auto`:
    exact below AUTO_HNSW_AT vectors, HNSW from there (recall@10 against exact on real text:
    docs/scaling.md; `corpus show` measures it on the corpus's own vectors)."""
    embedder_api_base: str = ""
    """Endpoint for a `litellm:` embedder served by an OpenAI-compatible server (never a key)."""
    sentence_vectors: bool = True
    """Embed each chunk's sentences when it is added and store them with it, so the offline answer
    step embeds only the question (20-50x faster answer step; ~2-3x the embedding time of indexing,
    ~3 KB of disk a chunk: docs/scaling.md). Off: they are embedded when a question first shows them."""
    vectors: str = ""
    """Where the vector indexes live: '' = FAISS files in the corpus folder (`index_kind`);
    `milvus-lite` = embedded Milvus in the corpus folder; `milvus://host:19530` = a Milvus server."""

    def __post_init__(self) -> None:
        if self.index_kind not in ("flat", "hnsw", "ivf", "auto"):
            raise CorpusError(f"unknown index kind {self.index_kind!r}: use 'auto', 'flat', 'hnsw' or 'ivf'")
        if self.vectors and not (self.vectors == "milvus-lite" or self.vectors.startswith(("milvus://", "http"))):
            raise CorpusError(
                f"unknown vector backend {self.vectors!r}: use '' (FAISS files), 'milvus-lite' or milvus://host:19530"
            )


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    title: str
    source: str
    kind: str
    n_chunks: int


@dataclass(frozen=True)
class CorpusCounts:
    documents: int
    chunks: int
    triplets: int
    questions: int
    extracted: int
    pending: int
    failed: int
