"""Indexing rate of the corpus store against raw `SentenceTransformer.encode` on the same texts.

    .venv/bin/python bench/index_bench.py [--docs 400]

Builds a corpus from the HotpotQA paragraphs in ../shared/data (or the bundled sample), timing
`Corpus.add_documents` (chunking + embedding + SQLite + FAISS save) and the proposition indexing of
triplets (store + embed + index), each against the bare encode of the same texts with the same
model and batch size, measured in the same process (baseline, store, baseline again; the baseline
is the mean of both, which evens out the noise of a shared machine). Prints the overhead ratio.
Target: the store adds under 10% to raw encoding time.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load_documents(n_docs: int):
    from engine.chunking import make_doc_id
    from engine.types import Document

    source = ROOT.parent / "shared" / "data" / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json"
    if source.is_file():
        corpus = json.loads(source.read_text(encoding="utf-8"))
        items = list(corpus.items())[:n_docs]
    else:  # the bundled sample, paragraphs deduplicated by title
        records = json.loads((ROOT / "sample_corpora" / "hotpotqa_30.json").read_text(encoding="utf-8"))
        items = list({t: s for r in records for t, s in r["context"]}.items())[:n_docs]
    return [Document(make_doc_id(t, "".join(s)), t, "".join(s), "bench", "hotpotqa", tuple(s)) for t, s in items]


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=400)
    args = ap.parse_args()

    from engine.chunking import chunk_document
    from engine.store import embedding_text
    from engine.embed import get_bundled_embedder
    from engine.llm.offline import OfflineReasoner
    from engine.store import Workspace
    from engine.types import ExtractionStatus

    emb = get_bundled_embedder()
    model = emb.model
    docs = load_documents(args.docs)
    texts = [embedding_text(c) for d in docs for c in chunk_document(d)]
    raw = lambda tx: model.encode(tx, batch_size=64, normalize_embeddings=True, show_progress_bar=False)  # noqa
    raw(texts[:64])  # warm-up

    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp), embedder=emb)
        corpus = ws.create("bench")
        b1 = timed(lambda: raw(texts))
        store_t = timed(lambda: corpus.add_documents(docs, batch_size=64))
        b2 = timed(lambda: raw(texts))
        base = (b1 + b2) / 2

        # propositions: offline-extracted triplets, stored without vectors, then embedded + indexed
        reasoner = OfflineReasoner(emb)
        extracted = [(c, reasoner.extract(c.title, c.text)[0]) for c in corpus.chunks()]
        for chunk, triplets in extracted:
            corpus.store_extraction(chunk.chunk_id, triplets, ExtractionStatus(chunk.chunk_id, "done", "bench"))
        props = [t.proposition for t in corpus.triplets()]
        p1 = timed(lambda: raw(props))
        prop_t = timed(corpus.refresh_indexes)
        p2 = timed(lambda: raw(props))
        pbase = (p1 + p2) / 2

    print(f"| what | items | raw encode (s) | store (s) | items/s raw | items/s store | overhead |")
    print(f"|---|---|---|---|---|---|---|")
    print(f"| chunks | {len(texts)} | {base:.2f} | {store_t:.2f} | {len(texts) / base:.0f} | "
          f"{len(texts) / store_t:.0f} | {store_t / base - 1:+.1%} |")
    print(f"| propositions | {len(props)} | {pbase:.2f} | {prop_t:.2f} | {len(props) / pbase:.0f} | "
          f"{len(props) / prop_t:.0f} | {prop_t / pbase - 1:+.1%} |")


if __name__ == "__main__":
    main()
