"""How the landing card's showcase questions were chosen (components/shell/landing.py, docs/ui.md):
run T2RAG and KG2RAG on every question of the sample corpora and print, per question, both
answers against gold, T2RAG's rounds and stop reason, and the Compare verdict's headline.

    python -m engine sample ensure
    OMP_NUM_THREADS=1 .venv/bin/python scripts/showcase_survey.py hotpotqa-sample musique-sample

Offline reasoner unless TRIPLET_LENS_MODEL is set. Candidates: the verdicts differ and T2RAG
needed two rounds or more (the story the landing card promises first).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.core.config import AppSettings  # noqa: E402
from engine.session import Session  # noqa: E402
from engine.verdict import chunk_ids_of, compare_verdict, gold_spec  # noqa: E402


def main(names: list[str]) -> int:
    app = AppSettings.from_env()
    from engine.store import open_workspace

    ws, session = open_workspace(app), Session.for_cli(app)
    for name in names:
        corpus = ws.open(name)
        reasoner = session.reasoner(corpus)
        for q in corpus.questions():
            results = [session.answer(m, q.question, corpus, reasoner=reasoner) for m in ("t2rag", "kg2rag")]
            v = compare_verdict(results, gold_spec(corpus, q, chunk_ids_of(results)))
            t2, kg = (v.by_method(m) for m in ("t2rag", "kg2rag"))
            rounds = len(results[0].trace.rounds)
            star = "*" if t2.outcome != kg.outcome and rounds >= 2 else " "
            print(
                f"{star} {name} {q.qid} | {q.question[:70]} | gold {q.answer[:20]!r} | T2RAG {t2.outcome} "
                f"({rounds} rounds, {results[0].trace.stop_reason}) | KG2RAG {kg.outcome} | {v.headline[:90]}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["hotpotqa-sample", "musique-sample"]))
