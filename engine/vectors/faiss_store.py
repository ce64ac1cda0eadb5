"""FAISS vector store: exact inner product (default), HNSW (the `auto` kind for large corpora:
search time nearly flat in n, recall@10 >= 0.95 on real text; deletes are tombstones, engine/vectors/
hnsw.py), or IVF (inverted lists over k-means cells: builds faster, searches a share of the vectors).

The file format is one file: a 104-byte header (magic, SHA-256 of the body, stamp) followed by
the serialized index. The stamp ties the file to the database state it was built from (the corpus's
random token, which index it is, and the random generation the database drew at its last write):
when they disagree - a crash between the database commit and the index save, a database copied
back from a backup or rolled back by a lost WAL, an index file from another corpus or swapped with
its sibling - the corpus rebuilds the index from the vectors stored in SQLite, no re-embedding. The
checksum catches overwritten vector bytes behind an intact header. Writes go to a temporary file
that is renamed over the old one, so the previous index survives a crash mid-write.

Appends are saved as a delta file beside the index (`<name>.delta`: the vectors added since the
index file was written, with the new stamp, its own checksum and the checksum of the index file it
extends), so adding 1% to a large corpus writes 1% of its vectors, not the whole index. The delta is
folded into a new index file (and removed) after a remove, or when it grows past DELTA_SHARE of the
index; a delta that does not extend the index file beside it (a crash between writing a new index
file and removing the old delta) is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import struct
from pathlib import Path

import numpy as np

from engine.core.faults import fault_point
from engine.core.serde import atomic_write_bytes
from engine.vectors import filecheck, hnsw

_MAGIC = b"TLVECv2\x00"
_HEADER = struct.Struct("<8s32s64s")
_DELTA_MAGIC = b"TLVECd1\x00"
_DELTA_HEADER = struct.Struct("<8s32s32s64sq")  # magic, own digest, index file digest, stamp, count
#: a delta past this share of the index file's vectors is folded into a new index file
DELTA_SHARE = 0.125


def delta_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + ".delta")


class IndexFileError(RuntimeError):
    pass


def _faiss():
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the vector index needs faiss: pip install faiss-cpu") from exc
    return faiss


#: below this many queries a search runs on the calling thread alone: faiss parallelises over
#: queries, so one question's search gains nothing from OpenMP's team, while the team's start and
#: spin-wait cost ~3 ms of every core (issue 30: a question's wall time 30 -> 21 ms, its CPU time
#: halved, which is what concurrent visitors share)
ONE_THREAD_BELOW = 16


@contextlib.contextmanager
def _one_thread_for(n_queries: int):
    if n_queries >= ONE_THREAD_BELOW:
        yield
        return
    faiss = _faiss()
    before = faiss.omp_get_max_threads()  # OpenMP's thread count is per calling thread
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


KINDS = ("flat", "hnsw", "ivf")
#: IVF cells: IVF_CELLS_PER_ROOT x sqrt(n). Finer cells than the textbook sqrt(n) cost nothing at
#: search time (the cell centroids are scanned exactly: 4,000 at a million vectors) and let a search
#: reach the recall below by scanning fewer vectors (bench/scale_bench.py --real-recall).
IVF_CELLS_PER_ROOT = 4.0
#: IVF search scans this share of the cells (at least IVF_MIN_PROBE of them): chosen on real text
#: (MiniLM vectors of the shared QA paragraphs, sentences and propositions) for recall@10 >= 0.95
#: against exact search (docs/scaling.md): 0.965-0.969 at 10-11k vectors with 4 sqrt(n) cells, rising
#: with n; a twelfth gave 0.93-0.95, and 1/32 of sqrt(n) cells, the setting before, ~0.76.
IVF_PROBE_SHARE = 1 / 8
IVF_MIN_PROBE = 8
#: an IVF index whose vectors outgrew this many times the size its cells were made for is rebuilt
#: with new cells: its cells would otherwise grow ever fuller (each search scanning more vectors)
#: and stay placed for the vectors it was trained on
IVF_RETRAIN_FACTOR = 4.0
#: recall@10 against exact search of each kind at the store's parameters, measured on real text
#: (`bench/scale_bench.py --real-recall`, 300 questions and 200 held-out texts as queries): HNSW the
#: lowest measured with its efSearch schedule (engine/vectors/hnsw.py) on up to 228,078 MiniLM vectors
#: of the shared sets' texts and their 8/12/20-word windows: 0.982 at 100k (efSearch 96; 0.991 at
#: 32.5k, 0.989 at 228k with 192); IVF on 11,414 vectors, with the cells per sqrt(n) and the share
#: probed at a million vectors. `corpus show` measures the corpus's own index instead
#: (engine/vectors/selfcheck.py)
MEASURED_RECALL_AT_10 = {"flat": 1.0, "ivf": 0.969, "hnsw": 0.982}


def ivf_cells(n: int) -> int:
    """Cells of an IVF index over n vectors: ~IVF_CELLS_PER_ROOT x sqrt(n), with at least 39
    training points a cell."""
    return max(1, min(int(round(IVF_CELLS_PER_ROOT * math.sqrt(max(n, 1)))), n // 39))


def ivf_probes(cells: int) -> int:
    """Cells an IVF search scans: IVF_PROBE_SHARE of them (set again on every load, so an index
    saved with another share searches with this one)."""
    return min(cells, max(IVF_MIN_PROBE, int(round(cells * IVF_PROBE_SHARE))))


def _atomic_write_parts(path: Path, *parts) -> None:
    """serde.atomic_write_bytes for data given in parts (header, body), so the body - the whole
    index, 1.5 GB at a million 384-d vectors - is not copied once more to be joined to its header."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    # the writer's pid in the name: the sweep removes what a killed writer left (engine/integrity/interrupted.py)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            for i, part in enumerate(parts):
                fh.write(part)
                if i == 0:
                    fault_point("index.mid_write")
            fh.flush()
            os.fsync(fh.fileno())
        fault_point("index.before_rename")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def ivf_training_ids(ids: np.ndarray, expected: int) -> np.ndarray:
    """A random sample of `ids`, enough to train an IVF index for `expected` vectors."""
    want = min(len(ids), 64 * ivf_cells(expected))
    return np.sort(np.random.default_rng(0).choice(ids, want, replace=False)) if want < len(ids) else ids


