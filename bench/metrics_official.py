"""What scoring by the official rules changes, on the shared samples.

    OMP_NUM_THREADS=1 .venv/bin/python bench/metrics_official.py

1. MuSiQue (100 questions over the 1,890 pooled passages of `musique_hipporag_train100`): dense
   top-k retrieval (the corpus's embedder, paragraph chunks), scored as before (a paragraph is its
   title) and as MuSiQue's `SupportMetric` (a paragraph is itself, its `idx` in the question's 20:
   the engine keeps the gold paragraphs' documents, `Question.supporting_docs`).
2. Evidence given as text (HotpotQA, 100 questions over 994 paragraphs): each gold supporting
   sentence becomes a quoted span; the spans are located in the chunks and dense top-k retrieval
   is scored on them, next to the sentence-level score from `supporting_facts` on the same chunks.

Corpora are built once into bench/out/workspace (no triplets needed) and reused. Each part reads
its set from ../shared/data, else from its copy in tests/fixtures/qa (bench/_data.py); a part
whose files are in neither place prints a SKIPPED line naming them and the other part still runs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
BENCH_WS = ROOT / "bench" / "out" / "workspace"
KS = (2, 5, 10)


def _files(*rels: str) -> list[Path] | None:
    """The set's files from bench/_data.py's places, or None after a SKIPPED line naming the missing ones."""
    from _data import data_file

    found = [data_file(r) for r in rels]
    missing = [r for r, f in zip(rels, found) if f is None]
    if missing:
        print(f"SKIPPED: this part needs {', '.join(missing)} under ../shared/data or tests/fixtures/qa")
        return None
    return [f for f in found if f is not None]


def _corpus(ws, name: str, files: list[Path]):
    from engine.ingest import load_paths

    if ws.exists(name):
        return ws.open(name)
    batch = load_paths(files, 200 * 1024 * 1024)
    t0 = time.perf_counter()
    corpus, _, _ = ws.create_from(name, batch.documents, batch.questions)
    print(f"  built {name}: {corpus.counts().chunks} chunks in {time.perf_counter() - t0:.0f}s")
    return corpus


def _dense(corpus, questions, k: int):
    vecs = corpus.embed([q.question for q in questions])
    hits = corpus.search_chunks(vecs, k)
    return {q.qid: corpus.get_chunks([cid for cid, _ in h]) for q, h in zip(questions, hits)}


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def musique(ws) -> None:
    from engine.eval.metrics import PARAGRAPH, score_retrieval

    files = _files(
        "musique_hipporag_train100/musique_train_corpus.json", "musique_hipporag_train100/musique_train.json"
    )
    if files is None:
        return
    corpus = _corpus(ws, "musique_hipporag_official", files)
    qs = corpus.questions()
    assert all(q.supporting_docs for q in qs), "questions stored before gold paragraphs were kept: rebuild"
    titles = {d.doc_id: d.title for d in corpus.documents()}
    same_gold_title = sum(1 for q in qs if len({titles[d] for d in q.supporting_docs}) < len(q.supporting_docs))
    gold_titles = {q.qid: {titles[d] for d in q.supporting_docs} for q in qs}
    gold_docs = {q.qid: set(q.supporting_docs) for q in qs}
    namesake = sum(
        1 for q in qs if any(t in gold_titles[q.qid] and d not in gold_docs[q.qid] for d, t in titles.items())
    )
    print(
        f"\nMuSiQue: {len(qs)} questions, {len(titles)} pooled passages; {same_gold_title} questions with two gold "
        f"paragraphs sharing a title; {namesake} with a non-gold passage sharing a gold title in the pool\n"
    )
    print("| dense top-k | rule | P | R | F1 | support EM | questions scored differently |")
    print("|---|---|---|---|---|---|---|")
    for k in KS:
        got = _dense(corpus, qs, k)
        old = [score_retrieval(got[q.qid], replace(q, supporting_docs=()), PARAGRAPH, k) for q in qs]
        new = [score_retrieval(got[q.qid], q, PARAGRAPH, k) for q in qs]
        diff = sum(1 for a, b in zip(old, new) if (a.precision, a.recall) != (b.precision, b.recall))
        for label, rows in (("title (before)", old), ("paragraph (official)", new)):
            print(
                f"| {k} | {label} | {_mean(r.precision for r in rows):.3f} | {_mean(r.recall for r in rows):.3f} | "
                f"{_mean(r.f1 for r in rows):.3f} | {_mean(r.em for r in rows):.3f} | "
                f"{diff if 'official' in label else ''} |"
            )


def evidence(ws) -> None:
    from engine.eval.evidence import locate_evidence
    from engine.eval.metrics import SENTENCE, evidence_score, score_retrieval

    files = _files(
        "hotpotqa_hipporag_train100/hotpotqa_train_corpus.json", "hotpotqa_hipporag_train100/hotpotqa_train.json"
    )
    if files is None:
        return
    corpus = _corpus(ws, "hotpotqa_official_metrics", files)
    recs = {r["_id"]: r for r in json.loads(files[1].read_text(encoding="utf-8"))}
    qs = []
    for q in corpus.questions():
        sents = {t: s for t, s in recs[q.qid]["context"]}
        spans = tuple(sents[t][i] for t, i in q.supporting_facts if t in sents and i < len(sents[t]))
        qs.append(replace(q, evidence=spans))
    t0 = time.perf_counter()
    report = locate_evidence(corpus, qs)
    took = time.perf_counter() - t0
    print(
        f"\nHotpotQA evidence as text: {report.message()} in {took:.2f}s "
        f"({len(corpus.documents())} documents, {corpus.counts().chunks} chunks)\n"
    )
    print("| dense top-k | gold | P | R | F1 |")
    print("|---|---|---|---|---|")
    for k in KS:
        got = _dense(corpus, qs, k)
        sent = [score_retrieval(got[q.qid], q, SENTENCE, k) for q in qs]
        ev = [evidence_score(report.by_qid[q.qid], got[q.qid], k) for q in qs]
        for label, rows in (("supporting_facts (sentences)", sent), ("evidence spans located in chunks", ev)):
            rows = [r for r in rows if r is not None]
            print(
                f"| {k} | {label} | {_mean(r.precision for r in rows):.3f} | {_mean(r.recall for r in rows):.3f} | "
                f"{_mean(r.f1 for r in rows):.3f} |"
            )


def main() -> int:
    import torch

    torch.set_num_threads(1)
    from engine.store import Workspace

    ws = Workspace(BENCH_WS)
    musique(ws)
    evidence(ws)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
