"""Supporting-paragraph retrieval of KG2RAG's selected chunks against semantic RAG at the same
number of chunks, on the real HotpotQA and MuSiQue samples.

    .venv/bin/python bench/retrieval_quality.py [--questions 100] [--datasets hotpotqa musique]

Each dataset becomes one pooled corpus (every question's paragraphs together, paragraph chunks),
triplets from the offline extractor (`offline-rules`, no model); built once into
bench/out/workspace and reused. Per question: KG2RAG (k=10 seeds, 1 hop, cosine tree ranking,
no LLM call: a stub reasoner) gives n evidence chunks; semantic RAG is scored at the same n and
at k=10. Precision / recall / F1 of gold paragraph titles, averaged over all questions (a
question with nothing retrieved counts 0). Offline triplets are far sparser and noisier than an
LLM's, so this measures the pipeline, not the paper's figures (SPEC.md section 5).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
DATASETS = {
    "hotpotqa": DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json",
    "musique": DATA / "musique_kag_100" / "musique_qa_100.json",
}
BENCH_WS = ROOT / "bench" / "out" / "workspace"


class StubReasoner:
    """Answers nothing and costs nothing: the bench measures retrieval only."""

    name = "bench-stub"
    supports_free_text = False

    def answer(self, question, context, *, facts=None):
        from engine.llm.base import LLMCall

        return "", LLMCall(job="answer", model=self.name)


def build_corpus(ws, name: str, dataset: Path, mode: str = "paragraph", limit: int | None = None, log=print):
    """Open corpus `name`, or build it from a dataset file with offline triplets."""
    from engine.chunking import ChunkingSettings
    from engine.extraction import run_extraction
    from engine.ingest.datasets import read_dataset
    from engine.llm.offline import OfflineReasoner

    if ws.exists(name):
        corpus = ws.open(name)
        c = corpus.counts()
        if c.chunks and not c.pending:
            return corpus
    else:
        corpus = ws.create(name, chunking=ChunkingSettings(mode=mode))
    data = read_dataset(dataset.name, dataset.read_text(encoding="utf-8"), limit=limit)
    t0 = time.perf_counter()
    corpus.add_documents(data.documents)
    corpus.add_questions(data.questions)
    log(f"  {name}: {corpus.counts().chunks} chunks embedded in {time.perf_counter() - t0:.0f}s")
    t0 = time.perf_counter()
    summary = run_extraction(corpus, OfflineReasoner(corpus.embedder), concurrency=1)
    corpus.refresh_indexes()
    log(f"  {name}: {summary.triplets} triplets extracted offline and embedded in {time.perf_counter() - t0:.0f}s")
    return corpus


@dataclass
class Scores:
    p: float = 0.0
    r: float = 0.0
    f1: float = 0.0
    chunks: float = 0.0
    n: int = 0

    def add(self, s, n_chunks: int) -> None:
        self.p += s.precision
        self.r += s.recall
        self.f1 += s.f1
        self.chunks += n_chunks
        self.n += 1

    def row(self, label: str) -> str:
        n = max(self.n, 1)
        return f"| {label} | {self.f1 / n:.3f} | {self.p / n:.3f} | {self.r / n:.3f} | {self.chunks / n:.2f} |"


def cache_question_vectors(corpus) -> None:
    """Embed each question once for all the methods compared (the bench measures retrieval, not
    time; on a shared machine the embedder dominates the run)."""
    if getattr(corpus, "_bench_cached", False):
        return
    cache: dict[tuple[str, ...], object] = {}
    embed = corpus.embed

    def cached(texts):
        key = tuple(texts)
        if key not in cache:
            cache[key] = embed(texts)
        return cache[key]

    corpus.embed = cached
    corpus._bench_cached = True


def evaluate(corpus, questions, settings, log=print) -> dict[str, Scores]:
    from engine.eval.metrics import PARAGRAPH, gold_units, retrieval_score, retrieved_units
    from engine.methods.baselines import SemanticRAG, SemanticRAGSettings
    from engine.methods.kg2rag import KG2RAG

    cache_question_vectors(corpus)
    kg, sem = KG2RAG(StubReasoner()), SemanticRAG(StubReasoner())
    out = {"kg2rag": Scores(), "semantic@same-n": Scores(), f"semantic@{settings.k}": Scores()}
    reached_gold = 0
    for q in questions:
        gold = gold_units(q, PARAGRAPH)
        if not gold:
            continue
        res = kg.answer(q.question, corpus, settings)
        ev = corpus.get_chunks(res.evidence_chunk_ids)
        units = lambda chunks: set(retrieved_units(chunks, PARAGRAPH, q))  # noqa: E731 -- MuSiQue: by idx
        out["kg2rag"].add(retrieval_score(retrieved_units(ev, PARAGRAPH, q), gold), len(ev))
        seeds = units(corpus.get_chunks([s.chunk_id for s in res.trace.seeds]))
        added = units(corpus.get_chunks([x.chunk_id for h in res.trace.hops for x in h.chunks_added]))
        reached_gold += bool((gold - seeds) & added & units(ev))
        for label, k in (("semantic@same-n", max(1, len(ev))), (f"semantic@{settings.k}", settings.k)):
            r = sem.answer(q.question, corpus, SemanticRAGSettings(k=k))
            chunks = corpus.get_chunks(r.evidence_chunk_ids)
            out[label].add(retrieval_score(retrieved_units(chunks, PARAGRAPH, q), gold), len(chunks))
    log(f"  questions where the expansion put a gold paragraph missing from the seeds into the context: "
        f"{reached_gold}/{out['kg2rag'].n}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--tree-score", nargs="+", default=["max"], choices=["max", "mean", "centroid"])
    ap.add_argument("--hops", type=int, default=1)
    args = ap.parse_args()

    from engine.embed import get_bundled_embedder
    from engine.methods.kg2rag import KG2RAGSettings
    from engine.store import Workspace

    ws = Workspace(BENCH_WS, embedder=get_bundled_embedder())
    for ds in args.datasets:
        corpus = build_corpus(ws, f"{ds}-paragraphs", DATASETS[ds])
        c = corpus.counts()
        questions = corpus.questions()[: args.questions]
        print(f"\n## {ds}: {len(questions)} questions, pooled corpus of {c.chunks} chunks, {c.triplets} offline triplets")
        for ts in args.tree_score:
            settings = KG2RAGSettings(k=10, hops=args.hops, tree_score=ts)
            t0 = time.perf_counter()
            scores = evaluate(corpus, questions, settings)
            print(f"\nKG2RAG k=10, hops={args.hops}, cosine tree score={ts} ({time.perf_counter() - t0:.0f}s)\n")
            print("| retrieval | F1 | P | R | chunks |\n|---|---|---|---|---|")
            for label, s in scores.items():
                print(s.row(label))


if __name__ == "__main__":
    main()
