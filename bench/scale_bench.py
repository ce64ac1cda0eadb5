"""How the store and the methods scale with the corpus: 1k, 10k, 100k (and 1M) chunks.

    .venv/bin/python bench/scale_bench.py [--sizes 1000,10000,100000] [--real-max 2000] [--questions 5]

Each size is built in its own process (so peak RSS is that size's) from real text: the paragraphs
of the shared QA samples (../shared/data, or the bundled sample corpus) cycled and varied so every
chunk is distinct, with one offline triplet per chunk (its title, "mentions", a capitalized word of
the paragraph) imported in batches. Sizes above --real-max embed with deterministic random unit
vectors instead of the model (said in the output); everything after embedding is the real code.

Per size it prints: ingest chunks/s against the floor (the bare encode of the same texts, or the
random vectors' generation), peak RSS, disk per chunk, cold open (a new process opening the corpus
and answering one semantic query), warm per-question engine latency of semantic, T2RAG and KG2RAG
(offline reasoner) against the floor (encode the question + one vector search at that size), and
the growth exponent of each latency between sizes (0 = flat, 1 = linear in the corpus).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

QUESTIONS = ["Which river flows through the town where the author of the novel was born?",
             "Who directed the film that was shot near the lighthouse?",
             "What is the capital of the country where the painter died?",
             "When was the company founded that built the railway?",
             "Which university did the founder of the orchestra attend?"]


def paragraphs() -> list[tuple[str, str]]:
    shared = ROOT.parent / "shared" / "data"
    out: list[tuple[str, str]] = []
    hp = shared / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json"
    if hp.is_file():
        out += [(t, "".join(s)) for t, s in json.loads(hp.read_text(encoding="utf-8")).items()]
    mq = shared / "musique_hipporag_train100"
    for f in sorted(mq.glob("*corpus*.json")) if mq.is_dir() else ():
        data = json.loads(f.read_text(encoding="utf-8"))
        items = data.items() if isinstance(data, dict) else ((d.get("title", ""), d.get("text", "")) for d in data)
        out += [(str(t), str(x)) for t, x in items if x]
    if not out:  # a clone without ../shared: the bundled sample
        records = json.loads((ROOT / "sample_corpora" / "hotpotqa_30.json").read_text(encoding="utf-8"))
        out = list({t: "".join(s) for r in records for t, s in r["context"]}.items())
    return out


def documents(n: int, start: int = 0):
    """Document n: paragraph n mod P, varied by its cycle (a numbered variant with sentences
    rotated), so every text - hence every chunk id - is distinct."""
    from engine.types import Document

    paras = paragraphs()
    for i in range(start, start + n):
        title, text = paras[i % len(paras)]
        cycle = i // len(paras)
        sents = [s for s in text.split(". ") if s]
        if cycle and len(sents) > 1:
            r = cycle % len(sents)
            sents = sents[r:] + sents[:r]
        yield Document(f"s{i:08d}", f"{title} ({cycle})" if cycle else title,
                       ". ".join(sents) + f" [variant {cycle}]", "scale", "text")


class RandomEmbedder:
    """Deterministic random unit vectors (seeded by the text): the embedding step of sizes too
    large to encode on this machine, everything after it real."""
    spec = "bundled"
    dim = 384

    def encode(self, texts, batch_size=64):
        import numpy as np

        out = np.empty((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            out[i] = np.random.default_rng(zlib.crc32(t.encode("utf-8"))).standard_normal(self.dim)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def _embedder(size: int, real_max: int):
    if size <= real_max:
        from engine.embed import get_bundled_embedder

        return get_bundled_embedder(), "model"
    return RandomEmbedder(), "random vectors"


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def hnsw_recall(corpus, qs_n: int = 100) -> dict:
    """recall@10 of an HNSW index (the `auto` kind above its threshold) against exact search over
    the same stored vectors, and each one's per-query time."""
    import numpy as np

    from engine.vectors import FaissVectorStore

    rows = corpus._db.execute("SELECT rid, vec FROM chunks").fetchall()
    ids = np.array([r[0] for r in rows], np.int64)
    vecs = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1)
    del rows
    exact, approx = FaissVectorStore(vecs.shape[1], "flat"), FaissVectorStore(vecs.shape[1], "hnsw")
    exact.add(ids, vecs)
    t0 = time.perf_counter()
    approx.add(ids, vecs)
    build = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    queries = vecs[rng.choice(len(vecs), size=min(qs_n, len(vecs)), replace=False)]
    # near a stored vector, not equal to it: its own vector must come first
    queries = queries + rng.normal(scale=0.3 / np.sqrt(queries.shape[1]), size=queries.shape).astype(np.float32)
    t0 = time.perf_counter()
    _, want = exact.search(queries, 10)
    t_exact = (time.perf_counter() - t0) / len(queries)
    t0 = time.perf_counter()
    _, got = approx.search(queries, 10)
    t_hnsw = (time.perf_counter() - t0) / len(queries)
    recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want.tolist(), got.tolist())]))
    recall1 = float(np.mean([a[0] == b[0] for a, b in zip(want.tolist(), got.tolist())]))
    return {"recall10": recall, "recall1": recall1, "exact_ms": t_exact * 1000, "hnsw_ms": t_hnsw * 1000, "build_s": build}


