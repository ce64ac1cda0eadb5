"""T2RAG engine overhead per round, and the LLM bill of T2RAG against IRCoT.

    .venv/bin/python bench/t2rag_bench.py [--questions 20] [--repeat 5] [--workspace bench/out/t2rag_workspace]

Corpus: the 994 HotpotQA titles of hotpotqa_hipporag_train100/hotpotqa_train_corpus.json (../shared/data,
else tests/fixtures/qa),
paragraph chunks, triplets from the offline extractor topped up with one proposition per real
sentence (title, "states", sentence) until the proposition index holds at least 5,000 entries.
Built once into `--workspace` and reused.

Part 1, engine time. T2RAG runs with an instant scripted reasoner (replies computed before the
clock starts), so a round's engine time (`RoundTiming.engine`: query building, embedding, the
proposition search, the pool walk with its SQLite reads, chunk fetch and the state update) is
all but LLM time. The floor, measured in the same run on the same round's queries: encoding them
with the same embedder plus one bare FAISS search of those vectors over a flat index holding the
same proposition vectors. Medians over `--repeat` interleaved runs (the machine is shared).
Target: engine / floor < 2.

Part 2, the LLM bill. T2RAG and IRCoT answer the same questions through `LLMReasoner` over one
`ScriptedLLM` that replies by job (a bridge shape: two rounds for T2RAG, three reasoning steps for
IRCoT). Calls and tokens per question are what each method sends, counted by the scripted client.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(ROOT / "bench"))
from _data import need  # noqa: E402

#: the shared set, else its copy in tests/fixtures/qa (a fresh clone)
CORPUS_FILE, QA_FILE = need(
    "hotpotqa_hipporag_train100/hotpotqa_train_corpus.json", "hotpotqa_hipporag_train100/hotpotqa_train.json"
)
MIN_PROPOSITIONS = 5000


def build_corpus(ws_root: Path, embedder):
    from engine.core.types import ExtractionStatus
    from engine.ingest.datasets import parse_dataset_value
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace

    ws = Workspace(ws_root, embedder=embedder)
    if ws.exists("hotpot994"):
        corpus = ws.open("hotpot994")
        if corpus.counts().triplets >= MIN_PROPOSITIONS:
            return corpus
        corpus.close()
        ws.drop("hotpot994")
    t0 = time.perf_counter()
    raw = json.loads(CORPUS_FILE.read_text(encoding="utf-8"))
    docs = parse_dataset_value(raw, "hotpotqa_train_corpus.json").documents
    corpus = ws.create("hotpot994")
    corpus.add_documents(docs)
    extractor = OfflineReasoner()
    chunks = corpus.chunks()
    per_chunk = {c.chunk_id: list(extractor.extract(c.title, c.text)[0]) for c in chunks}
    total = sum(len(v) for v in per_chunk.values())
    # top up with one real sentence per proposition until the index is large enough
    sentence_split = re.compile(r"(?<=[.!?])\s+")
    for c in chunks:
        if total >= MIN_PROPOSITIONS * 1.05:
            break
        for s in sentence_split.split(c.text):
            s = s.strip()
            if len(s.split()) >= 4:
                per_chunk[c.chunk_id].append((c.title, "states", s[:200]))
                total += 1
    for cid, triplets in per_chunk.items():
        corpus.store_extraction(cid, triplets, ExtractionStatus(cid, "done", model="bench"))
    corpus.refresh_indexes()
    n = corpus.counts()
    print(
        f"built corpus: {n.documents} documents, {n.chunks} chunks, {n.triplets} propositions "
        f"in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return corpus


# --- part 1: engine time per round ---------------------------------------------------------------


class InstantReasoner:
    """Replies prepared before the clock starts: decomposition from the offline rules, and a solver
    that binds the first open placeholder to the top proposition's object (so rounds progress)."""

    name = "instant-scripted"
    supports_free_text = True

    def __init__(self, decomposition):
        self.decomposition = decomposition

    def decompose(self, question):
        from engine.llm.base import LLMCall

        return list(self.decomposition), LLMCall(job="decompose", model=self.name)

    def solve(self, question, resolved, open_triplets, evidence):
        from engine.llm.base import LLMCall
        from engine.reasoners.base import SolveResult

        bindings = {}
        searchable = [t for t in open_triplets if len(t.placeholders) == 1]
        if searchable and evidence.propositions:
            ph = searchable[0].placeholders[0]
            if not ph.startswith("?#"):
                bindings[ph] = " ".join(evidence.propositions[0].split()[-2:])
        return SolveResult(bindings=bindings), LLMCall(job="solve", model=self.name)

    def answer(self, question, context, *, facts=None):
        from engine.llm.base import LLMCall

        return "x", LLMCall(job="answer", model=self.name)


