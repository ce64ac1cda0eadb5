"""Indexing rate of the corpus store against raw `SentenceTransformer.encode` on the same texts.

    .venv/bin/python bench/index_bench.py [--docs 300]

The store also embeds every new sentence of a chunk once (for the offline answer step), so the
chunks' baseline encodes the same chunks and sentences. Builds a corpus from the HotpotQA paragraphs
in ../shared/data (else tests/fixtures/qa, else the bundled sample), timing
`Corpus.add_documents` (chunking + embedding + SQLite + FAISS save) and the proposition indexing of
triplets (store + embed + index), each against the bare encode of the same texts with the same
model and batch size, measured in the same process (baseline, store, baseline again; the baseline
is the mean of both, which evens out the noise of a shared machine). Prints the overhead ratio.
The baseline encodes at the store's bulk batch size with torch's threads (every usable core unless
OMP_NUM_THREADS says fewer; the first line says which). Target: the store indexes at >= 0.9x the
raw encode rate (adds under ~11% to raw encoding time).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load_documents(n_docs: int):
    from engine.core.chunking import make_doc_id
    from engine.core.types import Document

    rel = Path("hotpotqa_hipporag_train100") / "hotpotqa_train_corpus.json"
    # the shared set, else its copy in the test fixtures (a fresh clone has that one)
    source = next(
        (p for p in (ROOT.parent / "shared" / "data" / rel, ROOT / "tests" / "fixtures" / "qa" / rel) if p.is_file()),
        None,
    )
    if source is not None:
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
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from engine.core.chunking import chunk_document
    from engine.core.types import ExtractionStatus
    from engine.embed import get_bundled_embedder
    from engine.embed.bundled import bulk_batch_size, torch_threads, usable_cores
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace, embedding_text

    emb = get_bundled_embedder()
    model = emb.model
    docs = load_documents(args.docs)
    texts = [embedding_text(c) for d in docs for c in chunk_document(d)]
    # the store also embeds each new sentence of a chunk once (the offline answer step reads them),
    # so the raw baseline of adding documents encodes those sentences too
    from engine.vectors.sentences import split_for_answers

    sentences = list(dict.fromkeys(s for t in texts for s in split_for_answers(t)))
    import torch

    batch = bulk_batch_size()
    # the baseline: one encode call over every text, sorted by length inside, at the batch size
    # and thread count the store's bulk path uses (all usable cores unless OMP_NUM_THREADS says less)
    raw = lambda tx: model.encode(tx, batch_size=batch, normalize_embeddings=True, show_progress_bar=False)  # noqa
    print(
        f"torch threads {torch.get_num_threads()} (store asks for {torch_threads()}; {usable_cores()} usable "
        f"cores), bulk batch {batch}, {len(texts)} chunks from {len(docs)} documents\n"
    )
    raw(texts[:64])  # warm-up

    reasoner = OfflineReasoner(emb)
    rows: dict[str, list[tuple[float, float]]] = {"chunks": [], "propositions": []}
    n_props = 0
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp), embedder=emb)
        # alternate baseline and store on fresh corpora: a shared machine's load drifts over minutes
        for rep in range(args.repeats):
            corpus = ws.create(f"bench{rep}")
            base = timed(lambda: (raw(texts), raw(sentences)))
            rows["chunks"].append((base, timed(lambda c=corpus: c.add_documents(docs, batch_size=64))))

            # propositions: offline-extracted triplets, stored without vectors, then embedded + indexed
            for chunk in corpus.chunks():
                triplets = reasoner.extract(chunk.title, chunk.text)[0]
                corpus.store_extraction(chunk.chunk_id, triplets, ExtractionStatus(chunk.chunk_id, "done", "bench"))
            props = [t.proposition for t in corpus.triplets()]
            n_props = len(props)
            pbase = timed(lambda p=props: raw(p))
            rows["propositions"].append((pbase, timed(corpus.refresh_indexes)))
            ws.drop(f"bench{rep}")

    print("| what | items | raw encode (s) | store (s) | items/s raw | items/s store | store / raw rate | overhead |")
    print("|---|---|---|---|---|---|---|---|")
    for what, n in (("chunks", len(texts)), ("propositions", n_props)):
        label = f"chunks (+ {len(sentences)} sentence vectors)" if what == "chunks" else what
        base = statistics.median(r[0] for r in rows[what])
        store = statistics.median(r[1] for r in rows[what])
        ratio = statistics.median(r[1] / r[0] for r in rows[what])
        print(
            f"| {label} | {n} | {base:.2f} | {store:.2f} | {n / base:.0f} | {n / store:.0f} | {1 / ratio:.2f}x "
            f"| {ratio - 1:+.1%} |"
        )
    print(
        f"\noverhead = median over {args.repeats} alternating repeats of store time / raw encode time - 1; "
        "store / raw rate = its inverse (target >= 0.9x: under +11%)"
    )


if __name__ == "__main__":
    main()
