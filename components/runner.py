"""Run methods on one question with the session's reasoner and settings, showing steps as they go."""
from __future__ import annotations

import time

from components import state
from components.progress import StepLog
from components.runs import Run
from components.steps import METHOD_TITLES


def run_methods(methods: list[str], corpus, question: str, q=None) -> Run:
    """One Run holding each method's Result for `question` (gold answers from the corpus question)."""
    from engine.llm.deadline import within
    from engine.methods import build_method

    from engine.limits import check_question

    question = check_question(question)
    session = state.session()
    session.begin()  # the operator's budget: refused here, before anything runs
    reasoner = session.reasoner(corpus)
    results = []
    try:
        for name in methods:
            log = StepLog(f"{METHOD_TITLES.get(name, name)}: running")
            with within(session.question_deadline, "question"):
                result = build_method(name, reasoner).answer(question, corpus, session.settings_for(name),
                                                             on_step=log)
            log.finish(f"{METHOD_TITLES.get(name, name)}: {result.answer or '(no answer)'}", ok=not result.error)
            results.append(result)
    finally:
        session.record(results)
    return Run(question=question, results=results, gold=list(q.answers) if q is not None else [],
               qid=q.qid if q is not None else "", corpus=corpus.name, created=time.time())
