"""Paragraph retrieval of every method against dense retrieval over the same chunks and embedder,
on the shared MuSiQue and HotpotQA samples (issue 16).

    .venv/bin/python bench/retrieval_quality.py [--questions 100] [--datasets musique hotpotqa]
        [--methods semantic hybrid t2rag kg2rag] [--kg2rag default paper '{"tree_score": "max"}' ...]
        [--t2rag default paper '{"early_stop": false}' ...]

Sets (each one pooled corpus of paragraph chunks, built once into bench/out/workspace):

* `musique`: MuSiQue-Ans train, 100 questions over 1,890 pooled passages, with HippoRAG's real
  GPT-3.5 OpenIE triplets imported as `triplets import` would (../shared/data/musique_hipporag_train100).
* `hotpotqa`: HotpotQA train (distractor), 100 questions over their 10 paragraphs each, with
  triplets from the offline extractor (`offline-rules`, no model).
* `2wiki`: 2WikiMultihopQA, HopRAG's 10-question quickstart sample, offline triplets.

Methods, each under both presets (engine/methods/presets.py; the baselines have one form, so
their `paper` and `tuned` are the same run): semantic, hybrid and bm25 at k=10 (their ranking gives
recall@2/5/10), HippoRAG 2 with the authors' settings (`paper`) reading 10 passages (`--methods ...
hipporag2`, other variants with `--hipporag2 paper tuned '{"damping": 0.7}'`; recognition memory
skipped: the bench's stub reasoner writes no free text), LightRAG through its own
library with its default settings (`--methods ... lightrag [--lightrag local global hybrid mix]`; the
offline rules' keywords in its keyword fields, its storage built once into the corpus folder), T2RAG
with the offline reasoner (k=5, N=3) as `t2rag` (tuned) and `t2rag paper`,
KG2RAG (k=10, 1 hop, answer step skipped: a stub reasoner) as `kg2rag` (tuned) and `kg2rag paper`
(`KG2RAGSettings.paper()`: dense seeds, no caps), or any other variants.
Recall@n counts the gold paragraphs among a method's first n evidence chunks (in the order the
method gives them to the LLM); P/R/F1 are over all of a method's evidence chunks, averaged over all
questions (nothing retrieved counts 0). "semantic @ same n" is dense retrieval cut, per question,
to the number of chunks the method used: the fair baseline ("hybrid @ same n" likewise). A "where
recall was lost" table follows (engine/eval/recall_loss.py). Per-question rows go to
bench/out/retrieval_quality_<set>.json for the question-by-question comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
DATASETS = {
    "hotpotqa": (DATA / "hotpotqa_hipporag_train100" / "hotpotqa_train.json", None),
    "musique": (
        DATA / "musique_hipporag_train100" / "musique_train.json",
        DATA / "musique_hipporag_train100" / "openie_gpt-3.5-turbo-1106.json",
    ),
    # the bundled sample corpora (sample_corpora/), offline triplets
    "sample-musique": (ROOT / "sample_corpora" / "musique_10.json", None),
    "sample-hotpotqa": (ROOT / "sample_corpora" / "hotpotqa_30.json", None),
    # the older MuSiQue sample (20 paragraphs per question, offline triplets): kg2rag_bench's timing set
    "musique-kag": (DATA / "musique_kag_100" / "musique_qa_100.json", None),
    # 2WikiMultihopQA: HopRAG's 10-question quickstart sample (10 paragraphs each), offline triplets
    "2wiki": (DATA / "hoprag_quickstart" / "wiki_example.jsonl", None),
}
BENCH_WS = ROOT / "bench" / "out" / "workspace"


def dataset_files(name: str) -> tuple[Path, Path | None] | None:
    """DATASETS[name] under ../shared/data, else its copy in tests/fixtures/qa (bench/_data.py); None
    after printing a SKIPPED line naming the files when neither place has them (a fresh clone)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from _data import data_file

    wanted = [p for p in DATASETS[name] if p is not None]
    found = [data_file(p.relative_to(DATA)) for p in wanted]
    if any(f is None for f in found):
        print(
            f"SKIPPED {name}: needs {', '.join(str(p.relative_to(DATA)) for p in wanted)} under ../shared/data "
            "or tests/fixtures/qa"
        )
        return None
    return found[0], (found[1] if len(found) > 1 else None)  # type: ignore[return-value]


