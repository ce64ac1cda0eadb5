"""Who did better on one question, and why: a verdict read off the methods' traces.

Compare shows T2RAG and KG2RAG side by side; this module says in words what the columns show:
which answered correctly (against the gold answers when there are any), which found which gold
paragraph and at which step (a T2RAG round, KG2RAG's seeds or an expansion hop), what each spent
(LLM calls, tokens, dollars, seconds) and which evidence they shared. Pure functions over
`Result`s; the app, presentation mode, the HTML export and `python -m engine trace verdict` all
draw the same `CompareVerdict`.

    gold = gold_spec(corpus, question, chunk_ids_of(results))   # gold answers + gold paragraphs
    v = compare_verdict(results, gold)                          # at the end
    v = compare_verdict(results, gold, at={"t2rag": 1, "kg2rag": 0})  # after a step (view indices)
    for m in v.methods: print(m.sentence)

A method's steps are numbered as its view numbers them (T2RAG: decomposition, rounds, answer;
KG2RAG: seeds, hops, weighted graph, tree ranking, selected context, answer; a baseline: retrieval,
answer), so the strip under a step says what was known at that step and nothing later.
"""

from engine.verdict.judge import chunk_ids_of, compare_verdict, gold_spec, method_verdict, stages, verdict_to_dict
from engine.verdict.model import CompareVerdict, Fill, GoldFind, GoldSpec, MethodVerdict, Spend, Stage

__all__ = [
    "CompareVerdict",
    "Fill",
    "GoldFind",
    "GoldSpec",
    "MethodVerdict",
    "Spend",
    "Stage",
    "chunk_ids_of",
    "compare_verdict",
    "gold_spec",
    "method_verdict",
    "stages",
    "verdict_to_dict",
]
