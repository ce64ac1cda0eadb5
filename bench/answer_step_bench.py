"""The offline answer step, per question, with stored sentence vectors against the old path (every
context sentence embedded per question), in the same process (issue 28 item 2, issue 30).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/answer_step_bench.py [--questions 100]
        [--sets hotpotqa musique] [--methods semantic t2rag kg2rag] [--eval 20]

Corpora: the shared HotpotQA and MuSiQue sets as bench/retrieval_quality.py builds them (in
bench/out/workspace), and the bundled 30-question HotpotQA sample. A corpus made before sentence
vectors gets them here (`fill_sentence_vectors`, timed: the build cost; the table's disk follows).

Each method answers each question once with the offline reasoner; every answer call it makes
(question, context, facts) is recorded. Then each recorded call is answered as before ("old":
every context sentence embedded, every paragraph's rule triplets extracted) and with the stored
sentence vectors and an empty triplet memo ("cold": a first question on paragraphs not seen yet),
alternating which goes first; then all calls again in order with the memo filling as an eval
fills it ("new"). Median and p95 per call of each, and the ratios. The answers of both are scored (EM/F1)
against the gold answers of the 30-question sample. `--eval N` runs `run_eval` over N questions of
the HotpotQA set with four methods and extrapolates its wall time to 500 questions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def corpora(sets: list[str], limit: int | None, log=print):
    from retrieval_quality import BENCH_WS, build_corpus, dataset_files

    from engine.session.samples import build_sample
    from engine.store import Workspace

    ws = Workspace(BENCH_WS)
    out = {}
    for name in sets:
        files = dataset_files(name)  # a set missing here (a fresh clone) is skipped with a line naming it
        if files is None:
            continue
        dataset, triplets = files
        # a set cut to its first `limit` questions (their paragraphs only) is a corpus of its own
        label = name if limit is None or name == "hotpotqa" else f"{name}-{limit}"
        out[label] = build_corpus(
            ws, label, dataset, limit=None if label == name else limit, triplets=triplets, log=log
        )
    if not ws.exists("hotpotqa-sample") or ws.open("hotpotqa-sample").counts().pending:
        log("  " + build_sample(ws, "hotpotqa-sample"))
    out["hotpotqa-30"] = ws.open("hotpotqa-sample")
    return out


def fill(corpus, log=print) -> None:
    t0 = time.perf_counter()
    n = corpus.fill_sentence_vectors()
    stored, size = corpus._db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(vec)), 0) FROM sentence_vecs").fetchone()
    chunks = corpus.counts().chunks
    log(
        f"  {corpus.name}: {n} sentence vectors embedded now in {time.perf_counter() - t0:.1f}s; {stored} stored "
        f"for {chunks} chunks ({stored / max(chunks, 1):.1f} a chunk, {size / 1e6:.1f} MB of vectors, "
        f"~{(size + 30 * stored) / max(chunks, 1) / 1024:.2f} KB a chunk with keys and b-tree)"
    )


def sentence_cost(corpus, n: int = 200, log=print) -> None:
    """What sentence vectors add to indexing: encoding n chunks' texts against encoding their
    sentences, alternately, same embedder and process."""
    from engine.store.util import embedding_text
    from engine.vectors.sentences import split_for_answers

    chunks = corpus.chunks()[:n]
    texts = [embedding_text(c) for c in chunks]
    sentences = list(dict.fromkeys(s for t in texts for s in split_for_answers(t)))
    spent = {"chunks": 0.0, "sentences": 0.0}
    for _ in range(2):
        for label, batch in (("chunks", texts), ("sentences", sentences)):
            t0 = time.perf_counter()
            corpus.embedder.encode(batch)
            spent[label] += time.perf_counter() - t0
    log(
        f"  {corpus.name}: encoding {len(texts)} chunks {spent['chunks'] / 2:.1f}s, their {len(sentences)} sentences "
        f"{spent['sentences'] / 2:.1f}s: sentence vectors add {spent['sentences'] / spent['chunks']:.2f}x the "
        f"chunk encoding to indexing"
    )


def record_calls(corpus, methods: list[str], n: int) -> list[tuple]:
    """(method, question, gold answers, context, facts) of every answer call the methods make."""
    from engine.methods import build_method, method_class
    from engine.reasoners.offline import OfflineReasoner

    calls: list[tuple] = []

    class Recording(OfflineReasoner):
        method = ""
        golds: tuple = ()

        def answer(self, question, context, *, facts=None):
            calls.append((self.method, question, self.golds, context, list(facts or [])))
            return super().answer(question, context, facts=facts)

    rec = Recording(corpus.embedder)
    rec.scorer.sentence_vectors = corpus.sentence_vectors
    questions = corpus.questions()[:n]
    for name in methods:
        method, settings = build_method(name, rec), method_class(name).settings_cls()
        rec.method = name
        for q in questions:
            rec.golds = tuple(q.answers)
            method.answer(q.question, corpus, settings)
    return calls


def time_calls(corpus, calls: list[tuple]) -> dict:
    """Each call answered three ways, in turn (the order rotating): `old` as before this change
    (every context sentence embedded, every paragraph's rule triplets extracted), `cold` with the
    stored sentence vectors and an empty triplet memo (a first question on fresh paragraphs), `new`
    with both, the memo as a run accumulates it (an eval; a visitor asking about the same pages).
    Times in ms."""
    from engine.eval.metrics import answer_score
    from engine.reasoners.offline import OfflineReasoner, rules

    memo = rules._extract_memo
    old = OfflineReasoner(corpus.embedder)
    new = OfflineReasoner(corpus.embedder)
    new.scorer.sentence_vectors = corpus.sentence_vectors

    def run_old(q, ctx, facts):
        rules._extract_memo = memo.__wrapped__  # the unmemoised extraction
        try:
            return old.answer(q, ctx, facts=facts)
        finally:
            rules._extract_memo = memo

    def run_cold(q, ctx, facts):
        memo.cache_clear()
        return new.answer(q, ctx, facts=facts)

    def run_new(q, ctx, facts):
        return new.answer(q, ctx, facts=facts)

    ways = [("old", run_old), ("cold", run_cold)]
    for run in (run_old, run_cold, run_new):  # warm: the relation forms' vectors, lazy imports
        for c in calls[:3]:
            run(c[1], c[3], c[4])
    times: dict[str, list[float]] = {"old": [], "cold": [], "new": []}
    scores: dict[str, dict[str, list]] = {"old": {}, "cold": {}, "new": {}}

    def timed(label, run, method, question, golds, context, facts):
        t0 = time.perf_counter()
        answer, _ = run(question, context, facts)
        times[label].append((time.perf_counter() - t0) * 1000)
        s = answer_score(answer, [g for g in golds if g])
        scores[label].setdefault(method, []).append((s.em, s.f1, answer))

    for i, call in enumerate(calls):  # old and cold alternately, which goes first rotating
        for label, run in ways[i % 2 :] + ways[: i % 2]:
            timed(label, run, *call)
    memo.cache_clear()
    for call in calls:  # then the run as an eval makes it: the memo accumulating
        timed("new", run_new, *call)
    return {"times": times, "scores": scores}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def eval_extrapolated(corpus, n: int, log=print) -> None:
    """`run_eval` of n questions x four methods, the old answer step (every sentence embedded, no
    triplet memo) then the new, in the same process; wall time extrapolated to 500 questions."""
    from engine.eval.harness import run_eval
    from engine.reasoners import make_reasoner
    from engine.reasoners.offline import rules

    methods = ["semantic", "hybrid", "t2rag", "kg2rag"]
    memo = rules._extract_memo
    wall = {}
    for label in ("old", "new"):
        if label == "old":
            rules._extract_memo = memo.__wrapped__
            reasoner = make_reasoner("", embedder=corpus.embedder)
        else:
            rules._extract_memo = memo
            memo.cache_clear()
            reasoner = make_reasoner("", embedder=corpus.embedder, sentence_vectors=corpus.sentence_vectors)
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            run_eval(corpus, methods, reasoner, n, out)
            wall[label] = time.perf_counter() - t0
        log(
            f"eval ({label} answer step) of {n} questions x {len(methods)} methods ({', '.join(methods)}): "
            f"{wall[label]:.1f}s, {wall[label] / n:.2f}s a question -> 500 questions ~{wall[label] / n * 500 / 60:.1f} "
            f"min (extrapolated)",
            flush=True,
        )
    rules._extract_memo = memo
    log(f"eval wall new/old: {wall['new'] / wall['old']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--sets", nargs="+", default=["hotpotqa", "musique"])
    ap.add_argument("--methods", nargs="+", default=["semantic", "t2rag", "kg2rag"])
    ap.add_argument("--eval", type=int, default=0, metavar="N")
    ap.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="Q",
        help="build the MuSiQue corpora from their first Q questions' paragraphs only (a loaded machine)",
    )
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    found = corpora(args.sets, args.limit)
    print(
        "| set | calls | old median ms | old p95 ms | cold median ms | cold p95 ms | new median ms | new p95 ms "
        "| median new/old | median cold/old |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    quality = None
    for name, corpus in found.items() if args.questions else ():  # --questions 0: only the eval
        fill(corpus)
        calls = record_calls(corpus, args.methods, 30 if name == "hotpotqa-30" else args.questions)
        res = time_calls(corpus, calls)
        t = res["times"]
        med = {w: statistics.median(t[w]) for w in t}
        print(
            f"| {name} | {len(calls)} | {med['old']:.1f} | {pct(t['old'], 0.95):.1f} | {med['cold']:.1f} | "
            f"{pct(t['cold'], 0.95):.1f} | {med['new']:.1f} | {pct(t['new'], 0.95):.1f} | "
            f"{med['new'] / med['old']:.3f} | {med['cold'] / med['old']:.3f} |",
            flush=True,
        )
        if name == "hotpotqa-30":
            quality = res["scores"]
            sentence_cost(corpus)
    if quality:
        print("\nHotpotQA 30-question sample, offline answers through both paths (same contexts):\n")
        print("| method | old EM | old F1 | new EM | new F1 | answers that differ |")
        print("|---|---|---|---|---|---|")
        for method in quality["old"]:
            o, n = quality["old"][method], quality["cold"][method]
            differ = sum(a[2] != b[2] for a, b in zip(o, n))
            print(
                f"| {method} | {statistics.mean(x[0] for x in o):.3f} | {statistics.mean(x[1] for x in o):.3f} | "
                f"{statistics.mean(x[0] for x in n):.3f} | {statistics.mean(x[1] for x in n):.3f} | {differ} |"
            )
    if args.eval:
        eval_extrapolated(found["hotpotqa"], args.eval)


if __name__ == "__main__":
    main()
