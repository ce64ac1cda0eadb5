"""N questions at once against one alone: do concurrent visitors wait on each other's encoding?

    .venv/bin/python bench/concurrency_bench.py [--n 1,3,8] [--reasoners provider,offline] [--wait 0.5]

Issue 30 measured three app sessions finishing at 9.4, 13.0 and 17.5 s against 6.7 s alone: every
encode held one process-wide lock. Here N threads (one per visitor, as Streamlit serves sessions)
each ask a different HotpotQA question through semantic RAG over one shared corpus, and the wall
time until the last one is answered is divided by the mean time of the same questions asked one at
a time (N = 1), measured in the same run. Three encoders of the same bundled MiniLM are compared on the same questions:

* `numpy, coalesced` - what questions use now: the numpy forward (engine/embed/numpy_minilm.py, no
  lock, the GIL released in its matrix products), concurrent small encodes sharing one forward
  (engine/embed/coalesce.py);
* `numpy, separate` - the same encoder, each call its own forward;
* `torch+lock` - sentence-transformers behind its lock, what every question used before.

Two reasoners: `provider` answers after `--wait` seconds of sleep (a remote LLM: the wait is not
CPU, so N visitors can overlap almost fully; target N=3 within 1.5x of one alone), and `offline`
(the rule-based reasoner built as the app builds it, with the corpus's stored sentence vectors;
CPU-bound: on a machine with C cores, N > C questions cannot all run at once, so its ratio is
bounded below by about N / C whatever the locking).
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


class Separate:
    """The numpy encoder with every call its own forward pass (before engine/embed/coalesce.py)."""

    def __init__(self, bundled):
        self._light = bundled._light
        self.spec, self.dim = bundled.spec, bundled.dim

    def encode(self, texts, batch_size: int = 32):
        return self._light.encode(list(texts), batch_size=min(batch_size, 32))


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
    ap.add_argument("--n", default="3,8")
    ap.add_argument("--reasoners", default="provider,offline")
    ap.add_argument("--wait", type=float, default=0.5, help="seconds the provider reasoner waits")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]

    from engine.embed import get_bundled_embedder
    from engine.embed.bundled import usable_cores
    from engine.methods.baselines import SemanticRAG, SemanticRAGSettings
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    corpus_file, qa_file = need(
        "hotpotqa_hipporag_train100/hotpotqa_train_corpus.json", "hotpotqa_hipporag_train100/hotpotqa_train.json"
    )
    light = get_bundled_embedder()
    questions = build(light, corpus_file, qa_file)
    encoders = {"numpy, coalesced": light, "numpy, separate": Separate(light), "torch+lock": LockedTorch(light)}
    print(
        f"{usable_cores()} usable cores; semantic RAG k=10 over 150 HotpotQA paragraphs. For each N, the same N "
        "questions are asked one at a time (their mean is 'alone') and then all at once (wall time until the "
        f"last answer); ratio = at once / alone; medians of {args.repeats} repeats, a fresh reasoner for each "
        "measurement (the offline reasoner memoises sentence vectors)\n"
    )
    print("| reasoner | encoder | " + " | ".join(f"N={n} alone (s) | N={n} at once (s) | ratio" for n in ns) + " |")
    print("|---|---|" + "---|---|---|" * len(ns))
    settings = SemanticRAGSettings(k=10)
    for rname in args.reasoners.split(","):
        for ename, emb in encoders.items():
            corpus = Workspace(WS, embedder=emb).open("hotpot150")

            def method(rname=rname, emb=emb, corpus=corpus):
                if rname == "provider":
                    return SemanticRAG(ProviderReasoner(args.wait))
                # as the app builds it (Session.reasoner): the corpus's stored sentence vectors, so the
                # answer step embeds the question, not every context sentence
                return SemanticRAG(make_reasoner("", embedder=emb, sentence_vectors=corpus.sentence_vectors))

            wall(method(), corpus, settings, questions[:2])  # warm: indexes read, encoder loaded
            rows: dict[int, list[tuple[float, float]]] = {n: [] for n in ns}
            for rep in range(args.repeats):
                for n in ns:
                    start = (rep * 17 + n) % (len(questions) - n)
                    qs = questions[start : start + n]
                    alone = statistics.mean(wall(method(), corpus, settings, [q]) for q in qs)
                    rows[n].append((alone, wall(method(), corpus, settings, qs)))
            cells = []
            for n in ns:
                alone, together = (statistics.median(r[i] for r in rows[n]) for i in (0, 1))
                ratio = statistics.median(r[1] / r[0] for r in rows[n])
                cells.append(f"{alone:.2f} | {together:.2f} | {ratio:.2f}x")
            print(f"| {rname} | {ename} | " + " | ".join(cells) + " |")
            corpus.close()
    print(
        f"\ntarget: N=3 within {TARGET}x of one alone (the provider row: a question's own CPU work is small "
        "next to the provider's wait, so overlap is what the ratio shows)"
    )


if __name__ == "__main__":
    main()
