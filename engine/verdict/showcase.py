"""A showcase question's caption, read off a comparison that ran: who was right and by which route.

The landing card offers sample questions, each with one line saying what Compare will show. That
line is an outcome claim, so it is never written by hand: the app runs the comparison (offline
reasoner, the session's settings: what Compare runs) and words the verdict here, and a test runs
each showcase question again and checks the words against the verdict.

    results = [session.run_method(m, reasoner, q.question, corpus, settings[m]) for m in methods]
    v = compare_verdict(results, gold_spec(corpus, q, chunk_ids_of(results)))
    caption(v)   # 'The methods differ: T2RAG right (“6,960”), both gold paragraphs by round 2; KG2RAG
                 #  wrong (“Ballina”), never saw “Young, New South Wales”'
"""

from __future__ import annotations

from engine.verdict.model import CompareVerdict, MethodVerdict
from engine.verdict.text import _names, _q, _stage_order

#: a method's outcome in one word or two
WORDS = {
    "correct": "right",
    "partial": "partly right",
    "wrong": "wrong",
    "error": "could not finish",
    "unknown": "answered",
    "pending": "not finished",
}


def lead(v: CompareVerdict) -> str:
    """'Both right', 'Both wrong', 'All right', 'The methods differ', ...: the outcomes at a glance."""
    outcomes = {m.outcome for m in v.methods}
    if len(outcomes) > 1:
        return "The methods differ"
    word = WORDS.get(next(iter(outcomes), ""), "")
    return f"{'Both' if len(v.methods) == 2 else 'All'} {word}" if word else "Compared"


def route(m: MethodVerdict) -> str:
    """Where the method found the gold paragraphs (the step of its own view), what it missed, and a
    found paragraph left out of its answer's evidence."""
    if not m.gold:
        return ""
    found = [f for f in m.gold if f.found_at]
    missed = [f.label for f in m.gold if not f.found_at]
    if not found:
        text = "saw no gold paragraph"
    elif not missed:
        latest = max((f.found_at for f in found), key=_stage_order)
        places = {f.found_at for f in found}
        what = (
            "the gold paragraph"
            if len(found) == 1
            else "both gold paragraphs"
            if len(found) == 2
            else "every gold paragraph"
        )
        text = f"{what} {'in' if len(places) == 1 else 'by'} {latest}"
    else:
        text = ", ".join(f"{_q(f.label, 40)} in {f.found_at}" for f in found) + f", never saw {_names(missed)}"
    dropped = [f.label for f in found if f.used is False]
    if dropped:
        text += f", but left {_names(dropped)} out of its answer's evidence"
    return text


def method_clause(m: MethodVerdict, outcome: bool = True) -> str:
    """'KG2RAG wrong (“Ballina”), never saw “X”' (without the outcome word when the lead says it)."""
    answer = f" ({_q(m.answer, 40)})" if (m.answer or "").strip() else ""
    where = route(m)
    word = f" {WORDS.get(m.outcome, m.outcome)}" if outcome else ""
    return f"{m.title}{word}{answer}" + (f", {where}" if where else "")


def caption(v: CompareVerdict) -> str:
    """One line: the outcomes, then each method's answer and route."""
    head = lead(v)
    each = head == "The methods differ" or head == "Compared"
    return f"{head}: " + "; ".join(method_clause(m, outcome=each) for m in v.methods)