CUTS = (2, 5, 10)


class StubReasoner:
    """Answers nothing and costs nothing: the bench measures retrieval only."""

    name = "bench-stub"
    supports_free_text = False

    def answer(self, question, context, *, facts=None):
        from engine.llm.base import LLMCall

        return "", LLMCall(job="answer", model=self.name)


def build_corpus(
    ws,
    name: str,
    dataset: Path,
    mode: str = "paragraph",
    limit: int | None = None,
    triplets: Path | None = None,
    log=print,
):
    """Open corpus `name`, or build it from a dataset file with imported or offline triplets."""
    from engine.core.chunking import ChunkingSettings
    from engine.ingest.datasets import read_dataset
    from engine.reasoners.offline import OfflineReasoner
    from engine.triplets.extraction import run_extraction

    if ws.exists(name):
        corpus = ws.open(name)
        c = corpus.counts()
        # an imported file leaves the chunks it names no triplet for pending: they stay so
        if c.chunks and (not c.pending or (triplets is not None and c.triplets)):
            return corpus
    else:
        corpus = ws.create(name, chunking=ChunkingSettings(mode=mode))
    data = read_dataset(dataset.name, dataset.read_text(encoding="utf-8"), limit=limit)
    t0 = time.perf_counter()
    corpus.add_documents(data.documents)
    corpus.add_questions(data.questions)
    log(f"  {name}: {corpus.counts().chunks} chunks embedded in {time.perf_counter() - t0:.0f}s")
    t0 = time.perf_counter()
    if triplets is not None:
        from engine.triplets.files import read_triplet_file
        from engine.triplets.resolve import resolve_rows

        tf = read_triplet_file(triplets)
        rows, unresolved = resolve_rows(tf.rows, corpus.chunks())
        added = corpus.import_triplets(rows)
        log(
            f"  {name}: imported {added} triplet links from {triplets.name} ({unresolved} rows unresolved, "
            f"{tf.skipped} skipped) in {time.perf_counter() - t0:.0f}s"
        )
    else:
        summary = run_extraction(corpus, OfflineReasoner(corpus.embedder), concurrency=1)
        corpus.refresh_indexes()
        log(f"  {name}: {summary.triplets} triplets extracted offline and embedded in {time.perf_counter() - t0:.0f}s")
    return corpus


def cache_question_vectors(corpus) -> None:
    """Embed each text once for all the methods compared (the bench measures retrieval, not
    time; on a shared machine the embedder dominates the run)."""
    if getattr(corpus, "_bench_cached", False):
        return
    cache: dict[tuple[str, ...], object] = {}
    embed = corpus.embed

    def cached(texts):
        key = tuple(texts)
        if key not in cache:
            cache[key] = embed(texts)
        return cache[key]

    corpus.embed = cached
    corpus._bench_cached = True


@dataclass
class Row:
    """Sums over questions of one method's scores."""

    label: str
    n: int = 0
    chunks: float = 0.0
    p: float = 0.0
    r: float = 0.0
    f1: float = 0.0
    at: dict[int, float] = field(default_factory=lambda: {c: 0.0 for c in CUTS})

    def add(self, score: dict) -> None:
        self.n += 1
        self.chunks += score["chunks"]
        self.p += score["p"]
        self.r += score["r"]
        self.f1 += score["f1"]
        for c in CUTS:
            self.at[c] += score[f"r@{c}"]

    def line(self) -> str:
        n = max(self.n, 1)
        cuts = " | ".join(f"{self.at[c] / n:.3f}" for c in CUTS)
        return (
            f"| {self.label} | {self.chunks / n:.2f} | {cuts} | {self.p / n:.3f} | {self.r / n:.3f} "
            f"| {self.f1 / n:.3f} |"
        )


def score(corpus, chunk_ids: list[str], gold: set, by_doc: bool = False) -> dict:
    """`by_doc`: the gold names paragraphs (MuSiQue), so chunks count by paragraph, not title."""
    from engine.eval.metrics import PARAGRAPH, retrieval_score, retrieved_units

    chunks = corpus.get_chunks(list(dict.fromkeys(chunk_ids)))
    s = retrieval_score(retrieved_units(chunks, PARAGRAPH, by_doc), gold)
    out = {"chunks": len(chunks), "p": s.precision, "r": s.recall, "f1": s.f1}
    for c in CUTS:
        out[f"r@{c}"] = retrieval_score(retrieved_units(chunks[:c], PARAGRAPH, by_doc), gold).recall
    return out


