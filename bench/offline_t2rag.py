"""T2RAG with the offline reasoner (no key): answer EM/F1 and rounds per question.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/offline_t2rag.py \
        [--datasets fixture hotpotqa musique] [--baseline /tmp/offline_main] [--workspace bench/out/offline_t2rag]

Data sets:

* `fixture`: tests/fixtures/offline_hops/ (invented documents, 20 two- and three-hop questions).
* `hotpotqa`: the bundled 30-question HotpotQA sample (sample_corpora/hotpotqa_30.json), paragraph
  chunks, offline triplets: the corpus `engine sample ensure` builds. Two-hop = type `bridge`.
* `hotpotqa-heldout`: the other 70 questions of the shared HotpotQA train sample
  (hotpotqa_hipporag_train100, 100 questions; the 30 of the bundled sample left out), over all 100
  questions' paragraphs, offline triplets: questions no rule was written against.
* `musique`: MuSiQue-Ans, 100 questions with their 20 paragraphs each
  (../shared/data/musique_kag_100), offline triplets. Two-hop = id `2hop__...`.

Each wrong answer gets a failure label (where its EM was lost: decomposition, retrieval, filling,
synthesis; see `_label`), counted per data set in a second table.

`--baseline ROOT` runs the same bench in a subprocess over another checkout's `engine/` (e.g. main,
exported with `git archive main | tar -x -C /tmp/offline_main`), in the same run, and prints both.
Corpora are cached under `--workspace/corpora`, named by a hash of the checkout's extractor
(rules.py, spans.py): a checkout whose extractor differs builds its own, with its own triplets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
#: MuSiQue's 100 questions: ../shared/data, else its copy in tests/fixtures/qa (bench/_data.py's places)
MUSIQUE = "musique_kag_100/musique_qa_100.json"
HOTPOT100 = "hotpotqa_hipporag_train100/hotpotqa_train.json"
FIXTURE = HERE / "tests" / "fixtures" / "offline_hops" / "corpus.json"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _extractor_tag(root: Path) -> str:
    """Corpora are rebuilt when the checkout's offline extractor changes."""
    h = hashlib.sha1()
    for name in ("rules.py", "spans.py"):
        h.update((root / "engine" / "reasoners" / "offline" / name).read_bytes())
    return h.hexdigest()[:8]


def _engine_name(module: str, older: str, name: str):
    """`name` from the engine's `module`, or from `older`, where a baseline checkout from before the
    engine was split into packages (e.g. f2db349, the issue's "today") keeps it."""
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        return getattr(importlib.import_module(older), name)


def _load(dataset: str):
    """Documents and questions of a data set; each question carries `hops` (2 = two-hop)."""
    from engine.ingest import load_paths
    from engine.ingest.datasets import read_dataset

    make_doc_id = _engine_name("engine.core.chunking", "engine.chunking", "make_doc_id")
    Document = _engine_name("engine.core.types", "engine.types", "Document")
    Question = _engine_name("engine.core.types", "engine.types", "Question")

    if dataset == "fixture":
        raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
        docs = [Document(make_doc_id(d["title"], d["text"]), d["title"], d["text"]) for d in raw["documents"]]
        qs = [
            Question(f"f{i}", q["question"], (q["answer"],), qtype=f"{q['hops']}hop")
            for i, q in enumerate(raw["questions"])
        ]
        return docs, qs, "fixture"
    if dataset == "hotpotqa":
        batch = load_paths([HERE / "sample_corpora" / "hotpotqa_30.json"])
        return batch.documents, batch.questions, "hotpotqa"
    if dataset == "hotpotqa-heldout":
        path = _data_path(HOTPOT100)
        assert path is not None, f"{HOTPOT100} is in neither ../shared/data nor tests/fixtures/qa"
        data = read_dataset(path.name, path.read_text(encoding="utf-8"))
        seen = {q.question.strip() for q in load_paths([HERE / "sample_corpora" / "hotpotqa_30.json"]).questions}
        return data.documents, [q for q in data.questions if q.question.strip() not in seen], "hotpotqa-heldout"
    path = _musique_path()
    assert path is not None, f"{MUSIQUE} is in neither ../shared/data nor tests/fixtures/qa"
    data = read_dataset(path.name, path.read_text(encoding="utf-8"))
    return data.documents, data.questions, "musique"


