"""Milvus vector store: the same `VectorStore` protocol on Milvus, embedded (milvus-lite, a file in
the corpus folder) or a standalone / cluster server by URI.

The vectors live in Milvus; SQLite stays the source of truth for texts, triplets, the graph and the
vectors themselves. What the FAISS file's header does for FAISS - tie the index to the database
state it was built from - a small sidecar file does here: `<which>.milvus.json` holds the URI,
the collection and the stamp, written after Milvus has flushed. A crash between the SQLite commit
and the Milvus write leaves an old stamp behind, and the corpus re-syncs the collection by ids.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np

from engine.core.serde import atomic_write_text
from engine.vectors.faiss_store import IndexFileError

_BATCH = 5000
LITE = "milvus-lite"
#: credentials of a Milvus server that requires them ("user:password" or an API key / token)
TOKEN_ENV = "TRIPLET_LENS_MILVUS_TOKEN"


def parse_uri(spec: str, corpus_dir: Path) -> str:
    """`milvus-lite` -> the embedded database file in the corpus folder; `milvus://host:port` and
    `http(s)://host:port` -> that server."""
    spec = spec.strip()
    if "@" in spec.split("://", 1)[-1].split("/", 1)[0]:
        # the URI is stored with the corpus: a password in it would be written to disk
        raise ValueError(
            "put Milvus credentials in the TRIPLET_LENS_MILVUS_TOKEN environment variable "
            "(user:password or an API key), not in the URI (it is stored with the corpus)"
        )
    if spec == LITE:
        return str(Path(corpus_dir) / "vectors.milvus.db")
    if spec.startswith("milvus://"):
        return "http://" + spec[len("milvus://") :]
    if spec.startswith(("http://", "https://")):
        return spec
    raise ValueError(f"unknown vector backend {spec!r}: use '' (FAISS files), 'milvus-lite' or milvus://host:19530")


def release(spec: str, corpus_dir: Path) -> None:
    """Stop this process's embedded Milvus for a corpus, freeing its file for other processes
    (milvus-lite serves one database file from one process at a time)."""
    if spec.strip() != LITE:
        return
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(parse_uri(spec, corpus_dir))


def _client(uri: str, where: str = "the corpus"):
    """A client of `uri`. A server's address is stored with the corpus, so it is data: connected to
    only when the person running the engine named it (engine.llm.endpoints), since the connection
    carries the Milvus token, the corpus's vectors and every question's."""
    if not uri.endswith(".db"):
        from engine.llm.endpoints import check_stored

        check_stored("vectors", uri, where)
    try:
        from pymilvus import MilvusClient
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the Milvus backend needs pymilvus (and milvus-lite for the embedded engine)") from exc
    token = os.environ.get(TOKEN_ENV, "")  # read per connection, never stored
    return MilvusClient(uri, token=token) if token and not uri.endswith(".db") else MilvusClient(uri)


class MilvusVectorStore:
    kind = "milvus"

    def __init__(self, client, collection: str, dim: int, uri: str = ""):
        self.client, self.collection, self.dim, self.uri = client, collection, dim, uri
        if not client.has_collection(collection):
            from pymilvus import DataType, MilvusClient

            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.INT64, is_primary=True)
            schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
            params = client.prepare_index_params()
            # exact search embedded; a server picks its own index for the collection's size
            params.add_index(
                field_name="vec", index_type="FLAT" if uri.endswith(".db") else "AUTOINDEX", metric_type="IP"
            )
            client.create_collection(collection, schema=schema, index_params=params)
        else:
            client.load_collection(collection)  # an existing collection opens released

    @classmethod
    def connect(cls, uri: str, collection: str, dim: int, client=None) -> MilvusVectorStore:
        return cls(client or _client(uri), collection, dim, uri)

    def __len__(self) -> int:
        return int(self.client.get_collection_stats(self.collection)["row_count"])

    def add(self, ids: np.ndarray, vecs: np.ndarray) -> None:
        """Insert (upsert: re-adding an id after a crash replaces it instead of duplicating it)."""
        if len(ids) == 0:
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(ids), self.dim)
        for i in range(0, len(ids), _BATCH):
            rows = [{"id": int(k), "vec": v.tolist()} for k, v in zip(ids[i : i + _BATCH], vecs[i : i + _BATCH])]
            self.client.upsert(self.collection, rows)

    def remove(self, ids: np.ndarray) -> None:
        id_list = [int(i) for i in ids]
        for i in range(0, len(id_list), _BATCH):
            self.client.delete(self.collection, ids=id_list[i : i + _BATCH])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        n = len(queries)
        scores, ids = np.zeros((n, max(k, 0)), np.float32), -np.ones((n, max(k, 0)), np.int64)
        if k <= 0 or n == 0:
            return scores, ids
        res = self.client.search(
            self.collection, data=queries.tolist(), limit=k, output_fields=["id"], search_params={"metric_type": "IP"}
        )
        for row, hits in enumerate(res):
            for j, hit in enumerate(list(hits)[:k]):
                ids[row, j] = int(hit["id"])
                scores[row, j] = float(hit["distance"])
        return scores, ids

    def _iterate(self, fields: list[str]):
        # milvus-lite lacks the timestamp call the iterator asks for first and falls back to the
        # client's clock: both sides log that at every call; it is not an error for us
        for name in ("pymilvus.client.iterator.query_iterator", "grpc._server"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        it = self.client.query_iterator(
            self.collection, batch_size=_BATCH, filter="id >= -9223372036854775807", output_fields=fields
        )
        try:
            while True:
                batch = it.next()
                if not batch:
                    return
                yield from batch
        finally:
            it.close()

    def ids(self) -> np.ndarray:
        return np.array(sorted(int(r["id"]) for r in self._iterate(["id"])), dtype=np.int64)

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        rows = sorted(((int(r["id"]), r["vec"]) for r in self._iterate(["id", "vec"])), key=lambda r: r[0])
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.array([r[1] for r in rows], dtype=np.float32).reshape(len(rows), self.dim)
        return ids, vecs

    def save(self, path: Path, stamp: str) -> None:
        """Flush Milvus, then record the stamp in the sidecar file `path`."""
        self.client.flush(self.collection)
        atomic_write_text(
            Path(path),
            json.dumps(
                {
                    "collection": self.collection,
                    "stamp": stamp,
                    "uri": self.uri if not self.uri.endswith(".db") else LITE,
                }
            ),
        )

    @staticmethod
    def read_stamp(path: Path) -> str:
        try:
            return str(json.loads(Path(path).read_text(encoding="utf-8"))["stamp"])
        except (OSError, ValueError, KeyError, TypeError):
            raise IndexFileError(f"milvus stamp file {path} is missing or unreadable") from None
