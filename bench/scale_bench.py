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
import contextlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

QUESTIONS = [
    "Which river flows through the town where the author of the novel was born?",
    "Who directed the film that was shot near the lighthouse?",
    "What is the capital of the country where the painter died?",
    "When was the company founded that built the railway?",
    "Which university did the founder of the orchestra attend?",
]


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
    from engine.core.types import Document

    paras = paragraphs()
    for i in range(start, start + n):
        title, text = paras[i % len(paras)]
        cycle = i // len(paras)
        sents = [s for s in text.split(". ") if s]
        if cycle and len(sents) > 1:
            r = cycle % len(sents)
            sents = sents[r:] + sents[:r]
        yield Document(
            f"s{i:08d}",
            f"{title} ({cycle})" if cycle else title,
            ". ".join(sents) + f" [variant {cycle}]",
            "scale",
            "text",
        )


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


def approx_recall(corpus, kind: str, qs_n: int = 100) -> dict:
    """recall@1/@10 of an approximate index of `kind` against exact search over the same stored
    chunk vectors (both built from SQLite in pages), one query at a time, and each one's time per
    query. When the corpus's own chunk index is of that kind, that index is the one measured."""
    import numpy as np

    from engine.vectors import FaissVectorStore

    n = corpus._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    dim = corpus.embedder.dim
    own = corpus._index("chunks")
    exact = FaissVectorStore(dim, "flat")
    approx = own if own.kind == kind else FaissVectorStore(dim, kind, expected=n)
    build = 0.0
    rng = np.random.default_rng(0)
    pick = set(rng.choice(n, size=min(qs_n, n), replace=False).tolist())
    picked, pos = [], 0
    cur = corpus._db.execute("SELECT rid, vec FROM chunks")
    while rows := cur.fetchmany(65536):
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        vecs = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), dim)
        exact.add(ids, vecs)
        picked += [vecs[i - pos] for i in range(pos, pos + len(rows)) if i in pick]
        pos += len(rows)
        if approx is not own:
            t0 = time.perf_counter()
            approx.add(ids, vecs)
            build += time.perf_counter() - t0
    queries = np.stack(picked)
    # near a stored vector, not equal to it: its own vector must come first
    queries = queries + rng.normal(scale=0.3 / np.sqrt(dim), size=queries.shape).astype(np.float32)
    timed = {}
    found = {}
    for name, index in (("exact", exact), ("approx", approx)):
        for q in queries[:3]:
            index.search(q[None], 10)  # warm
        t0 = time.perf_counter()
        found[name] = np.concatenate([index.search(q[None], 10)[1] for q in queries])
        timed[name] = (time.perf_counter() - t0) / len(queries) * 1000
    want, got = found["exact"].tolist(), found["approx"].tolist()
    return {
        "kind": kind,
        "recall10": float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want, got)])),
        "recall1": float(np.mean([a[0] == b[0] for a, b in zip(want, got)])),
        "exact_ms": timed["exact"],
        "approx_ms": timed["approx"],
        "build_s": build if approx is not own else None,
    }


