"""Run methods on one question with the session's reasoner and settings, showing steps as they go."""
from __future__ import annotations

import time

from components import state
from components.progress import StepLog
from components.runs import Run
from components.steps import METHOD_TITLES


def run_methods(methods: list[str], corpus, question: str, q=None) -> Run:
    """One Run holding each method's Result for `question` (gold answers from the corpus question).

    Each method run counts as one question against the operator's caps (a Compare of two, two).
    """
    reasoner = state.make_reasoner(corpus)
    # the operator's caps: refused (BudgetExceeded) before anything runs when the session is at its cap
    with state.session().question(count=len(methods)):
        results = _run_each(methods, corpus, question, reasoner)
    return Run(question=question, results=results, gold=list(q.answers) if q is not None else [],
               qid=q.qid if q is not None else "", corpus=corpus.name, created=time.time())


def _run_each(methods: list[str], corpus, question: str, reasoner) -> list:
    from engine.methods import build_method

    results = []
    for name in methods:
        log = StepLog(f"{METHOD_TITLES.get(name, name)}: running")
        result = build_method(name, reasoner).answer(question, corpus, state.method_settings(name), on_step=log)
        log.finish(f"{METHOD_TITLES.get(name, name)}: {result.answer or '(no answer)'}", ok=not result.error)
        results.append(result)
    return results
