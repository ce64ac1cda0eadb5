"""Recall@10 against exact search on real text, with the store's own index code and parameters
(`bench/scale_bench.py --real-recall N`; issue 30).

The vectors are the bundled MiniLM's, of distinct real texts: the shared HotpotQA and MuSiQue
paragraphs (title line + text, as chunks are embedded), their sentences, and the MuSiQue set's GPT-3.5
OpenIE propositions ("s p o", as propositions are embedded): up to N of them, embedded once and kept
in bench/out/real_vectors.npz; or (`--real-source DIR`) the vectors the bench corpora in DIR already
store (chunks, propositions, sentences), when embedding tens of thousands of texts does not fit the
machine's load. The queries are the sets' questions (300) and 200 texts held out of
the base, one at a time. For each size n (subsets of the base) it builds the HNSW graph the store
builds (`FaissVectorStore("hnsw")`: the store's M and efConstruction, the same at every size, a
million included) and compares its top 10 with exact search's at several efSearch values.
`search_floor` times the index `auto` gives at 10k-1M vectors on perturbed real vectors.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "bench" / "out" / "real_vectors_v3.npz"
#: word windows of the paragraphs (`real_texts(windows=True)`): widths in words, each with a stride of half its width
WINDOWS = (8, 12, 20)
_SPLIT = r"(?<=[.!?])\s+(?=[A-Z])"


def real_texts(windows: bool = False) -> tuple[list[str], list[str]]:
    """(base texts, questions) from ../shared/data: about 32k distinct texts, or with `windows` about
    175k more, every 8-, 12- and 20-word window (stride half the width) of every paragraph: the short
    overlapping chunks fine-grained chunkers make, real text whose near-duplicate neighbours make
    recall harder than whole paragraphs do."""
    texts: list[str] = []
    hp = json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for title, sents in hp.items():
        texts.append(title + "\n" + "".join(sents))
        texts += [s.strip() for s in sents if s.strip()]
    mq = json.loads((DATA / "musique_hipporag_train100" / "musique_train_corpus.json").read_text("utf-8"))
    for d in mq:
        texts.append(d["title"] + "\n" + d["text"])
        texts += [s for s in re.split(_SPLIT, d["text"]) if s]
    kag = json.loads((DATA / "musique_kag_100" / "musique_qa_100.json").read_text("utf-8"))
    for r in kag:  # its paragraphs are a Python literal, not JSON
        paras = ast.literal_eval(r["paragraphs"]) if isinstance(r["paragraphs"], str) else r["paragraphs"]
        for p in paras:
            texts.append(p["title"] + "\n" + p["paragraph_text"])
            texts += [s for s in re.split(_SPLIT, p["paragraph_text"]) if s]
    # pairs of consecutive sentences: more distinct real text, as a chunker cutting mid-paragraph makes
    paragraphs = [t.split("\n", 1)[1] for t in texts if "\n" in t]
    for para in paragraphs:
        sents = [s for s in re.split(_SPLIT, para) if s]
        texts += [a + " " + b for a, b in zip(sents, sents[1:])]
    openie = json.loads((DATA / "musique_hipporag_train100" / "openie_gpt-3.5-turbo-1106.json").read_text("utf-8"))
    for doc in openie["docs"]:
        texts += [
            " ".join(map(str, t)) for t in doc.get("extracted_triples", []) if isinstance(t, list) and len(t) == 3
        ]
    if windows:
        for para in dict.fromkeys(paragraphs):
            words = para.split()
            for w in WINDOWS:
                texts += [" ".join(words[i : i + w]) for i in range(0, max(1, len(words) - w + 1), w // 2)]
    questions = [
        r["question"]
        for r in json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text("utf-8"))
    ]
    questions += [
        r["question"]
        for r in json.loads((DATA / "musique_hipporag_train100" / "musique_train.json").read_text("utf-8"))
    ]
    questions += [
        r["question"] for r in json.loads((DATA / "musique_kag_100" / "musique_qa_100.json").read_text("utf-8"))
    ]
    return list(dict.fromkeys(t for t in texts if len(t) > 10)), list(dict.fromkeys(questions))


def stored_vectors(workspace: Path) -> np.ndarray:
    """The real MiniLM vectors the bench corpora in `workspace` already hold (chunks, propositions,
    sentences: bench/answer_step_bench.py and bench/retrieval_quality.py build them), deduplicated."""
    import sqlite3

    parts = []
    for db_path in sorted(workspace.glob("*/corpus.sqlite")):
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        parts += [np.frombuffer(v, np.float32) for (v,) in db.execute("SELECT vec FROM chunks")]
        parts += [np.frombuffer(v, np.float32) for (v,) in db.execute("SELECT vec FROM triplets WHERE vec IS NOT NULL")]
        if db.execute("SELECT 1 FROM sqlite_master WHERE name='sentence_vecs'").fetchone():
            parts += [
                np.frombuffer(v, np.float16).astype(np.float32) for (v,) in db.execute("SELECT vec FROM sentence_vecs")
            ]
        db.close()
    x = np.unique(np.stack(parts), axis=0) if parts else np.zeros((0, 384), np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def real_vectors(limit: int, source: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(base vectors, query vectors): the texts above embedded once and cached, or (`source`, a
    workspace folder) the vectors its corpora store, with the questions embedded now.

    The texts are embedded shortest first, in blocks, each block added to the cache as it is done:
    a run stopped (or too slow under the machine's load) keeps what it embedded, the next run goes
    on from there, and a short run still gets the most real vectors for its time."""
    from engine.embed import get_bundled_embedder

    if source:
        return stored_vectors(Path(source))[:limit], get_bundled_embedder().encode(real_texts()[1])
    texts, questions = real_texts()
    if limit > len(texts):  # beyond the ~32k whole texts: their word windows too
        texts, questions = real_texts(windows=True)
    texts = sorted(texts, key=len)
    x, q = np.zeros((0, 384), np.float32), np.zeros((0, 384), np.float32)
    if CACHE.is_file():
        got = np.load(CACHE)
        x, q = got["x"], got["q"]
    if len(x) >= min(limit, len(texts)):
        return x[:limit], q
    import torch

    torch.set_num_threads(1)
    emb = get_bundled_embedder()
    if not len(q):
        q = emb.encode(questions)
    t0, done = time.perf_counter(), len(x)
    for at in range(len(x), min(limit, len(texts)), 2048):
        x = np.concatenate([x, emb.encode(texts[at : min(at + 2048, limit)], batch_size=128)])
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        np.savez(CACHE.with_suffix(".tmp.npz"), x=x, q=q)
        CACHE.with_suffix(".tmp.npz").replace(CACHE)
        print(
            f"embedded {len(x):,} of {len(texts):,} texts ({len(x) - done:,} in {time.perf_counter() - t0:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return x[:limit], q


def _auto_store(n: int, dim: int):
    """An empty store of the kind `auto` gives a corpus of n vectors, with the store's parameters."""
    from engine.store.settings import AUTO_HNSW_AT
    from engine.vectors import FaissVectorStore

    return FaissVectorStore(dim, "hnsw" if n >= AUTO_HNSW_AT else "flat", expected=n)


def _recall10(want: np.ndarray, got: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want.tolist(), got.tolist())]))


