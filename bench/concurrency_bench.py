"""N questions at once against one alone: do concurrent visitors wait on each other's encoding?

    .venv/bin/python bench/concurrency_bench.py [--n 1,3,8] [--reasoners provider,offline] [--wait 0.5]

Issue 30 measured three app sessions finishing at 9.4, 13.0 and 17.5 s against 6.7 s alone: every
encode held one process-wide lock. Here N threads (one per visitor, as Streamlit serves sessions)
each ask a different HotpotQA question through semantic RAG over one shared corpus, and the wall
time until the last one is answered is divided by the time of one question alone, measured in the
same run. Two encoders of the same bundled MiniLM are compared on the same questions:

* `numpy` - what questions use now (engine/embed/numpy_minilm.py): no lock, the GIL released in
  its matrix products;
* `torch+lock` - sentence-transformers behind its lock, what every question used before.

Two reasoners: `provider` answers after `--wait` seconds of sleep (a remote LLM: the wait is not
CPU, so N visitors can overlap almost fully; target N=3 within 1.5x of one alone), and `offline`
(the rule-based reasoner, CPU-bound: on a machine with C cores, N > C questions cannot all run at
once, so its ratio is bounded below by about N / C whatever the locking).
Corpus: 150 paragraphs of the HotpotQA set (../shared/data, else tests/fixtures/qa), built once
into bench/out/concurrency_workspace.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _data import need  # noqa: E402

WS = ROOT / "bench" / "out" / "concurrency_workspace"
TARGET = 1.5


class ProviderReasoner:
    """Answers after a fixed wait, as a remote model would; no CPU while waiting."""

    supports_free_text = False

    def __init__(self, wait: float):
        self.wait = wait
        self.name = f"sleep-{wait:g}s"

    def answer(self, question, context, *, facts=None):
        from engine.llm.base import LLMCall

        time.sleep(self.wait)
        return "", LLMCall(job="answer", model=self.name)


class LockedTorch:
    """The bundled model through sentence-transformers and its lock (the encoder before issue 28)."""

    def __init__(self, bundled):
        self.full = bundled.full
        self.spec, self.dim = bundled.spec, bundled.dim

    def encode(self, texts, batch_size: int = 64):
        return self.full.encode(list(texts), batch_size=batch_size)


def build(embedder, corpus_file: Path, qa_file: Path):
    from engine.ingest.datasets import parse_dataset_value
    from engine.store import Workspace

    ws = Workspace(WS, embedder=embedder)
    if not ws.exists("hotpot150"):
        raw = json.loads(corpus_file.read_text(encoding="utf-8"))
        raw = dict(list(raw.items())[:150])
        corpus = ws.create("hotpot150")
        corpus.add_documents(parse_dataset_value(raw, corpus_file.name).documents)
        corpus.close()
    questions = [r["question"] for r in json.loads(qa_file.read_text(encoding="utf-8"))]
    return questions


def wall(method, corpus, settings, questions: list[str]) -> float:
    """Seconds until every question, each on its own thread, is answered."""
    errors: list[BaseException] = []

    def ask(q: str) -> None:
        try:
            method.answer(q, corpus, settings)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(q,)) for q in questions]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,3,8")
    ap.add_argument("--reasoners", default="provider,offline")
    ap.add_argument("--wait", type=float, default=0.5, help="seconds the provider reasoner waits")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]

    from engine.embed import get_bundled_embedder
    from engine.embed.bundled import usable_cores
    from engine.methods.baselines import SemanticRAG, SemanticRAGSettings
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace

    corpus_file, qa_file = need("hotpotqa_hipporag_train100/hotpotqa_train_corpus.json",
                                "hotpotqa_hipporag_train100/hotpotqa_train.json")
    light = get_bundled_embedder()
    questions = build(light, corpus_file, qa_file)
    encoders = {"numpy": light, "torch+lock": LockedTorch(light)}
    print(f"{usable_cores()} usable cores; semantic RAG k=10 over 150 HotpotQA paragraphs; wall time of N "
          f"concurrent questions / one alone, median of {args.repeats} alternating repeats\n")
    print("| reasoner | encoder | 1 alone (s) | " + " | ".join(f"N={n} (s) | N={n} / 1" for n in ns if n > 1) + " |")
    print("|---|---|---|" + "---|---|" * sum(1 for n in ns if n > 1))
    settings = SemanticRAGSettings(k=10)
    for rname in args.reasoners.split(","):
        for ename, emb in encoders.items():
            corpus = Workspace(WS, embedder=emb).open("hotpot150")
            reasoner = ProviderReasoner(args.wait) if rname == "provider" else OfflineReasoner(emb)
            method = SemanticRAG(reasoner)
            wall(method, corpus, settings, questions[:2])  # warm: indexes read, encoder loaded
            times: dict[int, list[float]] = {n: [] for n in ns}
            for rep in range(args.repeats):
                for n in ns:  # alternate sizes within a repeat: load drift hits all alike
                    start = (rep * 17 + n) % (len(questions) - n)
                    times[n].append(wall(method, corpus, settings, questions[start : start + n]))
            alone = statistics.median(times[1]) if 1 in times else float("nan")
            cells = [f"{statistics.median(times[n]):.2f} | {statistics.median(times[n]) / alone:.2f}x"
                     for n in ns if n > 1]
            print(f"| {rname} | {ename} | {alone:.2f} | " + " | ".join(cells) + " |")
            corpus.close()
    print(f"\ntarget: N=3 within {TARGET}x of one alone (the provider row: a question's own CPU work is small "
          "next to the provider's wait, so overlap is what the ratio shows)")


if __name__ == "__main__":
    main()
