"""Reading the verdict off the traces: each method's steps, the gold, the comparison."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.methods.base import Result
from engine.verdict.model import CompareVerdict, GoldFind, GoldSpec, MethodVerdict, Spend, Stage
from engine.verdict.text import headline, method_sentence

# --- gold --------------------------------------------------------------------------------------


def chunk_ids_of(results: Iterable[Result]) -> list[str]:
    """Every chunk any of the results saw or used, each once (what `gold_spec` needs to label)."""
    seen: dict[str, None] = {}
    for r in results:
        for stage in stages(r):
            for c in stage.seen:
                seen.setdefault(c, None)
        for c in r.evidence_chunk_ids:
            seen.setdefault(c, None)
    return list(seen)


def gold_spec(corpus: Any, question: Any, chunk_ids: Sequence[str] = ()) -> GoldSpec:
    """Gold answers and gold paragraphs of a corpus `Question` (None: no gold). Paragraphs are
    named by title; each gets the chunks among `chunk_ids` that belong to it (a paragraph nobody
    saw keeps its name with no chunk, so "missed" can still be said)."""
    if question is None:
        return GoldSpec()
    from engine.eval.metrics import PARAGRAPH, by_paragraph, chunk_units, gold_units

    gold = gold_units(question, PARAGRAPH)
    doc_gold = by_paragraph(question)
    paragraphs: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    chunks = corpus.get_chunks(list(chunk_ids)) if chunk_ids else []
    for c in chunks:
        for unit in chunk_units(c, PARAGRAPH, doc_gold):
            if unit in gold:
                names[unit] = c.title or str(unit)
                paragraphs.setdefault(unit, set()).add(c.chunk_id)
    out = {names.get(u, str(u)): frozenset(paragraphs.get(u, ())) for u in sorted(gold, key=str)}
    return GoldSpec(tuple(question.answers), out)


# --- a method's steps --------------------------------------------------------------------------


def stages(result: Result) -> list[Stage]:
    """The result's steps as its view numbers them, each with what it first showed: the trace's
    own `verdict_stages()` (engine.methods.story), else one retrieval step and the answer."""
    own = getattr(result.trace, "verdict_stages", None)
    if callable(own):
        return list(own())
    return [Stage("retrieval", tuple(result.evidence_chunk_ids), context=True), Stage("answer")]


# --- one method --------------------------------------------------------------------------------


def _outcome(result: Result, answers: Sequence[str]) -> tuple[str, float | None]:
    if result.error:
        return "error", None
    if not (result.answer or "").strip():
        return ("wrong" if answers else "unknown"), (0.0 if answers else None)
    if not answers:
        return "unknown", None
    from engine.eval.metrics import answer_score

    s = answer_score(result.answer, list(answers))
    return ("correct" if s.em == 1 else "partial" if s.f1 > 0 else "wrong"), s.f1


def _spend(result: Result) -> Spend:
    u = result.usage
    return Spend(u.calls, u.prompt_tokens + u.completion_tokens, u.cost, u.total_time or u.engine_time + u.llm_time)


def _open_placeholders(result: Result) -> tuple[str, ...]:
    hook = getattr(result.trace, "open_placeholders", None)
    return tuple(hook()) if callable(hook) else ()


def method_verdict(result: Result, gold: GoldSpec, at: int | None = None) -> MethodVerdict:
    """`result` judged after step `at` of its view (None or past the end: after the answer)."""
    from engine.methods.registry import title

    steps = stages(result)
    last = len(steps) - 1 if at is None else max(0, min(at, len(steps) - 1))
    done = steps[: last + 1]
    seen: dict[str, str] = {}
    for s in done:
        for c in s.seen:
            seen.setdefault(c, s.label)
    fixed = any(s.context for s in done)
    evidence = tuple(result.evidence_chunk_ids) if fixed else ()
    finds = []
    for label, ids in gold.paragraphs.items():
        at_label = next((seen[c] for c in seen if c in ids), "")
        finds.append(GoldFind(label, at_label, bool(ids & set(evidence)) if fixed else None))
    finished = last == len(steps) - 1
    outcome, f1 = _outcome(result, gold.answers) if finished else ("pending", None)
    v = MethodVerdict(
        result.method,
        title(result.method),
        outcome,
        result.answer if finished else "",
        f1,
        steps[last].label,
        tuple(f for s in done for f in s.fills),
        tuple(finds),
        tuple(seen),
        evidence,
        _spend(result),
        _open_placeholders(result) if finished else (),
        story=str(getattr(result.trace, "verdict_story", "") or ""),
    )
    return replace(v, sentence=method_sentence(v, result))


# --- the comparison ----------------------------------------------------------------------------


def compare_verdict(
    results: Sequence[Result], gold: GoldSpec | None = None, at: Mapping[str, int] | None = None
) -> CompareVerdict:
    """The verdict over `results` (one per method), at the end or after the steps in `at`
    (method -> the step index its view shows)."""
    gold = gold or GoldSpec()
    methods = tuple(method_verdict(r, gold, (at or {}).get(r.method)) for r in results)
    final = all(m.outcome != "pending" for m in methods)
    pools = {m.method: set(m.evidence if m.evidence else m.seen) for m in methods}
    shared = set.intersection(*pools.values()) if len(pools) > 1 else set()
    order = [c for m in methods for c in (m.evidence or m.seen)]
    shared_t = tuple(dict.fromkeys(c for c in order if c in shared))
    others = {m: set().union(*(p for n, p in pools.items() if n != m)) for m in pools}
    unique = {m.method: tuple(c for c in (m.evidence or m.seen) if c not in others[m.method]) for m in methods}
    v = CompareVerdict(methods, shared_t, unique, "", final)
    return replace(v, headline=headline(v, gold))


def verdict_to_dict(v: CompareVerdict) -> dict[str, Any]:
    """The verdict as plain JSON values (the CLI prints it; the export embeds the sentences)."""
    from engine.core import serde

    return serde.to_dict(v)
