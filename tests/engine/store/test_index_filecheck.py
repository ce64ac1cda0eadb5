"""A cold open checks a fixed sample of an index file it checked whole before, not every byte
(engine/vectors/filecheck.py); a file written since, or damaged where a sample falls, gets the
whole check; `corpus check` always checks every byte."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from engine.vectors import FaissVectorStore, IndexFileError, faiss_store
from engine.vectors.filecheck import record_path

DIM, N = 256, 6000  # a 6 MB body: larger than what the sample covers


class CountingHash:
    """Stands in for the hashlib module inside faiss_store: records how many bytes each SHA-256 hashed."""

    def __init__(self):
        self.sizes: list[int] = []

    def sha256(self, data=b""):
        self.sizes.append(len(data))
        return hashlib.sha256(data)


@pytest.fixture()
def saved(tmp_path):
    rng = np.random.default_rng(0)
    store = FaissVectorStore(DIM)
    store.add(np.arange(N, dtype=np.int64), rng.standard_normal((N, DIM)).astype(np.float32))
    path = tmp_path / "chunks.index"
    store.save(path, "tok/chunks/1")
    return path


def _flip(path, at: int, keep_time: bool) -> None:
    st = os.stat(path)
    data = bytearray(path.read_bytes())
    for i in range(at, at + 64):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    if keep_time:  # bytes changed in place, time kept: as bit rot would
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_open_after_a_save_hashes_samples_not_the_whole_file(saved, monkeypatch):
    counting = CountingHash()
    monkeypatch.setattr(faiss_store, "hashlib", counting)
    store, stamp = FaissVectorStore.load(saved, DIM, "flat")
    assert stamp == "tok/chunks/1" and len(store) == N
    assert all(n < 1_000_000 for n in counting.sizes), counting.sizes  # no pass over the 6 MB body
    FaissVectorStore.load(saved, DIM, "flat", full_check=True)
    assert max(counting.sizes) > 6_000_000  # the full check did hash it whole


def test_a_file_written_since_its_record_is_checked_whole(saved):
    _flip(saved, saved.stat().st_size // 2, keep_time=False)
    with pytest.raises(IndexFileError, match="checksum"):
        FaissVectorStore.load(saved, DIM, "flat")


def test_bytes_flipped_in_place_are_caught_by_a_sample_or_by_the_full_check(saved):
    size = saved.stat().st_size
    _flip(saved, size - 5000, keep_time=True)  # inside the last MiB: sampled
    with pytest.raises(IndexFileError, match="checksum"):
        FaissVectorStore.load(saved, DIM, "flat")


def test_bytes_flipped_between_samples_escape_the_open_but_not_corpus_check(saved):
    from engine.vectors.filecheck import _BLOCK, _BLOCKS, _EDGE

    body = saved.stat().st_size - faiss_store._HEADER.size
    assert (body - 2 * _EDGE) // _BLOCKS > _BLOCK + 200  # a gap between the first two sampled blocks
    at = faiss_store._HEADER.size + _EDGE + _BLOCK + 100  # in that gap
    _flip(saved, at, keep_time=True)
    FaissVectorStore.load(saved, DIM, "flat")  # the documented limit of a sampled check
    with pytest.raises(IndexFileError, match="checksum"):
        FaissVectorStore.load(saved, DIM, "flat", full_check=True)


def test_without_a_record_the_open_checks_whole_and_records_it(saved, monkeypatch):
    record_path(saved).unlink()
    counting = CountingHash()
    monkeypatch.setattr(faiss_store, "hashlib", counting)
    FaissVectorStore.load(saved, DIM, "flat")  # record=False (read-only corpus): nothing written
    assert max(counting.sizes) > 6_000_000 and not record_path(saved).exists()
    FaissVectorStore.load(saved, DIM, "flat", record=True)
    assert record_path(saved).exists()
    counting.sizes.clear()
    FaissVectorStore.load(saved, DIM, "flat")
    assert all(n < 1_000_000 for n in counting.sizes)