def bench_engine(corpus, embedder, questions, repeat):
    import faiss
    import numpy as np

    from engine.methods.t2rag import T2RAG
    from engine.reasoners.offline import OfflineReasoner

    tids = [t.triplet_id for t in corpus.triplets()]
    vecs = np.ascontiguousarray(corpus.proposition_vectors(tids), dtype=np.float32)
    bare = faiss.IndexFlatIP(vecs.shape[1])
    bare.add(vecs)
    offline = OfflineReasoner()
    decomps = [offline.decompose(q)[0] for q in questions]

    engine_t, floor_t, rounds_per_q, queries_per_round = [], [], [], []
    embed_t, search_t = [], []
    for q, dec in zip(questions, decomps):
        method = T2RAG(InstantReasoner(dec))
        method.answer(q, corpus)  # warm-up (SQLite pages, allocator)
        per_round_engine: dict[int, list[float]] = {}
        per_round_floor: dict[int, list[float]] = {}
        for _ in range(repeat):
            trace = method.answer(q, corpus).trace
            for r in trace.rounds:
                texts = [x.text for x in r.queries]
                t0 = time.perf_counter()
                qv = embedder.encode(texts)
                bare.search(np.ascontiguousarray(qv, dtype=np.float32), trace.settings.candidate_depth)
                per_round_floor.setdefault(r.index, []).append(time.perf_counter() - t0)
                per_round_engine.setdefault(r.index, []).append(r.timing.engine)
                embed_t.append(r.timing.embed)
                search_t.append(r.timing.search)
        rounds_per_q.append(len(trace.rounds))
        queries_per_round.extend(len(r.queries) for r in trace.rounds)
        for i in per_round_engine:
            engine_t.append(statistics.median(per_round_engine[i]))
            floor_t.append(statistics.median(per_round_floor[i]))
    e, f = statistics.median(engine_t), statistics.median(floor_t)
    print(
        f"\nPart 1: engine time per T2RAG round ({len(questions)} questions, {len(engine_t)} rounds, "
        f"{statistics.mean(rounds_per_q):.1f} rounds and {statistics.mean(queries_per_round):.1f} queries "
        f"per round on average, {len(tids)} propositions)"
    )
    print(
        f"  engine per round (median)        {e * 1000:8.1f} ms   (embed {statistics.median(embed_t) * 1000:.1f} ms,"
        f" search {statistics.median(search_t) * 1000:.1f} ms)"
    )
    print(f"  floor: encode + bare FAISS search {f * 1000:8.1f} ms")
    print(
        f"  ratio engine / floor (median)    {e / f:8.2f}   (sum over rounds: {sum(engine_t) / sum(floor_t):.2f};"
        f" target < 2)"
    )
    return e / f


# --- part 2: LLM calls and tokens ----------------------------------------------------------------


def scripted_reply(messages):
    """One ScriptedLLM for both methods: the reply depends on the prompt's job (its system text)."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("Break the question"):  # decompose
        return json.dumps({"triplets": [["Subject Entity", "relation", "?bridge"], ["?bridge", "property", "?answer"]]})
    if system.startswith("You resolve the unknowns"):  # solve
        m = re.search(r"Open triplets with one unknown:\s*<triplets>(.*?)</triplets>", user, re.S)
        names = re.findall(r"\?\w+", m.group(1)) if m else []
        return json.dumps({"bindings": {n: f"Value of {n[1:]}" for n in names}, "triplets": []})
    if system.startswith("You answer a multi-hop question"):  # IRCoT step
        steps_so_far = user.split("Reasoning so far:")[-1]
        if "(none yet)" in steps_so_far:
            return "The subject entity is related to a bridge entity named in the passages."
        if "property" not in steps_so_far:
            return "The bridge entity has the property the question asks about."
        return "So the answer is: Value of answer."
    return "Value of answer"  # final answer


def bench_bill(corpus, questions):
    from engine.llm.scripted import ScriptedLLM
    from engine.methods.ircot import IRCoT
    from engine.methods.t2rag import T2RAG
    from engine.reasoners.llm_reasoner import LLMReasoner

    rows = {}
    for name, cls in (("T2RAG", T2RAG), ("IRCoT", IRCoT)):
        llm = ScriptedLLM(scripted_reply)
        calls = prompt = completion = 0
        for q in questions:
            u = cls(LLMReasoner(llm)).answer(q, corpus).usage
            calls, prompt, completion = calls + u.calls, prompt + u.prompt_tokens, completion + u.completion_tokens
        n = len(questions)
        rows[name] = (calls / n, prompt / n, completion / n)
    print(
        f"\nPart 2: LLM bill per question, same {len(questions)} questions, same ScriptedLLM via LLMReasoner "
        "(k=5; T2RAG 2 rounds, IRCoT 3 steps)"
    )
    print(f"  {'method':8s} {'calls':>6s} {'prompt tok':>11s} {'completion tok':>15s} {'total tok':>10s}")
    for name, (c, p, o) in rows.items():
        print(f"  {name:8s} {c:6.1f} {p:11.0f} {o:15.0f} {p + o:10.0f}")
    t, i = sum(rows["T2RAG"][1:]), sum(rows["IRCoT"][1:])
    print(f"  T2RAG tokens = {t / i:.2f} x IRCoT's ({(1 - t / i) * 100:.0f}% fewer)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workspace", type=Path, default=ROOT / "bench" / "out" / "t2rag_workspace")
    args = ap.parse_args()

    from engine.embed import get_bundled_embedder

    embedder = get_bundled_embedder()
    corpus = build_corpus(args.workspace, embedder)
    records = json.loads(QA_FILE.read_text(encoding="utf-8"))
    questions = [r["question"] for r in records[: args.questions]]
    bench_engine(corpus, embedder, questions, args.repeat)
    bench_bill(corpus, questions)
    corpus.close()


if __name__ == "__main__":
    main()
