from engine.vectors.base import VectorStore
from engine.vectors.faiss_store import FaissVectorStore, IndexFileError

__all__ = ["VectorStore", "FaissVectorStore", "IndexFileError"]
