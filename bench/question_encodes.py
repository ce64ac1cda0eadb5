"""What a question asks of the encoder, and what it costs: the packed forward and the per-question memo
against the padded forward and no memo, on the same texts and weights, in the same process.

    .venv/bin/python bench/question_encodes.py [--threads 1] [--repeats 9]

Each of the bundled 30-question HotpotQA sample's questions is answered by T2RAG and by KG2RAG with
the offline reasoner, as the app answers it, and every call that reaches the bundled numpy encoder
is recorded twice: inside a question's memo (engine/embed/memo.py, as questions now run) and without
it (as before), after a first pass that fills the process's relation-phrase vectors
(engine/reasoners/offline/match.py keeps them, as a running server has them). Those calls are then
replayed on the encoder, timed in CPU seconds of this thread (`--threads` BLAS threads, 1 by default
so the CPU time is the arithmetic, not a helper thread's wait): the packed forward (dense products
over the real tokens only, what NumpyMiniLM does now) against the padded forward (every text of a
batch padded to its longest, what it did before; kept here as the baseline), and the vectors of both
compared.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--threads", default="1", help="BLAS threads (set before numpy loads)")
ap.add_argument("--repeats", type=int, default=9)
ARGS = ap.parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = ARGS.threads

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.embed import memo  # noqa: E402
from engine.embed.numpy_minilm import _HEADS, NumpyMiniLM, _gelu, _layer_norm  # noqa: E402

WS = ROOT / "bench" / "out" / "question_encodes_ws"


def padded_forward(m: NumpyMiniLM, seqs: list[list[int]]) -> np.ndarray:
    """The previous forward: a (texts, longest) batch through every product, padding included."""
    b, n = len(seqs), max(len(s) for s in seqs)
    ids = np.zeros((b, n), dtype=np.int64)
    mask = np.zeros((b, n), dtype=np.float32)
    for i, s in enumerate(seqs):
        ids[i, : len(s)], mask[i, : len(s)] = s, 1.0
    x = m._words[ids].astype(np.float32) + m._pos[:n] + m._type0
    x = _layer_norm(x.reshape(b * n, m.dim), *m._ln)
    bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
    for layer in m._layers:
        d, hd = x.shape[1], x.shape[1] // _HEADS
        qkv = (x @ layer.qkv + layer.qkv_b).reshape(b, n, 3, _HEADS, hd).transpose(2, 0, 3, 1, 4)
        scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(hd)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(b * n, d)
        x = _layer_norm(ctx @ layer.attn_out + layer.attn_out_b + x, *layer.ln1)
        h = _gelu(x @ layer.up + layer.up_b)
        x = _layer_norm(h @ layer.down + layer.down_b + x, *layer.ln2)
    x = x.reshape(b, n, m.dim)
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def record(with_memo: bool) -> dict[str, list[list[str]]]:
    """Per method, every list of texts its 30 questions sent to the numpy encoder."""
    from engine.embed import get_bundled_embedder
    from engine.session import Session
    from engine.session.samples import build_sample
    from engine.store import Workspace

    emb = get_bundled_embedder()
    ws = Workspace(WS, embedder=emb)
    if not ws.exists("hotpotqa-sample"):
        print("  " + build_sample(ws, "hotpotqa-sample"))
    corpus = ws.open("hotpotqa-sample")
    calls: list[list[str]] = []
    small = emb._small  # a question's calls: the coalescing queue in front of the numpy encoder
    real = small._encode
    small._encode = lambda texts: (calls.append(list(texts)), real(texts))[1]
    saved = memo.one_question
    if not with_memo:
        memo.one_question = contextlib.nullcontext  # type: ignore[assignment]
    out = {}
    try:
        for method in ("t2rag", "kg2rag"):
            calls.clear()
            for q in corpus.questions():
                Session(workspace=WS).answer(method, q.question, corpus)
            out[method] = [list(c) for c in calls]
    finally:
        small._encode = real
        memo.one_question = saved
    return out


def replay(m: NumpyMiniLM, calls: list[list[str]], forward) -> tuple[float, np.ndarray]:
    """CPU seconds of encoding every call with `forward` in place of the encoder's, and the rows."""
    own = m._forward
    m._forward = lambda seqs: forward(m, seqs)  # type: ignore[method-assign]
    try:
        t0 = time.thread_time()
        rows = [m.encode(c) for c in calls]
        return time.thread_time() - t0, np.concatenate(rows)
    finally:
        m._forward = own  # type: ignore[method-assign]


def tokens(m: NumpyMiniLM, calls: list[list[str]]) -> int:
    return sum(len(m._tok.encode(t).ids) for c in calls for t in c)


def main() -> None:
    from engine.embed import get_bundled_embedder

    m = get_bundled_embedder()._light
    record(with_memo=True)  # warm: relation phrases are kept per process (as a running server has them)
    before, now = record(with_memo=False), record(with_memo=True)
    print(f"BLAS threads: {ARGS.threads}; CPU ms per question (this thread), medians of {ARGS.repeats} replays\n")
    print(
        "| method | texts/q before -> with memo | tokens/q | padded forward, no memo | packed, no memo | "
        "packed + memo | ratio | max vector diff |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for method in before:
        nq = 30
        runs: dict[str, list[float]] = {"pad": [], "pack": [], "both": []}
        for i in range(ARGS.repeats):  # alternate which goes first
            order = [
                ("pad", before[method], padded_forward),
                ("pack", before[method], NumpyMiniLM._forward),
                ("both", now[method], NumpyMiniLM._forward),
            ]
            for name, calls, fwd in order if i % 2 == 0 else order[::-1]:
                secs, rows = replay(m, calls, fwd)
                runs[name].append(1000 * secs / nq)
                if name == "pad":
                    pad_rows = rows
                elif name == "pack":
                    pack_rows = rows
        med = {k: statistics.median(v) for k, v in runs.items()}
        diff = float(np.abs(pad_rows - pack_rows).max())
        texts = (sum(map(len, before[method])) / nq, sum(map(len, now[method])) / nq)
        toks = (tokens(m, before[method]) / nq, tokens(m, now[method]) / nq)
        print(
            f"| {method} | {texts[0]:.1f} -> {texts[1]:.1f} | {toks[0]:.0f} -> {toks[1]:.0f} | {med['pad']:.1f} | "
            f"{med['pack']:.1f} | {med['both']:.1f} | {med['both'] / med['pad']:.2f}x | {diff:.1e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
