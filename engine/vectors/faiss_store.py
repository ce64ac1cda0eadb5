"""FAISS vector store: exact inner product (default), HNSW, or IVF (inverted lists over k-means
cells, the `auto` kind for large corpora: it trains on a sample and builds in seconds where HNSW
takes most of an hour at a million vectors on one core).

The file format is one file: a 104-byte header (magic, SHA-256 of the body, stamp) followed by
the serialized index. The stamp ties the file to the database state it was built from (the corpus's
random token, which index it is, and the random generation the database drew at its last write):
when they disagree - a crash between the database commit and the index save, a database copied
back from a backup or rolled back by a lost WAL, an index file from another corpus or swapped with
its sibling - the corpus rebuilds the index from the vectors stored in SQLite, no re-embedding. The
checksum catches overwritten vector bytes behind an intact header. Writes go to a temporary file
that is renamed over the old one, so the previous index survives a crash mid-write.
"""
from __future__ import annotations

import hashlib
import math
import struct
from pathlib import Path

import numpy as np

from engine.serde import atomic_write_bytes

_MAGIC = b"TLVECv2\x00"
_HEADER = struct.Struct("<8s32s64s")


class IndexFileError(RuntimeError):
    pass


def _faiss():
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the vector index needs faiss: pip install faiss-cpu") from exc
    return faiss


KINDS = ("flat", "hnsw", "ivf")
#: IVF search scans this share of the cells (at least IVF_MIN_PROBE of them)
IVF_PROBE_SHARE = 1 / 32
IVF_MIN_PROBE = 8