def import_triplets(corpus, after_rid: int = 0, page: int = 20000) -> None:
    """One offline triplet per chunk past `after_rid` (title, mentions, a capitalized word), in batches."""
    rows = []
    cur = corpus._db.execute("SELECT chunk_id, title, text FROM chunks WHERE rid > ?", (after_rid,))
    while part := cur.fetchmany(page):
        for cid, title, text in part:
            words = [w.strip(".,;:()") for w in text.split() if w[:1].isupper() and len(w) > 3]
            rows.append((cid, title, "mentions", words[len(words) // 2] if words else title.split()[0]))
        corpus.import_triplets(rows, refresh=False)
        rows = []


def child(size: int, folder: Path, real_max: int, n_questions: int, recall_kind: str, index_kind: str) -> dict:
    import torch

    from engine.core.chunking import chunk_document
    from engine.methods import build_method, method_class
    from engine.reasoners import make_reasoner
    from engine.store import CorpusSettings, Workspace, embedding_text

    torch.set_num_threads(1)  # the machine is shared: one thread, as a server process per question
    emb, how = _embedder(size, real_max)
    ws = Workspace(folder, embedder=emb, keep_snapshots=0)
    corpus = ws.create("scale", CorpusSettings(index_kind=index_kind))
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
    import_triplets(corpus)
    t_index = time.perf_counter()
    corpus.refresh_indexes()
    t_end = time.perf_counter()
    t_build = t_ingest + (t_end - t0)  # adds, triplet import, proposition vectors, both index builds
    t_ingest += t_end - t_index  # the chunk index build belongs to ingest (a share of it)
    t_triplets = t_end - t0
    kinds = {w: corpus._index(w).kind for w in ("chunks", "propositions")}
    corpus.close()
    disk = _du(folder / "scale")

    # cold open: a new process opens the corpus and answers one semantic query
    code = (
        f"import sys, time; t=time.perf_counter(); sys.path.insert(0, {str(ROOT)!r}); "
        f"sys.path.insert(0, {str(ROOT / 'bench')!r}); import scale_bench as sb; "
        f"from engine.store import Workspace; emb, _ = sb._embedder({size}, {real_max}); "
        f"c = Workspace({str(folder)!r}, embedder=emb, keep_snapshots=0).open('scale'); "
        f"c.search_chunks(c.embed(['a question']), 10); print(time.perf_counter()-t)"
    )
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
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the side experiments

    # incremental add: 1% more documents (chunks, their triplets, both indexes brought in step)
    top = corpus._db.execute("SELECT MAX(rid) FROM chunks").fetchone()[0]
    t0 = time.perf_counter()
    corpus.add_documents(list(documents(max(1, size // 100), size)))
    import_triplets(corpus, after_rid=top)
    corpus.refresh_indexes()
    t_incr = time.perf_counter() - t0
    recall = approx_recall(corpus, recall_kind) if recall_kind else None
    return {
        "recall": recall,
        "size": size,
        "chunks": chunks,
        "embedding": how,
        "ingest_cps": chunks / t_ingest,
        "floor_cps": chunks / max(t_floor, 1e-9),
        "triplets_s": t_triplets,
        "rss_mb": rss,
        "disk_per_chunk": disk / max(chunks, 1),
        "cold_s": cold,
        "floor_q_s": floor,
        "latency": latency,
        "build_s": t_build,
        "incr_s": t_incr,
        "kinds": kinds,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument(
        "--real-max",
        type=int,
        default=0,
        help="sizes up to this embed with the model (default: none, so every size uses the same vectors)",
    )
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument(
        "--index-kind",
        default="auto",
        choices=["auto", "flat", "hnsw", "ivf"],
        help="the corpus's FAISS index kind (auto: exact below 20k vectors, HNSW from there)",
    )
    ap.add_argument(
        "--recall-kind",
        default="hnsw",
        choices=["", "hnsw", "ivf"],
        help="measure this approximate kind's recall against exact search at every size ('' = skip)",
    )
    ap.add_argument(
        "--keep",
        default="",
        help="build each size in KEEP/<size> and keep it there (for --alternate or a profile later)",
    )
    ap.add_argument(
        "--alternate",
        default="",
        help="no build: time KG2RAG and T2RAG on the corpora kept in DIR/<size> (two or more of "
        "--sizes), the sizes in turn, --rounds rounds, and print each size's median",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--real-recall",
        type=int,
        default=0,
        metavar="N",
        help="no build: recall@10 against exact search of the HNSW graph auto builds (the same "
        "parameters at 20k, 200k and 1M), at several efSearch, on up to N real MiniLM vectors "
        "of the shared sets, embedded once into bench/out (bench/real_recall.py)",
    )
    ap.add_argument(
        "--real-source",
        default="",
        metavar="DIR",
        help="with --real-recall: the vectors stored by the corpora in DIR (e.g. bench/out/workspace)",
    )
    ap.add_argument(
        "--efs", default="", help="with --real-recall: the efSearch values to measure (default 32,64,96,128)"
    )
    ap.add_argument(
        "--real-sizes",
        default="",
        help="with --real-recall: base sizes below N to measure too (default 5000,10000,20000)",
    )
    ap.add_argument(
        "--search-floor",
        default="",
        metavar="SIZES",
        help="no build: per-question search time (raw, and a T2RAG retrieval round) of the index "
        "auto gives at each of these sizes (perturbed real vectors, sizes timed in turn), "
        "against the first size",
    )
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--dir", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(
            json.dumps(
                child(args.child, Path(args.dir), args.real_max, args.questions, args.recall_kind, args.index_kind)
            )
        )
        return
    if args.search_floor:
        import real_recall

        real_recall.search_floor([int(x) for x in args.search_floor.split(",")], args.rounds)
        return
    if args.real_recall:
        import real_recall

        efs = tuple(int(x) for x in args.efs.split(",")) if args.efs else (32, 64, 96, 128)
        sizes = tuple(int(x) for x in args.real_sizes.split(",")) if args.real_sizes else (5_000, 10_000, 20_000)
        real_recall.measure(args.real_recall, args.real_source, efs, sizes=sizes)
        return
    if args.alternate:
        alternate(Path(args.alternate), [int(x) for x in args.sizes.split(",")], args.questions, args.rounds)
        return
    results = []
    t_start = time.perf_counter()
    for size in [int(s) for s in args.sizes.split(",")]:
        with _size_dir(args.keep, size) as tmp:
            t0 = time.perf_counter()
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(size),
                    "--dir",
                    tmp,
                    "--real-max",
                    str(args.real_max),
                    "--questions",
                    str(args.questions),
                    "--recall-kind",
                    args.recall_kind,
                    "--index-kind",
                    args.index_kind,
                ],
                capture_output=True,
                text=True,
            )
            if out.returncode:
                print(f"size {size}: failed\n{out.stderr[-2000:]}")
                break
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
            results[-1]["wall_s"] = time.perf_counter() - t0
            print(
                f"built {size}: {results[-1]['chunks']} chunks in {results[-1]['wall_s']:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    report(results, args, time.perf_counter() - t_start)


@contextlib.contextmanager
def _size_dir(keep: str, size: int):
    """Where a size is built: a temporary folder, or KEEP/<size> (emptied first) when kept."""
    if not keep:
        with tempfile.TemporaryDirectory(dir=ROOT / "bench") as tmp:
            yield tmp
        return
    folder = Path(keep) / str(size)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    yield str(folder)


def alternate(root: Path, sizes: list[int], n_questions: int, rounds: int) -> None:
    """Warm per-question latency of the floor, T2RAG and KG2RAG on kept corpora, the sizes timed
    in turn (round 1: every size, round 2: every size, ...) so the machine's load of the moment
    falls on all of them alike; prints every round and each size's median."""
    import statistics

    import torch

    from engine.methods import build_method, method_class
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    torch.set_num_threads(1)
    emb = RandomEmbedder()
    corpora = {n: Workspace(root / str(n), embedder=emb, keep_snapshots=0).open("scale") for n in sizes}
    reasoner = make_reasoner("", embedder=emb)
    qs = QUESTIONS[:n_questions]
    methods = {m: (build_method(m, reasoner), method_class(m).settings_cls()) for m in ("t2rag", "kg2rag")}
    for c in corpora.values():  # warm: index files, caches
        c.search_chunks(c.embed(["warm up"]), 10)
        for m, st in methods.values():
            m.answer(qs[0], c, st)
    times: dict[tuple[int, str], list[float]] = {}
    for r in range(rounds):
        for n, c in corpora.items():
            t0 = time.perf_counter()
            for q in qs:
                c.search_chunks(c.embed([q]), 10)
            times.setdefault((n, "floor"), []).append((time.perf_counter() - t0) / len(qs))
            for name, (m, st) in methods.items():
                t0 = time.perf_counter()
                for q in qs:
                    m.answer(q, c, st)
                times.setdefault((n, name), []).append((time.perf_counter() - t0) / len(qs))
            print(
                f"round {r + 1} {n:,}: "
                + ", ".join(f"{k} {times[(n, k)][-1] * 1000:.1f} ms" for k in ("floor", "t2rag", "kg2rag")),
                flush=True,
            )
    base = sizes[0]
    print(f"\nmedians over {rounds} rounds of {len(qs)} questions (x = times the {base:,} median):\n")
    print("| chunks | floor ms | t2rag ms | kg2rag ms |")
    print("|---|---|---|---|")
    for n in sizes:
        med = {k: statistics.median(times[(n, k)]) for k in ("floor", "t2rag", "kg2rag")}
        ref = {k: statistics.median(times[(base, k)]) for k in med}
        print(f"| {n:,} | " + " | ".join(f"{med[k] * 1000:.1f} ({med[k] / ref[k]:.2f}x)" for k in med) + " |")


def report(results: list[dict], args, wall: float) -> None:
    print(
        f"index kind {args.index_kind}; embedding: "
        + ", ".join(sorted({r["embedding"] for r in results}))
        + f"; total wall {wall / 60:.1f} min\n"
    )
    print(
        "| chunks | index (chunks/props) | ingest chunks/s (floor) | triplets s | build s | peak RSS MB "
        "| disk/chunk KB | cold open s | floor ms/q | semantic ms | t2rag ms | kg2rag ms | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        lat = r["latency"]
        print(
            f"| {r['chunks']:,} | {r['kinds']['chunks']}/{r['kinds']['propositions']} | "
            f"{r['ingest_cps']:.0f} ({r['floor_cps']:.0f}) | {r['triplets_s']:.1f} | {r['build_s']:.0f} | "
            f"{r['rss_mb']:.0f} | {r['disk_per_chunk'] / 1024:.2f} | {r['cold_s']:.2f} | "
            f"{r['floor_q_s'] * 1000:.1f} | {lat['semantic'] * 1000:.1f} | {lat['t2rag'] * 1000:.1f} | "
            f"{lat['kg2rag'] * 1000:.1f} | {r['wall_s']:.0f} |"
        )
    print("\nincremental add of 1% more documents (chunks, triplets, both indexes in step) vs the full build:\n")
    print("| chunks | full build s | +1% docs s | share |")
    print("|---|---|---|---|")
    for r in results:
        print(f"| {r['chunks']:,} | {r['build_s']:.1f} | {r['incr_s']:.2f} | {r['incr_s'] / r['build_s']:.1%} |")
    base = next((r for r in results if r["size"] == 10000), None)
    if base:
        print("\nwarm per-question latency against the 10k corpus (x = times the 10k latency):\n")
        print("| chunks | floor | semantic | t2rag | kg2rag |")
        print("|---|---|---|---|---|")
        for r in results:
            print(
                f"| {r['chunks']:,} | {r['floor_q_s'] / base['floor_q_s']:.2f}x | "
                + " | ".join(f"{r['latency'][m] / base['latency'][m]:.2f}x" for m in ("semantic", "t2rag", "kg2rag"))
                + " |"
            )
    if any(r.get("recall") for r in results):
        print(
            f"\n{args.recall_kind.upper()} against exact search over the same chunk vectors, 100 queries near "
            "stored vectors, one at a time:\n"
        )
        print("| chunks | recall@1 | recall@10 | exact ms/query | approx ms/query | approx build s |")
        print("|---|---|---|---|---|---|")
        for r in results:
            h = r.get("recall")
            if h:
                build = "(the corpus's own)" if h["build_s"] is None else f"{h['build_s']:.1f}"
                print(
                    f"| {r['chunks']:,} | {h['recall1']:.3f} | {h['recall10']:.3f} | {h['exact_ms']:.2f} | "
                    f"{h['approx_ms']:.2f} | {build} |"
                )
        if any(r["embedding"] == "random vectors" for r in results):
            print(
                "\n(random vectors have no neighbourhood structure: beyond the first hit every stored vector is "
                "about as far as the next, so recall@10 there is a worst case, not what the index gives on text "
                "embeddings; --real-max N measures it with the model)"
            )
    if len(results) > 1:
        print("\ngrowth exponent of per-question latency, log(t2/t1)/log(n2/n1) (0 = flat, 1 = linear):\n")
        print("| from | to | floor | semantic | t2rag | kg2rag | cold open |")
        print("|---|---|---|---|---|---|---|")
        for a, b in zip(results, results[1:]):
            g = lambda x, y, a=a, b=b: math.log(max(y, 1e-9) / max(x, 1e-9)) / math.log(b["chunks"] / a["chunks"])  # noqa: E731
            print(
                f"| {a['chunks']:,} | {b['chunks']:,} | {g(a['floor_q_s'], b['floor_q_s']):.2f} | "
                + " | ".join(f"{g(a['latency'][m], b['latency'][m]):.2f}" for m in ("semantic", "t2rag", "kg2rag"))
                + f" | {g(a['cold_s'], b['cold_s']):.2f} |"
            )


if __name__ == "__main__":
    main()
