"""Retrieval recall of HippoRAG 2 beside BM25, dense, T2RAG and KG2RAG on the bundled sample corpora
(issue 27), with bench/retrieval_quality.py's scoring (recall@2/5/10 of gold paragraphs among a
method's evidence, in the order given to the LLM) and its "where recall was lost" rows for HippoRAG 2.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/hipporag2_bench.py [--workspace DIR]
        [--methods semantic,bm25,hipporag2,t2rag,kg2rag] [--samples musique-sample,hotpotqa-sample]

The samples ship with the repository, so this runs from a fresh clone: a sample missing from the
workspace (default bench/out/workspace, shared with the other benchmarks) is built there first,
with its offline triplets. The shared MuSiQue set with HippoRAG's real GPT-3.5 triplets is
`bench/retrieval_quality.py --datasets musique --methods semantic bm25 hipporag2 t2rag kg2rag`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
DEFAULT_WS = ROOT / "bench" / "out" / "workspace"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, default=DEFAULT_WS)
    ap.add_argument("--methods", default="semantic,bm25,hipporag2,t2rag,kg2rag")
    ap.add_argument("--samples", default="musique-sample,hotpotqa-sample")
    opts = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    import retrieval_quality as rq

    from engine.embed import get_bundled_embedder
    from engine.eval.recall_loss import recall_loss_markdown
    from engine.session.samples import build_sample
    from engine.store import Workspace

    args = argparse.Namespace(methods=opts.methods.split(","), kg2rag=["default"], hybrid_same_n=False)
    ws = Workspace(opts.workspace, embedder=get_bundled_embedder())
    for name in opts.samples.split(","):
        if not ws.exists(name) or ws.open(name).counts().pending:
            print(f"building the bundled sample {name} (offline triplets)...", file=sys.stderr, flush=True)
            build_sample(ws, name)
        corpus = ws.open(name)
        c = corpus.counts()
        qs = corpus.questions()
        print(f"\n### {name}: {len(qs)} questions, {c.chunks} chunks, {c.triplets} offline triplets\n")
        t0 = time.perf_counter()
        rows, _per_q, losses = rq.evaluate(args, corpus, qs)
        print(f"\n({time.perf_counter() - t0:.0f}s)\n")
        print("| method | chunks | R@2 | R@5 | R@10 | P | R | F1 |\n|---|---|---|---|---|---|---|---|")
        for row in rows.values():
            print(row.line())
        print("\n" + "\n".join(recall_loss_markdown([x for x in losses if x.method == "hipporag2"])), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