def method_runners(args, corpus):
    """name -> question -> evidence chunk ids, in the order given to the LLM."""
    from engine.methods.baselines import HybridRAG, HybridSettings, SemanticRAG, SemanticRAGSettings
    from engine.methods.kg2rag import KG2RAG, KG2RAGSettings

    runners = {}
    if "semantic" in args.methods:
        sem = SemanticRAG(StubReasoner())
        runners["semantic"] = lambda q: sem.answer(q, corpus, SemanticRAGSettings(k=10))
    if "hybrid" in args.methods:
        hyb = HybridRAG(StubReasoner())
        runners["hybrid"] = lambda q: hyb.answer(q, corpus, HybridSettings(k=10))
    if "bm25" in args.methods:
        from engine.methods.baselines import BM25RAG, BM25Settings

        bm = BM25RAG(StubReasoner())
        runners["bm25"] = lambda q: bm.answer(q, corpus, BM25Settings(k=10))
    if "hipporag2" in args.methods:
        from engine.methods.hipporag2 import HippoRAG2
        from engine.methods.presets import preset_settings

        # the stub reasoner writes no free text, so recognition memory is skipped (every retrieved
        # fact kept, as with the offline reasoner); 10 passages read unless a variant says otherwise
        hr = HippoRAG2(StubReasoner())
        for variant in getattr(args, "hipporag2", None) or ["paper"]:
            preset, _, extra = variant.partition("+")
            if preset not in ("paper", "tuned"):
                preset, extra = "tuned", variant
            settings = preset_settings("hipporag2", preset, **{"qa_top_k": 10, **json.loads(extra or "{}")})
            label = "hipporag2" if variant == "paper" else f"hipporag2 {variant}"
            runners[label] = (lambda s: lambda q: hr.answer(q, corpus, s))(settings)
    if "lightrag" in args.methods:
        from engine.methods.lightrag import LightRAG, LightRAGSettings
        from engine.reasoners.offline import OfflineReasoner

        class RuleKeywords(OfflineReasoner):
            """The offline rules' keywords (LightRAG's keyword fields, as offline); no answer step."""

            def answer(self, question, context, *, facts=None):
                return StubReasoner().answer(question, context, facts=facts)

        lr = LightRAG(RuleKeywords(corpus.embedder))
        for mode in args.lightrag:  # LightRAG's defaults (top_k 40, chunk_top_k 20) in each mode
            label = "lightrag" if mode == "mix" else f"lightrag {mode}"
            runners[label] = (lambda s: lambda q: lr.answer(q, corpus, s))(LightRAGSettings(mode=mode))
    if "t2rag" in args.methods:
        from engine.methods.presets import preset_settings
        from engine.methods.t2rag import T2RAG
        from engine.reasoners.offline import OfflineReasoner

        t2 = T2RAG(OfflineReasoner(corpus.embedder))
        # both presets (engine/methods/presets.py): "t2rag" is `tuned`; with the offline reasoner the
        # prompts do not matter, the rounds (`early_stop`, `retrieve_when_resolved`) and the solver's
        # adopted triplets (`adopt_proposed`) change retrieval. Other variants as with --kg2rag.
        for variant in args.t2rag:
            if variant in ("default", "paper"):
                settings = preset_settings("t2rag", "tuned" if variant == "default" else "paper")
            elif variant.startswith("paper+"):
                settings = preset_settings("t2rag", "paper", **json.loads(variant[len("paper+") :]))
            else:
                settings = preset_settings("t2rag", "tuned", **json.loads(variant))
            label = "t2rag" if variant == "default" else f"t2rag {variant}"
            runners[label] = (lambda s: lambda q: t2.answer(q, corpus, s))(settings)
    if "kg2rag" in args.methods:
        kg = KG2RAG(StubReasoner())
        for variant in args.kg2rag:
            if variant in ("default", "paper"):
                settings = KG2RAGSettings() if variant == "default" else KG2RAGSettings.paper()
            elif variant.startswith("paper+"):
                settings = KG2RAGSettings.paper(**json.loads(variant[len("paper+") :]))
            else:
                settings = KG2RAGSettings(**json.loads(variant))
            label = "kg2rag" if variant == "default" else f"kg2rag {variant}"
            runners[label] = (lambda s: lambda q: kg.answer(q, corpus, s))(settings)
    return runners