def child(size: int, folder: Path, real_max: int, n_questions: int, hnsw_max: int) -> dict:
    import torch

    from engine.llm import make_reasoner
    from engine.methods import build_method, method_class
    from engine.store import Workspace, embedding_text
    from engine.chunking import chunk_document

    torch.set_num_threads(1)  # the machine is shared: one thread, as a server process per question
    emb, how = _embedder(size, real_max)
    ws = Workspace(folder, embedder=emb, keep_snapshots=0)
    corpus = ws.create("scale")
    batch = 5000
    t_ingest = t_floor = 0.0
    chunks = 0
    for start in range(0, size, batch):
        docs = list(documents(min(batch, size - start), start))
        texts = [embedding_text(c) for d in docs for c in chunk_document(d, corpus.settings.chunking)]
        t0 = time.perf_counter()
        emb.encode(texts)
        t_floor += time.perf_counter() - t0
        t0 = time.perf_counter()
        report = corpus.add_documents(docs, sync_index=False)  # one index build at the end, below
        t_ingest += time.perf_counter() - t0
        chunks += report.chunks_added
    t0 = time.perf_counter()
    rows = []
    for c in corpus.iter_chunks(batch=10000):
        words = [w.strip(".,;:()") for w in c.text.split() if w[:1].isupper() and len(w) > 3]
        rows.append((c.chunk_id, c.title, "mentions", words[len(words) // 2] if words else c.title.split()[0]))
        if len(rows) >= 20000:
            corpus.import_triplets(rows, refresh=False)
            rows = []
    if rows:
        corpus.import_triplets(rows, refresh=False)
    t_index = time.perf_counter()
    corpus.refresh_indexes()
    t_ingest += time.perf_counter() - t_index  # the chunk index build belongs to ingest (a share of it)
    t_triplets = time.perf_counter() - t0
    corpus.close()
    disk = _du(folder / "scale")

    # cold open: a new process opens the corpus and answers one semantic query
    code = (f"import sys, time; t=time.perf_counter(); sys.path.insert(0, {str(ROOT)!r}); "
            f"sys.path.insert(0, {str(ROOT / 'bench')!r}); import scale_bench as sb; "
            f"from engine.store import Workspace; emb, _ = sb._embedder({size}, {real_max}); "
            f"c = Workspace({str(folder)!r}, embedder=emb, keep_snapshots=0).open('scale'); "
            f"c.search_chunks(c.embed(['a question']), 10); print(time.perf_counter()-t)")
    cold = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)

    corpus = Workspace(folder, embedder=emb, keep_snapshots=0).open("scale")
    reasoner = make_reasoner("", embedder=emb)
    qs = QUESTIONS[:n_questions]
    corpus.search_chunks(corpus.embed(["warm up"]), 10)  # the index file loads here, not in the floor
    t0 = time.perf_counter()
    for q in qs:
        corpus.search_chunks(corpus.embed([q]), 10)
    floor = (time.perf_counter() - t0) / len(qs)
    latency = {}
    for name in ("semantic", "t2rag", "kg2rag"):
        method = build_method(name, reasoner)
        settings = method_class(name).settings_cls()
        method.answer(qs[0], corpus, settings)  # warm: caches, lazy loads
        t0 = time.perf_counter()
        for q in qs:
            method.answer(q, corpus, settings)
        latency[name] = (time.perf_counter() - t0) / len(qs)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the HNSW side experiment
    hnsw = hnsw_recall(corpus, qs_n=100) if chunks <= hnsw_max else None
    return {"hnsw": hnsw, "size": size, "chunks": chunks, "embedding": how, "ingest_cps": chunks / t_ingest,
            "floor_cps": chunks / max(t_floor, 1e-9), "triplets_s": t_triplets, "rss_mb": rss,
            "disk_per_chunk": disk / max(chunks, 1), "cold_s": cold, "floor_q_s": floor, "latency": latency}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--real-max", type=int, default=0,
                    help="sizes up to this embed with the model (default: none, so every size uses the same vectors)")
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--hnsw-max", type=int, default=200_000,
                    help="measure HNSW recall@10 against exact search up to this many chunks")
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--dir", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, Path(args.dir), args.real_max, args.questions, args.hnsw_max)))
        return
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory(dir=ROOT / "bench") as tmp:
            out = subprocess.run([sys.executable, __file__, "--child", str(size), "--dir", tmp, "--real-max",
                                  str(args.real_max), "--questions", str(args.questions),
                                  "--hnsw-max", str(args.hnsw_max)],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"size {size}: failed\n{out.stderr[-2000:]}")
                break
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = results[-1]
            print(f"built {size}: {r['chunks']} chunks", file=sys.stderr, flush=True)
    print("| chunks | embedding | ingest chunks/s (floor) | ratio | triplets s | peak RSS MB | disk/chunk KB | cold open s "
          "| floor ms/q | semantic ms | t2rag ms | kg2rag ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        lat = r["latency"]
        print(f"| {r['chunks']:,} | {r['embedding']} | {r['ingest_cps']:.0f} ({r['floor_cps']:.0f}) | "
              f"{r['floor_cps'] / r['ingest_cps']:.2f}x | {r['triplets_s']:.1f} | {r['rss_mb']:.0f} | "
              f"{r['disk_per_chunk'] / 1024:.2f} | {r['cold_s']:.2f} | {r['floor_q_s'] * 1000:.1f} | "
              f"{lat['semantic'] * 1000:.1f} | {lat['t2rag'] * 1000:.1f} | {lat['kg2rag'] * 1000:.1f} |")
    print("\nHNSW (M=32, efSearch=128; the `auto` index kind from 200k vectors) against exact search, 100 "
          "queries near stored vectors:\n")
    print("| chunks | recall@1 | recall@10 | exact ms/query | HNSW ms/query | HNSW build s |")
    print("|---|---|---|---|---|---|")
    for r in results:
        h = r.get("hnsw")
        if h:
            print(f"| {r['chunks']:,} | {h['recall1']:.3f} | {h['recall10']:.3f} | {h['exact_ms']:.2f} | "
                  f"{h['hnsw_ms']:.2f} | {h['build_s']:.1f} |")
    if any(r["embedding"] == "random vectors" and r.get("hnsw") for r in results):
        print("\n(random vectors have no neighbourhood structure: beyond the first hit every stored vector is "
              "about as far as the next, so recall@10 there is a worst case, not what HNSW gives on text "
              "embeddings; --real-max N measures it with the model)")
    if len(results) > 1:
        print("\ngrowth exponent of per-question latency, log(t2/t1)/log(n2/n1) (0 = flat, 1 = linear):\n")
        print("| from | to | floor | semantic | t2rag | kg2rag | cold open |")
        print("|---|---|---|---|---|---|---|")
        for a, b in zip(results, results[1:]):
            g = lambda x, y: math.log(max(y, 1e-9) / max(x, 1e-9)) / math.log(b["chunks"] / a["chunks"])  # noqa: E731
            print(f"| {a['chunks']:,} | {b['chunks']:,} | {g(a['floor_q_s'], b['floor_q_s']):.2f} | "
                  + " | ".join(f"{g(a['latency'][m], b['latency'][m]):.2f}" for m in ("semantic", "t2rag", "kg2rag"))
                  + f" | {g(a['cold_s'], b['cold_s']):.2f} |")


if __name__ == "__main__":
    main()
