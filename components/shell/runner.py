"""Run methods on one question with the session's reasoner and settings, showing steps as they go."""

from __future__ import annotations

import time

from components.shell import state
from components.shell.progress import StepLog
from engine.methods.registry import title
from engine.runs import Run

#: Corpora whose models and indexes this server process has already warmed (see _warm_up).
_WARM: set[tuple[str, str]] = set()


def _warm_up(corpus, question: str) -> None:
    """The first question after start-up pays for loading: the embedding model's first pass and the
    corpus's vector indexes (6-9 s on a laptop). Do that under a visible
    status, once per corpus and process, so the page never sits silent."""
    import streamlit as st

    key = (str(getattr(corpus, "path", "")), corpus.name)
    if key in _WARM:
        return
    t0 = time.monotonic()
    with st.status("Loading models and indexes… (first question after start-up)", expanded=False) as box:
        box.write("embedding model: first pass")
        corpus.embed([question])
        box.write("vector indexes")  # loads both indexes; the entity graph is read per question, never whole
        bar = None

        def rebuilding(done: int, total: int, label: str) -> None:
            # only a missing or stale index file is rebuilt (minutes at a million vectors): show it
            nonlocal bar
            bar = bar or box.progress(0.0)
            bar.progress(min(1.0, done / max(total, 1)), text=f"{label}: {done:,} / {total:,}")

        corpus.load_indexes(on_progress=rebuilding)
        box.update(label=f"Models and indexes ready ({time.monotonic() - t0:.1f}s)", state="complete")
    _WARM.add(key)


def run_methods(methods: list[str], corpus, question: str, q=None) -> Run:
    """One Run holding each method's Result for `question` (gold answers from the corpus question),
    through `Session.answer_all`: the question check, budget, deadline and recording happen there."""
    logs: dict[str, StepLog] = {}

    def on_start(name: str) -> StepLog:
        _warm_up(corpus, question.strip())  # after the question passed its check: once per corpus
        logs[name] = StepLog(f"{title(name)}: running")
        return logs[name]

    def on_done(name: str, result) -> None:
        logs[name].finish(f"{title(name)}: {result.answer or '(no answer)'}", ok=not result.error)

    results = state.session().answer_all(methods, question, corpus, on_start=on_start, on_done=on_done)
    return Run(
        question=results[0].question if results else question.strip(),
        results=results,
        gold=list(q.answers) if q is not None else [],
        qid=q.qid if q is not None else "",
        corpus=corpus.name,
        created=time.time(),
    )
