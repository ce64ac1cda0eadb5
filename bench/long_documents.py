"""Recall on long documents: document level against window (chunk) level (issue 25, item 6).

A long-document version of the shared MuSiQue sample: each question's paragraphs joined into one
document (title line, then text, per paragraph), split into the default paragraph windows (at most
200 words, one sentence of overlap). Each question's gold is then its one document (document
level: any window of it counts) and its gold paragraphs' texts as evidence spans, located in the
windows by a case- and punctuation-insensitive token match (engine/eval/evidence.py). Window
recall counts a gold paragraph found when the windows used cover all of it.

The real GPT-3.5 OpenIE triplets (HippoRAG's, extracted per passage) are linked to the window of
their passage that states them best (engine/triplets/resolve.py). The bench prints the link counts
for that rule and for the rule it replaced (every window of the passage naming both entities).

The same for HotpotQA (issue 42): each question's ten paragraphs joined into one document, its
supporting sentences as the evidence spans, triplets from the offline extractor over the windows.

Run through `bench/retrieval_quality.py --long-docs N [--long-datasets musique hotpotqa]` (N
questions; builds each corpus once into bench/out/workspace/<set>-long-N).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

CUTS = (2, 5, 10)


def long_documents(dataset: Path, n: int):
    """(documents, questions, passages as OpenIE names them: "title\ntext") of the first `n` questions."""
    from engine.core.chunking import make_doc_id
    from engine.core.types import Document, Question

    rows = json.loads(dataset.read_text(encoding="utf-8"))[:n]
    docs, questions, passages = [], [], set()
    for r in rows:
        paras = r["paragraphs"]
        text = "\n\n".join(f"{p['title']}\n{p['paragraph_text']}" for p in paras)
        passages |= {f"{p['title']}\n{p['paragraph_text']}" for p in paras}
        title = f"MuSiQue {r['id']}"
        doc_id = make_doc_id(title, text)
        docs.append(Document(doc_id, title, text, source="musique-long"))
        gold = tuple(p["paragraph_text"] for p in paras if p.get("is_supporting"))
        aliases = r.get("answer_aliases") or []
        questions.append(
            Question(
                r["id"],
                r["question"],
                (r["answer"], *aliases),
                qtype=r["id"].split("__")[0],
                dataset="musique",
                supporting_docs=(doc_id,),
                evidence=gold,
                answerable=bool(r.get("answerable", True)),
            )
        )
    return docs, questions, passages


def long_documents_hotpotqa(dataset: Path, n: int):
    """(documents, questions) of the first `n` HotpotQA questions (issue 42): each question's ten
    paragraphs (its two gold ones and eight distractors) joined into one document as above; the
    gold evidence spans are its supporting sentences (HotpotQA's own gold unit)."""
    from engine.core.types import Document, Question
    from engine.corpus.chunking import make_doc_id

    rows = json.loads(dataset.read_text(encoding="utf-8"))[:n]
    docs, questions = [], []
    for r in rows:
        paras = {title: sentences for title, sentences in r["context"]}
        text = "\n\n".join(f"{title}\n{''.join(sentences).strip()}" for title, sentences in r["context"])
        title = f"HotpotQA {r['_id']}"
        doc_id = make_doc_id(title, text)
        docs.append(Document(doc_id, title, text, source="hotpotqa-long"))
        gold = tuple(paras[t][i].strip() for t, i in r["supporting_facts"] if t in paras and i < len(paras[t]))
        questions.append(
            Question(
                r["_id"],
                r["question"],
                (r["answer"],),
                qtype=r.get("type", ""),
                dataset="hotpotqa",
                supporting_docs=(doc_id,),
                evidence=gold,
            )
        )
    return docs, questions


def build_hotpotqa(ws, name: str, dataset: Path, n: int, log=print):
    """The long-document HotpotQA corpus, its windows' triplets from the offline extractor."""
    from engine.reasoners.offline import OfflineReasoner
    from engine.triplets.extraction import run_extraction

    if ws.exists(name):
        corpus = ws.open(name)
        if corpus.counts().triplets and not corpus.counts().pending:
            return corpus
    else:
        corpus = ws.create(name)
    if not corpus.counts().chunks:
        docs, questions = long_documents_hotpotqa(dataset, n)
        t0 = time.perf_counter()
        corpus.add_documents(docs)
        corpus.add_questions(questions)
        log(
            f"  {name}: {len(docs)} documents, {corpus.counts().chunks} windows embedded in "
            f"{time.perf_counter() - t0:.0f}s"
        )
    t0 = time.perf_counter()
    summary = run_extraction(corpus, OfflineReasoner(corpus.embedder), concurrency=1)
    corpus.refresh_indexes()
    log(f"  {name}: {summary.triplets} triplets extracted offline in {time.perf_counter() - t0:.0f}s")
    return corpus


def link_counts(rows, chunks) -> dict[str, float]:
    """Windows per linked triplet under the rule used (the best window) and the one it replaced
    (every window of the passage naming subject and object, else the first naming one of them)."""
    from engine.triplets.resolve import _Index, _mentioning

    idx = _Index(chunks)
    new = old = n = 0
    for r in rows:
        cands = idx.passage(r.chunk_ref)
        if not cands:
            continue
        n += 1
        new += len(_mentioning(idx, cands, r.subject, r.object, r.predicate))
        s, o = r.subject.casefold(), r.object.casefold()
        both = [c for c in cands if s in idx.folded(c) and o in idx.folded(c)]
        old += len(both) if both else 1
    return {"triplets": n, "best window": new / max(n, 1), "every window naming both": old / max(n, 1)}


def build(ws, name: str, dataset: Path, openie: Path, n: int, log=print):
    from engine.triplets.files import read_triplet_file
    from engine.triplets.resolve import resolve_rows

    if ws.exists(name):
        corpus = ws.open(name)
        if corpus.counts().triplets:
            return corpus, None
    else:
        corpus = ws.create(name)
    docs, questions, passages = long_documents(dataset, n)
    t0 = time.perf_counter()
    corpus.add_documents(docs)
    corpus.add_questions(questions)
    log(
        f"  {name}: {len(docs)} documents, {corpus.counts().chunks} windows embedded in {time.perf_counter() - t0:.0f}s"
    )
    t0 = time.perf_counter()
    tf = read_triplet_file(openie)
    chunks = corpus.chunks()
    rows = [r for r in tf.rows if r.chunk_ref in passages]
    counts = link_counts(rows, chunks)
    links, unresolved = resolve_rows(rows, chunks)
    added = corpus.import_triplets(links)
    log(
        f"  {name}: {added} triplet links from {len(rows)} OpenIE rows of these passages ({unresolved} unresolved) "
        f"in {time.perf_counter() - t0:.0f}s"
    )
    return corpus, counts


def evaluate(corpus, questions, runners, log=print) -> list[str]:
    """Markdown rows: per method, document recall and window recall@2/5/10 and at all chunks."""
    from engine.eval.evidence import locate_evidence
    from engine.eval.metrics import PARAGRAPH, evidence_score, gold_units, retrieval_score, retrieved_units

    report = locate_evidence(corpus, questions)
    log("  " + report.message())
    sums: dict[str, dict[str, float]] = {}
    for q in questions:
        gold = report.by_qid.get(q.qid)
        for name, run in runners.items():
            ids = list(dict.fromkeys(run(q.question).evidence_chunk_ids))
            chunks = corpus.get_chunks(ids)
            s = sums.setdefault(
                name,
                {
                    "n": 0,
                    "chunks": 0.0,
                    "doc": 0.0,
                    "win": 0.0,
                    **{f"w{c}": 0.0 for c in CUTS},
                    **{f"d{c}": 0.0 for c in CUTS},
                },
            )
            s["n"] += 1
            s["chunks"] += len(chunks)
            s["doc"] += retrieval_score(retrieved_units(chunks, PARAGRAPH, True), gold_units(q, PARAGRAPH)).recall
            for c in CUTS:
                s[f"d{c}"] += retrieval_score(
                    retrieved_units(chunks[:c], PARAGRAPH, True), gold_units(q, PARAGRAPH)
                ).recall
            w = evidence_score(gold, chunks, 1) if gold is not None else None
            if w is not None:
                s["win"] += w.recall
                for c in CUTS:
                    s[f"w{c}"] += evidence_score(gold, chunks, c).recall_at_k
    lines = [
        "| method | chunks | document R@5 | document R | window R@2 | window R@5 | window R@10 | window R |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, s in sums.items():
        n = s["n"] or 1
        lines.append(
            f"| {name} | {s['chunks'] / n:.2f} | {s['d5'] / n:.3f} | {s['doc'] / n:.3f} | "
            f"{s['w2'] / n:.3f} | {s['w5'] / n:.3f} | {s['w10'] / n:.3f} | {s['win'] / n:.3f} |"
        )
    return lines
