"""Retrieval recall of HippoRAG 2 beside BM25, dense, T2RAG and KG2RAG on the bundled sample corpora
(issue 27), with bench/retrieval_quality.py's scoring (recall@2/5/10 of gold paragraphs among a
method's evidence, in the order given to the LLM) and its "where recall was lost" rows for HippoRAG 2.

    TRIPLET_LENS_WORKSPACE=/tmp/ws .venv/bin/python -m engine sample ensure    # the bundled samples
    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/hipporag2_bench.py /tmp/ws [semantic,bm25,hipporag2,t2rag,kg2rag]

The shared MuSiQue set with HippoRAG's real GPT-3.5 triplets is
`bench/retrieval_quality.py --datasets musique --methods semantic bm25 hipporag2 t2rag kg2rag`.
"""
import argparse, sys, time
sys.path.insert(0, "bench"); sys.path.insert(0, ".")
import retrieval_quality as rq
from engine.embed import get_bundled_embedder
from engine.store import Workspace
from engine.eval.recall_loss import recall_loss_markdown
import torch; torch.set_num_threads(1)
args = argparse.Namespace(methods=sys.argv[2].split(",") if len(sys.argv) > 2 else ["semantic", "bm25", "hipporag2", "t2rag", "kg2rag"], kg2rag=["default"], hybrid_same_n=False)
ws = Workspace(sys.argv[1], embedder=get_bundled_embedder())
for name in ("musique-sample", "hotpotqa-sample"):
    corpus = ws.open(name); c = corpus.counts(); qs = corpus.questions()
    print(f"\n### {name}: {len(qs)} questions, {c.chunks} chunks, {c.triplets} offline triplets\n")
    t0 = time.perf_counter(); rows, per_q, losses = rq.evaluate(args, corpus, qs)
    print(f"\n({time.perf_counter() - t0:.0f}s)\n")
    print("| method | chunks | R@2 | R@5 | R@10 | P | R | F1 |\n|---|---|---|---|---|---|---|---|")
    for row in rows.values(): print(row.line())
    print("\n" + "\n".join(recall_loss_markdown([x for x in losses if x.method == "hipporag2"])), flush=True)