def _data_path(rel: str) -> Path | None:
    sys.path.insert(0, str(HERE / "bench"))
    from _data import data_file

    return data_file(rel)


def _musique_path() -> Path | None:
    return _data_path(MUSIQUE)


LABELS = ("correct", "decomposition", "retrieval", "filling", "synthesis")


def _two_hop(q) -> bool:
    return q.qtype in ("bridge", "2hop") or q.qid.startswith("2hop")


def _label(r, golds: list[str], em: float) -> str:
    """Where a question's EM was lost, first failing stage first. Every question of these sets is
    multi-hop (two entities or two hops), so fewer than two query triplets is a decomposition miss;
    retrieval: no gold answer in any chunk a round showed; filling: the answer stayed empty (a hop or
    the final placeholder unfilled); synthesis: an answer, but not the gold one."""
    from engine.eval.metrics import normalize_answer

    if em:
        return "correct"
    trace = r.trace
    d = getattr(trace, "decomposition", None)
    if d is None or len(getattr(d, "triplets", []) or []) < 2:
        return "decomposition"
    shown = " ".join(normalize_answer(c.text) for rnd in trace.rounds for c in rnd.chunks)
    if not any(normalize_answer(g) and normalize_answer(g) in shown for g in golds):
        return "retrieval"
    return "filling" if not r.answer else "synthesis"


def _corpus(ws, name: str, dataset: str, log):
    from engine.reasoners.offline import OfflineReasoner

    run_extraction = _engine_name("engine.triplets.extraction", "engine.extraction", "run_extraction")

    docs, qs, _ = _load(dataset)
    if ws.exists(name):
        corpus = ws.open(name)
        if corpus.counts().chunks and not corpus.counts().pending:
            return corpus, qs
        corpus.close()
        ws.drop(name)
    t0 = time.perf_counter()
    corpus, _report, _n = ws.create_from(name, docs, qs)
    run_extraction(corpus, OfflineReasoner(corpus.embedder), concurrency=1)
    corpus.refresh_indexes()
    c = corpus.counts()
    log(f"  built {name}: {c.chunks} chunks, {c.triplets} triplets in {time.perf_counter() - t0:.0f} s")
    return corpus, qs


def run(datasets: list[str], ws_root: Path, log, engine_root: Path = HERE) -> dict:
    from engine.embed import get_bundled_embedder
    from engine.eval.metrics import answer_score
    from engine.methods.t2rag import T2RAG
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace

    embedder = get_bundled_embedder()
    ws = Workspace(ws_root, embedder=embedder)
    tag = _extractor_tag(engine_root)
    out: dict = {}
    for ds in datasets:
        corpus, qs = _corpus(ws, f"{ds}-{tag}", ds, log)
        method = T2RAG(OfflineReasoner(corpus.embedder))
        rows = []
        t0 = time.perf_counter()
        for q in qs:
            r = method.answer(q.question, corpus)
            s = answer_score(r.answer, q.answers, "musique" if ds == "musique" else "")
            rows.append(
                {
                    "q": q.question,
                    "gold": q.answer,
                    "answer": r.answer,
                    "em": s.em,
                    "f1": s.f1,
                    "rounds": len(r.trace.rounds) if r.trace else 0,
                    "two_hop": _two_hop(q),
                    "label": _label(r, list(q.answers), s.em),
                }
            )
        n, two = len(rows), [x for x in rows if x["two_hop"]]
        out[ds] = {
            "n": n,
            "em": sum(x["em"] for x in rows) / n,
            "em_count": int(sum(x["em"] for x in rows)),
            "f1": sum(x["f1"] for x in rows) / n,
            "rounds": sum(x["rounds"] for x in rows) / n,
            "two_hop": len(two),
            "two_hop_2rounds": sum(1 for x in two if x["rounds"] >= 2),
            "seconds": time.perf_counter() - t0,
            "labels": {k: sum(1 for x in rows if x["label"] == k) for k in LABELS},
            "rows": rows,
        }
        corpus.close()
    return out