class FaissVectorStore:
    """`kind`: `flat` (exact inner product), `hnsw` or `ivf` (approximate, for large corpora).
    An IVF index is trained on the first vectors added (sized for `expected` vectors when the
    caller knows how many will follow); its vectors are stored whole (IVF-Flat), so scores are
    exact and only the cells scanned are approximate."""

    def __init__(self, dim: int, kind: str = "flat", index=None, expected: int = 0):
        if kind not in KINDS:
            raise ValueError(f"unknown index kind {kind!r}: use 'flat', 'hnsw' or 'ivf'")
        faiss = _faiss()
        self.dim = dim
        self.kind = kind
        self.expected = expected
        if index is None and kind != "ivf":  # IVF: created at the first add, when its size is known
            index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim)) if kind == "flat" else hnsw.new_index(dim)
        self._index = index
        self._dead = hnsw.prepare_loaded(index) if kind == "hnsw" else 0  # HNSW tombstones
        # what the index file last saved or loaded holds: its path and digest, and the appends since
        self._base: tuple[Path, bytes] | None = None
        self._appended: list[tuple[np.ndarray, np.ndarray]] = []

    def _reserve(self, share: float) -> None:
        """Room for `share` more vectors in a loaded flat index: a deserialized vector buffer has no
        spare capacity, so the first add after a load would copy the whole index (0.2 s at 100k
        vectors, in every incremental add of a fresh process); the copy is made here, at load."""
        codes = _faiss().downcast_index(self._index.index).codes
        size = codes.size()
        if size and codes.is_owned:
            codes.resize(int(size * (1 + share)))
            codes.resize(size)  # the size back, the capacity kept

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
        index.nprobe = ivf_probes(cells)
        return index

    def train(self, sample: np.ndarray) -> None:
        """IVF: place the cells from `sample` (a random sample of the vectors to come: the first
        vectors added are otherwise used, which in insertion order may all be about one topic).
        Other kinds, or an IVF index already trained: nothing to do."""
        if self.kind == "ivf" and self._index is None and len(sample):
            self._index = self._new_ivf(np.ascontiguousarray(sample, dtype=np.float32).reshape(-1, self.dim))

    def __len__(self) -> int:
        """Live vectors (an HNSW graph's tombstones not counted)."""
        return 0 if self._index is None else int(self._index.ntotal) - self._dead

    def trained_for(self) -> int:
        """IVF: the vector count its cells were made for (the n whose `ivf_cells(n)` they are);
        0 for other kinds and an untrained index."""
        if self.kind != "ivf" or self._index is None:
            return 0
        cells = int(self._index.nlist)
        return max(int((cells / IVF_CELLS_PER_ROOT) ** 2), 39 * cells)

    def needs_retraining(self) -> bool:
        """IVF grown past `IVF_RETRAIN_FACTOR` times the size its cells were made for."""
        return bool(self.trained_for()) and len(self) > IVF_RETRAIN_FACTOR * self.trained_for()

    def add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        if len(ids) == 0:
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(ids), self.dim)
        if self._index is None:
            self._index = self._new_ivf(vecs)
        if self._base is not None:
            self._appended.append((np.array(ids, np.int64), vecs.copy()))
        self._index.add_with_ids(vecs, np.ascontiguousarray(ids, dtype=np.int64))
        if self.kind == "hnsw":  # a graph grown past a size step searches with a longer candidate list
            hnsw.fit_search(self._index)

    def remove(self, ids: np.ndarray) -> None:
        if len(ids) == 0 or self._index is None:
            return
        self._base = None  # the next save writes the whole index
        self._appended = []
        if self.kind == "hnsw":  # tombstones; NotImplementedError past their share: the corpus rebuilds
            self._dead = hnsw.bury(self._index, ids, self._dead)
            return
        self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        if len(self) == 0 or k <= 0:
            n = len(queries)
            return np.zeros((n, max(k, 0)), np.float32), -np.ones((n, max(k, 0)), np.int64)
        with _one_thread_for(len(queries)):
            if self.kind == "hnsw":
                return hnsw.search(self._index, queries, k, self._dead)
            return self._index.search(queries, min(k, len(self)))

    def get(self, ids: np.ndarray) -> np.ndarray:
        """The stored vectors of `ids`, in that order, read from memory (the corpus would read a
        random database row per vector). IVF gets a hash map from id to slot at its first call.
        Raises KeyError when an id is not in the index."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if not len(ids):
            return np.zeros((0, self.dim), np.float32)
        if self._index is None:
            raise KeyError("the index is empty")
        if self.kind == "ivf" and self._index.direct_map.type == _faiss().DirectMap.NoMap:
            self._index.set_direct_map_type(_faiss().DirectMap.Hashtable)
        try:
            return self._index.reconstruct_batch(ids).reshape(len(ids), self.dim)
        except RuntimeError:  # faiss reports an unknown id as a C++ error
            raise KeyError("an id is not in the index") from None

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
        ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return ids[ids >= 0] if self._dead else ids

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of everything stored, in insertion order (IVF: cell by cell), for
        integrity checks."""
        faiss = _faiss()
        if self.kind == "ivf":
            parts = list(self._ivf_lists())
            if not parts:
                return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
            return np.concatenate([i for i, _ in parts]), np.concatenate([v for _, v in parts])
        slots = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        if not len(slots):
            return slots, np.zeros((0, self.dim), np.float32)
        inner = faiss.downcast_index(self._index.index)
        vecs = inner.reconstruct_n(0, len(slots)).reshape(len(slots), self.dim)
        live = slots >= 0  # HNSW tombstones left out
        return (slots[live], vecs[live]) if self._dead else (slots, vecs)

    def save(self, path: Path, stamp: str) -> None:
        """Write the appends since the index file as its delta when that is all that changed (and
        the delta stays small), else the whole index (and remove any delta)."""
        faiss = _faiss()
        path = Path(path)
        raw_stamp = stamp.encode("utf-8")
        if len(raw_stamp) > 64:
            raise ValueError(f"index stamp longer than 64 bytes: {stamp!r}")
        n_delta = sum(len(i) for i, _ in self._appended)
        share = hnsw.HNSW_DELTA_SHARE if self.kind == "hnsw" else DELTA_SHARE
        if self._base is not None and self._base[0] == path and n_delta <= share * max(len(self) - n_delta, 1):
            ids = np.concatenate([i for i, _ in self._appended] or [np.zeros(0, np.int64)])
            vecs = np.concatenate([v for _, v in self._appended] or [np.zeros((0, self.dim), np.float32)])
            body = ids.astype("<i8").tobytes() + vecs.astype("<f4").tobytes()
            header = _DELTA_HEADER.pack(_DELTA_MAGIC, hashlib.sha256(body).digest(), self._base[1], raw_stamp, len(ids))
            atomic_write_bytes(delta_path(path), header + body)
            return
        if self._index is None:  # an IVF index nothing was added to yet: an empty untrained one
            self._index = faiss.index_factory(self.dim, "IVF1,Flat", faiss.METRIC_INNER_PRODUCT)
        whole = memoryview(faiss.serialize_index(self._index))  # written as is: no copy of a GB-size buffer
        digest = hashlib.sha256(whole).digest()
        _atomic_write_parts(path, _HEADER.pack(_MAGIC, digest, raw_stamp), whole)
        filecheck.write_record(path, digest, whole)  # the next open checks samples, not every byte
        delta_path(path).unlink(missing_ok=True)
        self._base, self._appended = (path, digest), []

    @classmethod
    def load(
        cls, path: Path, dim: int | None, kind: str | None, *, full_check: bool = False, record: bool = False
    ) -> tuple[FaissVectorStore, str]:
        """Return (store, stamp). Raises IndexFileError on a missing, foreign or broken file, or one
        whose dimension is not `dim` or whose kind is not `kind` (None accepts any).

        The body's checksum is checked whole with `full_check` (`corpus check`), or when the file is
        not the one last checked whole (engine/vectors/filecheck.py); else a fixed sample of it is,
        so a cold open does not hash gigabytes. `record`: note a whole check beside the file."""
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
        body = memoryview(raw)[_HEADER.size :]
        whole = full_check or not filecheck.trusted(Path(path), len(raw), digest, body)
        if whole and hashlib.sha256(body).digest() != digest:
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
            top.nprobe = ivf_probes(int(top.nlist))
            if not top.is_trained:  # saved empty: trained at the first add
                index = None
        else:
            actual = "hnsw" if "HNSW" in type(faiss.downcast_index(index.index)).__name__ else "flat"
        if kind is not None and actual != kind:  # an `auto` corpus past its threshold: rebuilt as the other
            raise IndexFileError(f"index {path} is {actual}, the corpus wants {kind}")
        store = cls(dim or top.d, actual, index=index)
        if actual == "flat":
            store._reserve(DELTA_SHARE)
        stamp = raw_stamp.rstrip(b"\x00").decode("utf-8", "replace")
        delta = _read_delta(Path(path), digest, store.dim)
        if delta is not None:
            store.add(delta[0], delta[1])
            stamp = delta[2]
        store._base = (Path(path), digest)
        store._appended = [] if delta is None else [(delta[0], delta[1])]
        if whole and record:
            filecheck.write_record(Path(path), digest, body)
        return store, stamp


def _read_delta(path: Path, base_digest: bytes, dim: int) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(ids, vectors, stamp) of the delta extending the index file of `base_digest`; None when
    there is none or it extends another index file (left over: ignored). Raises IndexFileError
    when it is damaged."""
    file = delta_path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexFileError(f"cannot read index delta {file}: {exc.strerror}") from None
    if len(raw) < _DELTA_HEADER.size:
        raise IndexFileError(f"index delta {file} is truncated")
    magic, digest, base, raw_stamp, count = _DELTA_HEADER.unpack_from(raw)
    if magic != _DELTA_MAGIC:
        raise IndexFileError(f"{file} is not a Triplet Lens index delta")
    if base != base_digest:
        return None
    body = memoryview(raw)[_DELTA_HEADER.size :]
    if hashlib.sha256(body).digest() != digest or len(body) != count * (8 + 4 * dim):
        raise IndexFileError(f"index delta {file} does not match its checksum (bytes changed after it was written)")
    ids = np.frombuffer(body[: count * 8], "<i8").astype(np.int64)
    vecs = np.frombuffer(body[count * 8 :], "<f4").reshape(count, dim).astype(np.float32)
    return ids, vecs, raw_stamp.rstrip(b"\x00").decode("utf-8", "replace")
