"""Recall@10 against exact search on real text, with the store's own index code and parameters
(`bench/scale_bench.py --real-recall N`; issue 30).

The vectors are the bundled MiniLM's, of distinct real texts: the shared HotpotQA and MuSiQue
paragraphs (title line + text, as chunks are embedded), their sentences, and the MuSiQue set's GPT-3.5
OpenIE propositions ("s p o", as propositions are embedded): up to N of them, embedded once and kept
in bench/out/real_vectors.npz. The queries are the sets' questions (300) and 200 texts held out of
the base, one at a time. For each size n (subsets of the base) it builds what the store builds at
that many vectors - `FaissVectorStore(kind, expected=n)`: IVF with `ivf_cells(n)` cells and
`ivf_probes` of them scanned (the same share at every size, a million included), HNSW with the
store's M and efSearch - and compares its top 10 with exact search's.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "bench" / "out" / "real_vectors.npz"


def real_texts() -> tuple[list[str], list[str]]:
    """(base texts, questions) from ../shared/data."""
    texts: list[str] = []
    hp = json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for title, sents in hp.items():
        texts.append(title + "\n" + "".join(sents))
        texts += [s.strip() for s in sents if s.strip()]
    mq = json.loads((DATA / "musique_hipporag_train100" / "musique_train_corpus.json").read_text("utf-8"))
    for d in mq:
        texts.append(d["title"] + "\n" + d["text"])
        texts += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", d["text"]) if s]
    openie = json.loads((DATA / "musique_hipporag_train100" / "openie_gpt-3.5-turbo-1106.json").read_text("utf-8"))
    for doc in openie["docs"]:
        texts += [" ".join(map(str, t)) for t in doc.get("extracted_triples", []) if isinstance(t, list) and len(t) == 3]
    questions = [r["question"] for r in json.loads((DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text("utf-8"))]
    questions += [r["question"] for r in json.loads((DATA / "musique_hipporag_train100" / "musique_train.json").read_text("utf-8"))]
    questions += [r["question"] for r in json.loads((DATA / "musique_kag_100" / "musique_qa_100.json").read_text("utf-8"))]
    return list(dict.fromkeys(t for t in texts if len(t) > 10)), list(dict.fromkeys(questions))


def real_vectors(limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(base vectors, query vectors), embedded once and cached."""
    if CACHE.is_file():
        got = np.load(CACHE)
        if len(got["x"]) >= limit or got["complete"]:
            return got["x"][:limit], got["q"]
    import torch

    from engine.embed import get_bundled_embedder

    torch.set_num_threads(1)
    texts, questions = real_texts()
    emb = get_bundled_embedder()
    t0 = time.perf_counter()
    q = emb.encode(questions)
    x = emb.encode(texts[:limit], batch_size=128)
    print(f"embedded {len(x)} texts and {len(q)} questions in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(CACHE, x=x, q=q, complete=len(x) == len(texts))
    return x, q


def measure(limit: int, kinds: tuple[str, ...] = ("ivf", "hnsw"), log=print) -> list[dict]:
    """Recall@10 of each kind against exact search at sizes up to `limit` real vectors."""
    from engine.vectors import FaissVectorStore

    x, q = real_vectors(limit)
    rng = np.random.default_rng(1)
    held = rng.choice(len(x), 200, replace=False)
    keep = np.setdiff1d(np.arange(len(x)), held)
    queries = np.concatenate([q, x[held]]).astype(np.float32)
    base = x[keep].astype(np.float32)
    sizes = sorted({s for s in (5_000, 10_000, 20_000, len(base)) if s <= len(base)})
    out = []
    log("| real vectors | kind | cells | probed | recall@10 | recall@1 | exact ms/q | approx ms/q | build s |")
    log("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        part = base[rng.permutation(len(base))[:n]] if n < len(base) else base
        ids = np.arange(n, dtype=np.int64)
        exact = FaissVectorStore(part.shape[1], "flat")
        exact.add(ids, part)
        t0 = time.perf_counter()
        want = np.concatenate([exact.search(v[None], 10)[1] for v in queries])
        exact_ms = (time.perf_counter() - t0) / len(queries) * 1000
        for kind in kinds:
            store = FaissVectorStore(part.shape[1], kind, expected=n)
            t0 = time.perf_counter()
            store.train(part)
            store.add(ids, part)
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            got = np.concatenate([store.search(v[None], 10)[1] for v in queries])
            ms = (time.perf_counter() - t0) / len(queries) * 1000
            r10 = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(want.tolist(), got.tolist())]))
            r1 = float(np.mean(want[:, 0] == got[:, 0]))
            inner = store._index
            cells = int(inner.nlist) if kind == "ivf" else 0
            probed = int(inner.nprobe) if kind == "ivf" else 0
            row = {"n": n, "kind": kind, "cells": cells, "probed": probed, "recall10": r10, "recall1": r1,
                   "exact_ms": exact_ms, "ms": ms, "build_s": build}
            out.append(row)
            log(f"| {n:,} | {kind} | {cells or '-'} | {probed or '-'} | {r10:.3f} | {r1:.3f} | {exact_ms:.2f} | "
                f"{ms:.2f} | {build:.1f} |")
    return out