def _table(results: dict[str, dict]) -> list[str]:
    lines = [
        "| data set | code | EM | F1 | rounds / question | two-hop questions with >= 2 rounds | s / question |",
        "|---|---|---|---|---|---|---|",
    ]
    for ds in next(iter(results.values())):
        for code, res in results.items():
            r = res[ds]
            share = r["two_hop_2rounds"] / r["two_hop"] if r["two_hop"] else 0.0
            lines.append(
                f"| {ds} ({r['n']} q) | {code} | {r['em']:.3f} ({r['em_count']}/{r['n']}) | {r['f1']:.3f} | "
                f"{r['rounds']:.2f} | {r['two_hop_2rounds']}/{r['two_hop']} ({share:.0%}) | "
                f"{r['seconds'] / r['n']:.2f} |"
            )
    lines += ["", "| data set | code | " + " | ".join(LABELS) + " |", "|---|---|" + "---|" * len(LABELS)]
    for ds in next(iter(results.values())):
        for code, res in results.items():
            labels = res[ds].get("labels", {})
            lines.append(f"| {ds} | {code} | " + " | ".join(str(labels.get(k, "")) for k in LABELS) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--datasets",
        nargs="+",
        default=["fixture", "hotpotqa", "musique"],
        choices=["fixture", "hotpotqa", "hotpotqa-heldout", "musique"],
    )
    ap.add_argument("--workspace", type=Path, default=HERE / "bench" / "out" / "offline_t2rag")
    ap.add_argument("--baseline", type=Path, help="another checkout (e.g. main) to measure in the same run")
    ap.add_argument("--json-out", type=Path, help="(internal) write the results as JSON here")
    ap.add_argument("--show", type=int, default=0, help="print the first N wrong answers per data set")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    if "musique" in args.datasets and _musique_path() is None:
        print(f"SKIPPED musique: it needs {MUSIQUE} under ../shared/data or tests/fixtures/qa")
        args.datasets = [d for d in args.datasets if d != "musique"]
    if "hotpotqa-heldout" in args.datasets and _data_path(HOTPOT100) is None:
        print(f"SKIPPED hotpotqa-heldout: it needs {HOTPOT100} under ../shared/data or tests/fixtures/qa")
        args.datasets = [d for d in args.datasets if d != "hotpotqa-heldout"]
    results: dict[str, dict] = {}
    if args.baseline:
        tmp = args.workspace / "baseline.json"
        args.workspace.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            str(args.baseline / "bench" / "offline_t2rag.py"),
            "--datasets",
            *args.datasets,
            "--workspace",
            str(args.workspace / "corpora"),
            "--json-out",
            str(tmp),
        ]
        if not (args.baseline / "bench" / "offline_t2rag.py").exists():  # main has no such script yet
            cmd[1] = str(Path(__file__).resolve())
            cmd += ["--root", str(args.baseline)]
        print(f"baseline: {args.baseline}", flush=True)
        subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": str(args.baseline)})
        results["baseline"] = json.loads(tmp.read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    # one folder: corpora are keyed by the extractor's source, so an unchanged extractor shares them
    results["this checkout"] = run(args.datasets, args.workspace / "corpora", print)
    print(f"\nT2RAG, offline reasoner, default settings (k=5, 3 rounds); {time.perf_counter() - t0:.0f} s")
    print("\n".join(_table(results)))
    for ds, r in results["this checkout"].items():
        wrong = [x for x in r["rows"] if not x["em"]][: args.show]
        for x in wrong:
            print(f"  [{ds}] {x['label']}: {x['q'][:80]!r} gold={x['gold']!r} got={x['answer']!r} rounds={x['rounds']}")


def _baseline_main() -> None:
    """Entry when run over another checkout (`--root`): import its engine, write JSON."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+")
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--root", type=Path)
    args = ap.parse_args()
    # data files stay this checkout's (the fixture is new); the engine is the other checkout's
    root = args.root or HERE
    sys.path.insert(0, str(root))
    import engine

    print(f"engine from {Path(engine.__file__).parent}", flush=True)
    res = run(args.datasets, args.workspace, lambda s: print(s, flush=True), root)
    args.json_out.write_text(json.dumps(res), encoding="utf-8")


if __name__ == "__main__":
    if "--json-out" in sys.argv:
        _baseline_main()
    else:
        main()