def measure(
    limit: int,
    source: str = "",
    efs: tuple[int, ...] = (32, 64, 96, 128),
    log=print,
    sizes: tuple[int, ...] = (5_000, 10_000, 20_000),
) -> list[dict]:
    """Recall@10 against exact search of the HNSW graph `auto` builds from AUTO_HNSW_AT vectors up
    (M and efConstruction the same at every size; efSearch grows with it, hnsw.HNSW_EF_SEARCH_STEPS),
    at `sizes` and `limit` real vectors, searched with each efSearch in `efs` (the store's for that
    size is marked); the queries one at a time."""
    import faiss

    from engine.vectors import FaissVectorStore, hnsw

    x, q = real_vectors(limit, source)
    steps = ", ".join(f"{ef} from {at:,}" for at, ef in hnsw.HNSW_EF_SEARCH_STEPS)
    log(
        f"{len(x):,} real vectors ({source or CACHE.name}), {len(q)} questions + 200 held-out texts as queries; "
        f"HNSW M {hnsw.HNSW_M}, efConstruction {hnsw.HNSW_EF_CONSTRUCTION}, the store's efSearch {steps} vectors"
    )
    rng = np.random.default_rng(1)
    held = rng.choice(len(x), 200, replace=False)
    keep = np.setdiff1d(np.arange(len(x)), held)
    queries = np.concatenate([q, x[held]]).astype(np.float32)
    base = x[keep].astype(np.float32)
    sizes = sorted({s for s in (*sizes, len(base)) if s <= len(base)})
    out = []
    log(
        "| real vectors | kind | efSearch | recall@10 | recall@1 | questions only @10 | exact ms/q | approx ms/q "
        "| build s |"
    )
    log("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        part = base[rng.permutation(len(base))[:n]] if n < len(base) else base
        ids = np.arange(n, dtype=np.int64)
        exact = FaissVectorStore(part.shape[1], "flat")
        exact.add(ids, part)
        t0 = time.perf_counter()
        want = np.concatenate([exact.search(v[None], 10)[1] for v in queries])
        exact_ms = (time.perf_counter() - t0) / len(queries) * 1000
        t0 = time.perf_counter()
        store = FaissVectorStore(part.shape[1], "hnsw", expected=n)
        store.add(ids, part)
        build = time.perf_counter() - t0
        graph = faiss.downcast_index(store._index.index)
        for ef in efs:
            graph.hnsw.efSearch = ef
            t0 = time.perf_counter()
            got = np.concatenate([store.search(v[None], 10)[1] for v in queries])
            ms = (time.perf_counter() - t0) / len(queries) * 1000
            r10, rq = _recall10(want, got), _recall10(want[: len(q)], got[: len(q)])
            r1 = float(np.mean(want[:, 0] == got[:, 0]))
            mark = " (the store's)" if ef == hnsw.ef_search_for(n) else ""
            out.append(
                {
                    "n": n,
                    "ef": ef,
                    "recall10": r10,
                    "recall1": r1,
                    "questions10": rq,
                    "ms": ms,
                    "exact_ms": exact_ms,
                    "build_s": build,
                }
            )
            log(
                f"| {n:,} | hnsw | {ef}{mark} | {r10:.3f} | {r1:.3f} | {rq:.3f} | {exact_ms:.2f} | {ms:.2f} | "
                f"{build:.1f} |"
            )
    return out


def perturbed(real: np.ndarray, n: int, seed: int = 0, noise: float = 0.5) -> np.ndarray:
    """n unit vectors: the real ones cycled, each copy moved off its original by Gaussian noise of
    `noise` in norm, so they keep text's neighbourhood structure (clusters of topics) where uniform
    random vectors have none; for latency, not recall."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, real.shape[1]), np.float32)
    for at in range(0, n, 65536):
        m = min(65536, n - at)
        part = real[np.arange(at, at + m) % len(real)]
        part = part + rng.standard_normal(part.shape).astype(np.float32) * (noise / np.sqrt(real.shape[1]))
        out[at : at + m] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def search_floor(sizes: list[int], rounds: int = 5, queries: int = 100, log=print) -> None:
    """Per-question search cost of the index `auto` gives at each size, on perturbed real vectors
    (`perturbed`), the sizes timed in turn for `rounds` rounds (medians: the machine's load hits
    every size alike), as ratios to the first size: the raw search (one query, k 10) and a T2RAG
    retrieval round (encode three query texts with the bundled model, one search of the three
    vectors at T2RAG's candidate depth 50, as engine/methods/t2rag/retrieval.py does)."""
    import os
    import tempfile

    from engine.embed import get_bundled_embedder

    got = np.load(CACHE)  # what `real_vectors` has embedded so far: the seeds of the perturbed copies
    x, qv = got["x"], got["q"]
    log(f"perturbed copies of {len(x):,} real vectors ({CACHE.name}); queries: {min(queries, len(qv))} questions")
    emb = get_bundled_embedder()
    texts = real_texts()[1]
    stores = {}
    for n in sizes:
        vecs = perturbed(x, n)
        t0 = time.perf_counter()
        store = _auto_store(n, x.shape[1])
        store.add(np.arange(n, dtype=np.int64), vecs)
        build = time.perf_counter() - t0
        del vecs
        with tempfile.TemporaryDirectory(dir=CACHE.parent) as tmp:
            store.save(Path(tmp) / "i.index", "bench")
            disk = os.path.getsize(Path(tmp) / "i.index")
        stores[n] = (store, build, disk)
        log(f"built {n:,}: {store.kind} in {build:.0f} s", file=sys.stderr, flush=True)
    q = qv[:queries]
    trios = [texts[i : i + 3] for i in range(0, 3 * 20, 3)]
    raw: dict[int, list[float]] = {n: [] for n in sizes}
    rnd: dict[int, list[float]] = {n: [] for n in sizes}
    for store, _, _ in stores.values():
        store.search(q[:3], 50)
        emb.encode(trios[0])
    for _ in range(rounds):
        for n, (store, _, _) in stores.items():
            t0 = time.perf_counter()
            for v in q:
                store.search(v[None], 10)
            raw[n].append((time.perf_counter() - t0) / len(q) * 1000)
            t0 = time.perf_counter()
            for trio in trios:
                store.search(emb.encode(trio), 50)
            rnd[n].append((time.perf_counter() - t0) / len(trios) * 1000)
    b_raw, b_rnd = float(np.median(raw[sizes[0]])), float(np.median(rnd[sizes[0]]))
    log("| vectors | kind | build s | index file MB | search ms/q | x first | T2RAG round ms | x first |")
    log("|---|---|---|---|---|---|---|---|")
    for n, (store, build, disk) in stores.items():
        r, t = float(np.median(raw[n])), float(np.median(rnd[n]))
        log(
            f"| {n:,} | {store.kind} | {build:.1f} | {disk / 2**20:.0f} | {r:.3f} | {r / b_raw:.2f}x | {t:.1f} | "
            f"{t / b_rnd:.2f}x |"
        )
