"""Why T2RAG's first five chunks hold less gold than dense retrieval's, and what closing it would take
(issue 16), on the shared MuSiQue (GPT-3.5 OpenIE triplets) and HotpotQA (offline triplets) samples.

    .venv/bin/python bench/t2rag_gap.py [--datasets musique hotpotqa] [--questions 100]

T2RAG shows the solver k = 5 chunks per round, so its recall@5 is its first round's: the chunks of
the propositions its queries (the searchable triplets, plus the question without wh-words) reach
first. Part 1 classifies every gold paragraph that dense retrieval of the question puts in its top 5
and T2RAG's first 5 chunks miss: is the gold chunk's best proposition in the proposition pool at all
(top 200 per query), and where does the walk reach it? Part 2 measures ways of ranking the first
round's chunks on the same corpus, embedder and offline decomposition: the paper's walk (a chunk
ranks by its best proposition), aggregations of a chunk's proposition scores, and fusions of the
proposition walk with dense chunk search of the question. Corpora are those of
bench/retrieval_quality.py (built once into bench/out/workspace).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def first_round(corpus, reasoner, question: str, **settings):
    from engine.methods.t2rag.retrieval import build_queries, retrieve
    from engine.methods.t2rag.state import State
    from engine.methods.t2rag.trace import RoundTiming, T2RAGSettings

    triplets, _ = reasoner.decompose(question)
    state = State.from_decomposition(list(triplets))
    queries = build_queries(state, question, T2RAGSettings(), set())
    return queries, retrieve(corpus, queries, T2RAGSettings(**settings), set(), RoundTiming())


def rankings(corpus, question: str, queries, deep) -> dict[str, list[str]]:
    """First-round chunk orders to compare, each from the same proposition pool or question vector."""
    from engine.methods.baselines import rrf

    per: dict[str, list[float]] = {}
    for w in deep.walked:
        for c in w.chunk_ids:
            per.setdefault(c, []).append(w.score)

    def by(f):
        return sorted(per, key=lambda c: (-f(sorted(per[c], reverse=True)), c))

    qv = corpus.embed([question])
    dense = [c for c, _ in corpus.search_chunks(qv, 50)[0]]
    walk = [c.chunk_id for c in deep.chunks]
    cos = dict(corpus.search_chunks(qv, 50)[0])
    missing = [c for c in per if c not in cos]
    if missing:
        for c, v in zip(missing, corpus.chunk_vectors(missing)):
            cos[c] = float(v @ qv[0])
    best = {c: v[0] for c, v in ((c, sorted(s, reverse=True)) for c, s in per.items())}
    return {
        "dense retrieval of the question (baseline)": dense,
        "T2RAG walk: chunk = its best proposition (paper)": walk,
        "chunk = best + 0.5 x 2nd proposition": by(lambda v: v[0] + 0.5 * (v[1] if len(v) > 1 else 0)),
        "chunk = mean of its top 2 propositions": by(lambda v: sum(v[:2]) / 2),
        "chunk = sum of its propositions": by(sum),
        "RRF(walk, dense)": [c for c, _ in rrf([walk, dense])],
        "RRF(walk, dense, dense)": [c for c, _ in rrf([walk, dense, dense])],
        "dense top 3, then the walk": list(dict.fromkeys(dense[:3] + walk)),
        "cos(question, chunk) + 0.3 x best proposition": sorted(
            cos, key=lambda c: (-(cos[c] + 0.3 * best.get(c, 0.0)), c)
        ),
    }


def run(name: str, questions: int) -> None:
    from retrieval_quality import BENCH_WS, build_corpus, dataset_files

    from engine.embed import get_bundled_embedder
    from engine.eval.metrics import PARAGRAPH, gold_units, retrieved_units
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace

    ws = Workspace(BENCH_WS, embedder=get_bundled_embedder())
    files = dataset_files(name)  # ../shared/data, else tests/fixtures/qa; None after a SKIPPED line
    if files is None:
        return
    path, triplets = files
    corpus = build_corpus(
        ws, f"{name}-paragraphs" if name != "musique" else "musique-hipporag-openie", path, triplets=triplets
    )
    reasoner = OfflineReasoner(corpus.embedder)
    why: collections.Counter = collections.Counter()
    recall: dict[str, float] = collections.defaultdict(float)
    n = 0
    for q in corpus.questions()[:questions]:
        gold = gold_units(q, PARAGRAPH)
        if not gold:
            continue
        n += 1
        by_doc = bool(q.supporting_docs)

        def units(ids: list[str], by_doc: bool = by_doc) -> set:
            return set(retrieved_units(corpus.get_chunks(ids), PARAGRAPH, by_doc))

        queries, deep = first_round(corpus, reasoner, q.question, k=10_000, candidate_depth=200)
        orders = rankings(corpus, q.question, queries, deep)
        for label, order in orders.items():
            recall[label] += len(units(order[:5]) & gold) / len(gold)
        walk, dense5 = (
            orders["T2RAG walk: chunk = its best proposition (paper)"],
            orders["dense retrieval of the question (baseline)"][:5],
        )
        shown = units(walk[:5])
        for c in dense5:
            u = units([c])
            if not (u & gold) or u & shown:
                continue
            if c in walk:
                pos = walk.index(c) + 1
                label = "its best proposition is in the pool, the walk reaches the chunk at " + (
                    "6-10" if pos <= 10 else "11-50" if pos <= 50 else "> 50"
                )
            else:
                label = "none of its propositions is in the top 200 of any query"
            if not any(x.kind == "triplet" for x in queries):
                label += " (no triplet query: the question only)"
            why[label] += 1
    print(f"\n### {name}: {n} questions\n")
    print("First-round chunk ranking, recall@5 (same corpus, embedder, offline decomposition):\n")
    print("| ranking of the first round's chunks | R@5 |\n|---|---|")
    for label, total in recall.items():
        print(f"| {label} | {total / max(n, 1):.3f} |")
    print(f"\nGold paragraphs in dense's top 5 that T2RAG's first 5 chunks miss: {sum(why.values())}\n")
    print("| the gold chunk | paragraphs |\n|---|---|")
    for label, count in why.most_common():
        print(f"| {label} | {count} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["musique", "hotpotqa"], choices=["musique", "hotpotqa"])
    ap.add_argument("--questions", type=int, default=100)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    for name in args.datasets:
        run(name, args.questions)


if __name__ == "__main__":
    main()