def ivf_cells(n: int) -> int:
    """Cells of an IVF index over n vectors: ~sqrt(n), with at least 39 training points a cell."""
    return max(1, min(int(round(math.sqrt(max(n, 1)))), n // 39))


class FaissVectorStore:
    """`kind`: `flat` (exact inner product), `hnsw` or `ivf` (approximate, for large corpora).
    An IVF index is trained on the first vectors added (sized for `expected` vectors when the
    caller knows how many will follow); its vectors are stored whole (IVF-Flat), so scores are
    exact and only the cells scanned are approximate."""

    def __init__(self, dim: int, kind: str = "flat", hnsw_m: int = 32, index=None, expected: int = 0):
        if kind not in KINDS:
            raise ValueError(f"unknown index kind {kind!r}: use 'flat', 'hnsw' or 'ivf'")
        faiss = _faiss()
        self.dim = dim
        self.kind = kind
        self.expected = expected
        if index is None and kind != "ivf":  # IVF: created at the first add, when its size is known
            if kind == "flat":
                base = faiss.IndexFlatIP(dim)
            else:
                base = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
                base.hnsw.efSearch = 128
            index = faiss.IndexIDMap2(base)
        self._index = index

    def _new_ivf(self, train: np.ndarray):
        """An IVF-Flat index with ~sqrt(expected) cells, trained on (a sample of) `train`. It keeps
        its own ids (an id map over IVF would go wrong on remove: IVF does not renumber)."""
        faiss = _faiss()
        cells = ivf_cells(max(self.expected, len(train)))
        cells = min(cells, max(1, len(train) // 39))
        index = faiss.index_factory(self.dim, f"IVF{cells},Flat", faiss.METRIC_INNER_PRODUCT)
        sample = train
        if len(train) > 64 * cells:  # k-means on a sample: seconds, not minutes
            pick = np.random.default_rng(0).choice(len(train), 64 * cells, replace=False)
            sample = train[np.sort(pick)]
        index.cp.max_points_per_centroid = 64
        index.train(np.ascontiguousarray(sample))
        index.nprobe = min(cells, max(IVF_MIN_PROBE, int(cells * IVF_PROBE_SHARE)))
        return index

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    def add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        if len(ids) == 0:
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(ids), self.dim)
        if self._index is None:
            self._index = self._new_ivf(vecs)
        self._index.add_with_ids(vecs, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        if len(ids) == 0 or self._index is None:
            return
        if self.kind == "hnsw":
            # HNSW graphs cannot drop nodes; the corpus rebuilds the index from stored vectors.
            raise NotImplementedError("HNSW indexes are rebuilt, not edited")
        self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        if len(self) == 0 or k <= 0:
            n = len(queries)
            return np.zeros((n, max(k, 0)), np.float32), -np.ones((n, max(k, 0)), np.int64)
        return self._index.search(queries, min(k, len(self)))

    def _ivf_lists(self):
        """(ids, vectors) of each non-empty IVF cell."""
        faiss = _faiss()
        lists = self._index.invlists
        for cell in range(self._index.nlist):
            n = lists.list_size(cell)
            if n:
                ids = faiss.rev_swig_ptr(lists.get_ids(cell), n).astype(np.int64)
                codes = faiss.rev_swig_ptr(lists.get_codes(cell), n * self.dim * 4)
                yield ids, np.frombuffer(codes.tobytes(), np.float32).reshape(n, self.dim)

    def ids(self) -> np.ndarray:
        faiss = _faiss()
        if self._index is None:
            return np.zeros(0, np.int64)
        if self.kind == "ivf":
            return np.concatenate([i for i, _ in self._ivf_lists()] or [np.zeros(0, np.int64)])
        return faiss.vector_to_array(self._index.id_map).astype(np.int64)

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of everything stored, in insertion order (IVF: cell by cell), for
        integrity checks."""
        faiss = _faiss()
        if self.kind == "ivf":
            parts = list(self._ivf_lists())
            if not parts:
                return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
            return np.concatenate([i for i, _ in parts]), np.concatenate([v for _, v in parts])
        ids = self.ids()
        if not len(ids):
            return ids, np.zeros((0, self.dim), np.float32)
        inner = faiss.downcast_index(self._index.index)
        return ids, inner.reconstruct_n(0, len(ids)).reshape(len(ids), self.dim)

    def save(self, path: Path, stamp: str) -> None:
        faiss = _faiss()
        if self._index is None:  # an IVF index nothing was added to yet: an empty untrained one
            self._index = faiss.index_factory(self.dim, "IVF1,Flat", faiss.METRIC_INNER_PRODUCT)
        body = faiss.serialize_index(self._index).tobytes()
        raw_stamp = stamp.encode("utf-8")
        if len(raw_stamp) > 64:
            raise ValueError(f"index stamp longer than 64 bytes: {stamp!r}")
        header = _HEADER.pack(_MAGIC, hashlib.sha256(body).digest(), raw_stamp)
        atomic_write_bytes(Path(path), header + body)

    @classmethod
    def load(cls, path: Path, dim: int | None, kind: str | None) -> tuple["FaissVectorStore", str]:
        """Return (store, stamp). Raises IndexFileError on a missing, foreign or broken file, or one
        whose dimension is not `dim` or whose kind is not `kind` (None accepts any)."""
        faiss = _faiss()
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise IndexFileError(f"cannot read index {path}: {exc.strerror}") from None
        if len(raw) < _HEADER.size:
            raise IndexFileError(f"index {path} is truncated")
        magic, digest, raw_stamp = _HEADER.unpack_from(raw)
        if magic != _MAGIC:
            raise IndexFileError(f"{path} is not a Triplet Lens index file (or one of an older format)")
        body = memoryview(raw)[_HEADER.size:]
        if hashlib.sha256(body).digest() != digest:
            raise IndexFileError(f"index {path} does not match its checksum (bytes changed after it was written)")
        try:
            index = faiss.deserialize_index(np.frombuffer(body, dtype=np.uint8))
        except Exception as exc:  # faiss raises RuntimeError with C++ text
            raise IndexFileError(f"index {path} is corrupted: {str(exc).splitlines()[0][:200]}") from None
        if dim is not None and index.d != dim:
            raise IndexFileError(f"index {path} has dimension {index.d}, the corpus embedder has {dim}")
        top = faiss.downcast_index(index)
        if isinstance(top, faiss.IndexIVF):
            index.this.disown()  # the downcast wrapper owns the index from here (else it dangles)
            top.this.own(True)
            actual, index = "ivf", top
            if not top.is_trained:  # saved empty: trained at the first add
                index = None
        else:
            actual = "hnsw" if "HNSW" in type(faiss.downcast_index(index.index)).__name__ else "flat"
        if kind is not None and actual != kind:  # an `auto` corpus past its threshold: rebuilt as the other
            raise IndexFileError(f"index {path} is {actual}, the corpus wants {kind}")
        return cls(dim or top.d, actual, index=index), raw_stamp.rstrip(b"\x00").decode("utf-8", "replace")
