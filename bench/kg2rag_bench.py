"""KG2RAG engine time per question against semantic RAG, measured in the same run.

    .venv/bin/python bench/kg2rag_bench.py [--questions 100] [--repeats 3] [--cross-encoder PATH]

Corpus: the MuSiQue sample (100 questions x 20 paragraphs) chunked into title-prefixed sentences
(KG2RAG's own setup), over 5,000 chunks, with offline triplets; built once into
bench/out/workspace. Both methods run with a stub reasoner that returns at once, so the time is
everything but the LLM call: question embedding, search, SQLite reads, graph work. The two are
interleaved question by question so machine noise hits both alike. Target: KG2RAG (cosine tree
ranking from stored vectors) under 1.5x semantic RAG (k=10).

A cross-encoder ranks trees only when one exists locally (none is bundled, and models are never
downloaded): pass its folder with --cross-encoder to time that path separately.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _data import need  # noqa: E402
from retrieval_quality import BENCH_WS, StubReasoner, build_corpus  # noqa: E402

TARGET = 1.5


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cross-encoder", default="", help="local CrossEncoder folder (optional)")
    args = ap.parse_args()

    from engine.embed import get_bundled_embedder
    from engine.methods.baselines import SemanticRAG, SemanticRAGSettings
    from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
    from engine.store import Workspace

    ws = Workspace(BENCH_WS, embedder=get_bundled_embedder())
    # the shared set, else its copy in tests/fixtures/qa (a fresh clone)
    (musique,) = need("musique_kag_100/musique_qa_100.json")
    corpus = build_corpus(ws, "musique-sentences", musique, mode="sentence")
    c = corpus.counts()
    questions = [q.question for q in corpus.questions()[: args.questions]]
    print(f"corpus: {c.chunks} sentence chunks, {c.triplets} offline triplets, {len(questions)} questions")
    if c.chunks < 5000:
        print(f"WARNING: fewer than 5,000 chunks ({c.chunks})")

    kg, sem = KG2RAG(StubReasoner()), SemanticRAG(StubReasoner())
    ks, ss = KG2RAGSettings(k=10), SemanticRAGSettings(k=10)
    # warm up: indexes loaded, entity graph built, embedder warm
    t_graph = timed(corpus.entity_graph)
    for q in questions[:3]:
        kg.answer(q, corpus, ks)
        sem.answer(q, corpus, ss)
    print(f"entity graph built once per corpus generation in {t_graph:.2f}s (cached afterwards)")

    kg_times: list[float] = []
    sem_times: list[float] = []
    steps: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for q in questions:
            r = kg.answer(q, corpus, ks)
            kg_times.append(r.usage.engine_time)
            for name, sec in r.trace.timings.items():
                steps.setdefault(name, []).append(sec)
            sem_times.append(sem.answer(q, corpus, ss).usage.engine_time)

    def ms(xs):
        return f"mean {1000 * statistics.fmean(xs):.1f} ms, median {1000 * statistics.median(xs):.1f} ms"

    ratio = statistics.fmean(kg_times) / statistics.fmean(sem_times)
    ratio_med = statistics.median(kg_times) / statistics.median(sem_times)
    print(f"semantic RAG (k=10):      {ms(sem_times)}")
    print(f"KG2RAG (k=10, 1 hop, cosine trees): {ms(kg_times)}")
    print("KG2RAG steps (mean ms): " + ", ".join(f"{k} {1000 * statistics.fmean(v):.2f}" for k, v in steps.items()))
    verdict = "OK" if ratio < TARGET else "ABOVE TARGET"
    print(f"ratio KG2RAG / semantic: {ratio:.2f}x mean, {ratio_med:.2f}x median (target < {TARGET}x): {verdict}")

    if args.cross_encoder:
        from engine.embed.rerank import CrossEncoderReranker

        ce = KG2RAG(StubReasoner(), reranker=CrossEncoderReranker(args.cross_encoder))
        ce_times = [ce.answer(q, corpus, ks).usage.engine_time for q in questions]
        print(f"KG2RAG with cross-encoder {args.cross_encoder}: {ms(ce_times)}")
    else:
        print("cross-encoder path not timed: no cross-encoder is bundled (pass --cross-encoder PATH to a local one)")


if __name__ == "__main__":
    main()