def with_hybrid_same_n(runners: dict, corpus) -> dict:
    """`runners` and, after each KG2RAG variant, "hybrid @ same n as <it>": the hybrid baseline (KG2RAG
    tuned's first stage) cut to the chunks that variant used on the question (issue 42: the long-
    document table's check that the graph stage does not cost its own first stage recall)."""
    from engine.methods.baselines import HybridRAG, HybridSettings

    hyb, memo, out = HybridRAG(StubReasoner()), {}, {}
    for name, run in runners.items():
        out[name] = (lambda n, r: lambda q: memo[(n, q)] if (n, q) in memo else memo.setdefault((n, q), r(q)))(
            name, run
        )
        if name.startswith("kg2rag"):
            out[f"hybrid @ same n as {name}"] = (
                lambda f: (
                    lambda q: hyb.answer(
                        q, corpus, HybridSettings(k=max(1, len(dict.fromkeys(f(q).evidence_chunk_ids))))
                    )
                )
            )(out[name])
    return out


def evaluate(args, corpus, questions, log=print) -> tuple[dict[str, Row], list[dict], list]:
    from engine.eval.metrics import PARAGRAPH, gold_units
    from engine.eval.recall_loss import recall_loss, summarize_recall_loss
    from engine.methods.baselines import HybridRAG, HybridSettings, SemanticRAG, SemanticRAGSettings

    cache_question_vectors(corpus)
    hyb = HybridRAG(StubReasoner())
    runners = method_runners(args, corpus)
    sem = SemanticRAG(StubReasoner())
    rows: dict[str, Row] = {}
    per_q: list[dict] = []
    seconds = {name: 0.0 for name in runners}
    losses: dict[str, list] = {name: [] for name in runners}
    repeats: dict[str, int] = {}
    for q in questions:
        gold = gold_units(q, PARAGRAPH)
        if not gold:
            continue
        dense = sem.answer(q.question, corpus, SemanticRAGSettings(k=30)).evidence_chunk_ids
        fused = hyb.answer(q.question, corpus, HybridSettings(k=30)).evidence_chunk_ids
        rec = {"qid": q.qid, "question": q.question, "gold": sorted(gold), "methods": {}}
        for name, run in runners.items():
            t0 = time.perf_counter()
            res = run(q.question)
            ids = list(dict.fromkeys(res.evidence_chunk_ids))
            seconds[name] += time.perf_counter() - t0
            loss = recall_loss(res.method, res.trace, q, corpus, ids)
            losses[name].append(loss)
            s = score(corpus, ids, gold, bool(q.supporting_docs))
            rec["methods"][name] = {
                **s,
                "chunk_ids": ids,
                "lost": dict(loss.lost) if loss else {},
                "gained": loss.gained if loss else 0,
            }
            rows.setdefault(name, Row(name)).add(s)
            if res.method == "t2rag":
                repeats[name] = repeats.get(name, 0) + repeated_solves(res.trace)
            if name not in ("semantic", "hybrid"):
                same = score(corpus, dense[: max(1, len(ids))], gold, bool(q.supporting_docs))
                rec["methods"][name]["semantic_same_n"] = same
                rows.setdefault(f"semantic @ same n as {name}", Row(f"semantic @ same n as {name}")).add(same)
                if args.hybrid_same_n:
                    h = score(corpus, fused[: max(1, len(ids))], gold, bool(q.supporting_docs))
                    rec["methods"][name]["hybrid_same_n"] = h
                    rows.setdefault(f"hybrid @ same n as {name}", Row(f"hybrid @ same n as {name}")).add(h)
        per_q.append(rec)
    log("  seconds per method: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()))
    for name, n in repeats.items():
        log(f"  {name}: rounds whose solver saw exactly what an earlier round showed it: {n}")
    order = [k for k in rows if " @ same n as " not in k]
    out = {}
    for k in order:
        out[k] = rows[k]
        for base in ("semantic", "hybrid"):
            if f"{base} @ same n as {k}" in rows:
                out[f"{base} @ same n as {k}"] = rows[f"{base} @ same n as {k}"]
    return out, per_q, [summarize_recall_loss(name, items) for name, items in losses.items()]


def repeated_solves(trace) -> int:
    """Solve calls of a T2RAG trace that were shown the same state and evidence as an earlier one."""
    seen, repeats = set(), 0
    for r in trace.rounds if trace else []:
        if r.solve_call is None:
            continue
        key = (repr(r.state_before), tuple(w.text for w in r.walked), tuple(c.chunk_id for c in r.chunks))
        repeats += key in seen
        seen.add(key)
    return repeats


def per_question_lines(per_q: list[dict], method: str) -> list[str]:
    """Questions where `method` and dense retrieval at the same chunk count disagree on recall."""
    rows = []
    for rec in per_q:
        m = rec["methods"].get(method)
        if not m or "semantic_same_n" not in m or m["r"] == m["semantic_same_n"]["r"]:
            continue
        why = "; ".join(f"{k} x{v}" for k, v in m["lost"].items()) or "-"
        q = rec["question"] if len(rec["question"]) <= 70 else rec["question"][:67] + "..."
        rows.append(
            (
                m["r"] - m["semantic_same_n"]["r"],
                f"| {q} | {m['r']:.2f} | {m['semantic_same_n']['r']:.2f} | {m.get('gained', 0)} | {why} |",
            )
        )
    rows.sort(key=lambda r: r[0])
    wins = sum(1 for d, _ in rows if d > 0)
    return [
        f"{method} vs semantic at the same n, question by question: {wins} better, {len(rows) - wins} worse, "
        f"{len(per_q) - len(rows)} equal",
        "",
        f"| question | {method} R | semantic R | gold gained by the expansion | gold lost at |",
        "|---|---|---|---|---|",
        *[line for _, line in rows],
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument(
        "--datasets",
        nargs="*",
        default=["musique", "hotpotqa"],
        choices=list(DATASETS),
        help="pooled sets to run (none: only --long-docs)",
    )
    ap.add_argument(
        "--long-docs",
        type=int,
        default=0,
        metavar="N",
        help="also the long-document sets (--long-datasets) of the first N questions (bench/long_documents.py): "
        "recall at document and at window level",
    )
    ap.add_argument(
        "--long-datasets",
        nargs="+",
        default=["musique"],
        choices=["musique", "hotpotqa"],
        help="the long-document sets --long-docs builds: MuSiQue (GPT-3.5 OpenIE triplets) and "
        "HotpotQA (offline triplets), each question's paragraphs joined into one document",
    )
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["semantic", "hybrid", "t2rag", "kg2rag"],
        choices=["semantic", "hybrid", "bm25", "hipporag2", "lightrag", "t2rag", "kg2rag"],
    )
    ap.add_argument(
        "--lightrag",
        nargs="+",
        default=["mix"],
        choices=["local", "global", "hybrid", "mix"],
        metavar="MODE",
        help="LightRAG query modes to run (`lightrag` is mix, its library's default)",
    )
    ap.add_argument(
        "--kg2rag",
        nargs="+",
        default=["default", "paper"],
        metavar="VARIANT",
        help='KG2RAG variants: "default", "paper" (KG2RAGSettings.paper()), KG2RAGSettings fields '
        'as JSON (\'{"tree_score": "max"}\') or "paper+JSON" (the paper preset with overrides)',
    )
    ap.add_argument(
        "--t2rag",
        nargs="+",
        default=["default", "paper"],
        metavar="VARIANT",
        help='T2RAG variants, as --kg2rag: "default" (tuned), "paper", T2RAGSettings fields as JSON '
        'over tuned (\'{"early_stop": false}\') or "paper+JSON"',
    )
    ap.add_argument(
        "--hipporag2",
        nargs="+",
        default=["paper"],
        metavar="VARIANT",
        help='HippoRAG 2 variants (each reading 10 passages): "paper" (the row labelled hipporag2), '
        '"tuned", HippoRAG2Settings fields as JSON on tuned (\'{"damping": 0.7}\') or '
        '"paper+JSON"',
    )
    ap.add_argument(
        "--per-question",
        default="",
        metavar="METHOD",
        help="also list the questions where METHOD (e.g. kg2rag) and semantic at the same n differ",
    )
    ap.add_argument(
        "--no-hybrid-same-n",
        dest="hybrid_same_n",
        action="store_false",
        help="leave out the hybrid baseline cut to each method's chunk count",
    )
    ap.add_argument(
        "--channel",
        default="",
        metavar="WEIGHT,CONSTANT",
        help="T2RAG chunk_channel's walk weight and fusion constant for this run (a sensitivity "
        "check; default: engine/methods/t2rag/channels.py's WALK_WEIGHT, FUSION_K)",
    )
    args = ap.parse_args()
    if args.channel:
        from engine.methods.t2rag import channels

        weight, constant = args.channel.split(",")
        channels.WALK_WEIGHT, channels.FUSION_K = float(weight), int(constant)
        print(f"T2RAG chunk channel: walk weight {channels.WALK_WEIGHT}, fusion constant {channels.FUSION_K}")

    import torch

    torch.set_num_threads(1)
    from engine.embed import get_bundled_embedder
    from engine.store import Workspace

    ws = Workspace(BENCH_WS, embedder=get_bundled_embedder())
    for ds in args.datasets:
        files = dataset_files(ds)
        if files is None:
            continue
        path, triplets = files
        corpus = build_corpus(
            ws, f"{ds}-paragraphs" if ds != "musique" else "musique-hipporag-openie", path, triplets=triplets
        )
        c = corpus.counts()
        questions = corpus.questions()[: args.questions]
        source = "GPT-3.5 OpenIE (HippoRAG)" if triplets else "offline"
        print(
            f"\n### {ds}: {len(questions)} questions, pooled corpus of {c.chunks} paragraph chunks, "
            f"{c.triplets} {source} triplets\n"
        )
        t0 = time.perf_counter()
        rows, per_q, losses = evaluate(args, corpus, questions)
        print(f"\n({time.perf_counter() - t0:.0f}s)\n")
        print("| method | chunks | R@2 | R@5 | R@10 | P | R | F1 |\n|---|---|---|---|---|---|---|---|")
        for row in rows.values():
            print(row.line())
        from engine.eval.recall_loss import recall_loss_markdown

        print("\n" + "\n".join(recall_loss_markdown([x for x in losses if x.method != "semantic"])))
        if args.per_question:
            print("\n" + "\n".join(per_question_lines(per_q, args.per_question)))
        out = ROOT / "bench" / "out" / f"retrieval_quality_{ds}.json"
        out.write_text(json.dumps(per_q, indent=1), encoding="utf-8")
    if args.long_docs:
        run_long_documents(args, ws)


def run_long_documents(args, ws) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import long_documents as ld

    for ds in args.long_datasets:
        files = dataset_files(ds)
        if files is None:
            continue
        name = f"{ds}-long-{args.long_docs}"
        if ds == "musique":
            corpus, counts = ld.build(ws, name, files[0], files[1], args.long_docs)
        else:
            corpus, counts = ld.build_hotpotqa(ws, name, files[0], args.long_docs), None
        run_long_set(args, ds, corpus, counts)


def run_long_set(args, ds, corpus, counts) -> None:
    import long_documents as ld

    c = corpus.counts()
    source = "GPT-3.5 OpenIE" if ds == "musique" else "offline"
    print(
        f"\n### {ds}, long documents: {args.long_docs} questions, each question's paragraphs joined into one "
        f"document: {c.documents} documents, {c.chunks} windows, {c.triplets} {source} triplets\n"
    )
    if counts:
        print(
            f"OpenIE triplets linked to windows: {counts['triplets']} triplets, {counts['best window']:.2f} windows "
            f"per triplet (best window), {counts['every window naming both']:.2f} with every window naming both "
            "entities (the rule replaced)\n"
        )
    cache_question_vectors(corpus)
    questions = corpus.questions()[: args.long_docs]
    t0 = time.perf_counter()
    lines = ld.evaluate(corpus, questions, with_hybrid_same_n(method_runners(args, corpus), corpus))
    print(f"\n({time.perf_counter() - t0:.0f}s)\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
