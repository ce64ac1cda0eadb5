"""The verdict in words: one sentence per method and a headline over all of them.

Plain text (the app, the export and the CLI escape or print it as they need). A sentence is a
list of short clauses read off the `MethodVerdict`, so every word of it points at something the
trace holds: a placeholder filled from a named source in a round, a gold paragraph first seen in
a step, an answer checked against gold.
"""

from __future__ import annotations

from typing import Any

from engine.core.textnorm import shorten
from engine.verdict.model import CompareVerdict, GoldFind, GoldSpec, MethodVerdict

#: at most this many fills are named in a sentence; the rest are counted
MAX_FILLS = 3


#: A time difference is said only beyond run-to-run noise: "X was faster" when it is over
#: FASTER_SECONDS and over FASTER_SHARE of the slower time, else "about the same time".
#: bench/verdict_noise.py ran the same question again and again in one process (docs/benchmarks.md,
#: issue 39): on a quiet machine a method's runs spread by at most 0.04 s, but with other processes
#: running (load 7 on 2 cores, numpy's default threads) by 0.26 s to 2.4 s, up to 10x the median.
#: A share alone would call that noise a finding; the floor holds it back on a moderately busy
#: machine (heavier load spreads further still). Time is compared only when the LLM calls are equal
#: (an LLM run's extra calls decide first), so the floor costs an LLM comparison little.
FASTER_SECONDS = 1.0
FASTER_SHARE = 0.2


def _q(text: str, n: int = 60) -> str:
    return f"“{shorten(text, n)}”"


def _names(labels: list[str]) -> str:
    quoted = [_q(x, 40) for x in labels]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _both(n: int) -> str:
    return "both gold paragraphs" if n == 2 else f"all {n} gold paragraphs"


def outcome_clause(v: MethodVerdict) -> str:
    if v.outcome == "pending":
        return ""  # the strip names the step; the answer is not known yet
    if v.outcome == "error":
        return "could not finish"
    if not (v.answer or "").strip():
        return "gave no answer"
    if v.outcome == "correct":
        return f"answered correctly ({_q(v.answer)})"
    if v.outcome == "partial":
        return f"was partly right ({_q(v.answer)}, F1 {v.f1:.2f})"
    if v.outcome == "wrong":
        return f"answered {_q(v.answer)}, which is wrong"
    return f"answered {_q(v.answer)} (no gold answer to check against)"


def fills_clause(v: MethodVerdict) -> str:
    if not v.fills:
        return ""
    named = [
        f"{f.placeholder} = {_q(f.value, 40)}" + (f" from {f.source}" if f.source else "") + f" in {f.stage}"
        for f in v.fills[:MAX_FILLS]
    ]
    more = len(v.fills) - MAX_FILLS
    return "filled " + ", ".join(named) + (f" (+{more} more)" if more > 0 else "")


def _fills_gold(finds: list[GoldFind], stage: str) -> str:
    found = [f for f in finds if f.found_at]
    missed = [f.label for f in finds if not f.found_at]
    if not found:
        return "saw neither gold paragraph" if len(finds) == 2 else f"saw none of the {len(finds)} gold paragraphs"
    places = sorted({f.found_at for f in found})
    if not missed:
        if len(finds) == 1:
            return f"found the gold paragraph {_q(found[0].label, 40)} in {found[0].found_at}"
        if len(places) == 1:
            return f"found {_both(len(finds))} in {places[0]}"
        latest = max((f.found_at for f in found), key=_stage_order)
        return (
            f"found {_both(len(finds))} by {latest} ("
            + ", ".join(f"{_q(f.label, 40)} in {f.found_at}" for f in found)
            + ")"
        )
    text = ", ".join(f"found {_q(f.label, 40)} in {f.found_at}" for f in found)
    return text + f" but {'has not seen' if stage != 'the answer' else 'never saw'} {_names(missed)}"


def _stage_order(label: str) -> tuple[int, str]:
    digits = "".join(ch for ch in label if ch.isdigit())
    return (int(digits) if digits else 0, label)


def _expansion_gold(finds: list[GoldFind], stage: str) -> str:
    seeds = [f.label for f in finds if f.found_at == "its seeds"]
    hops = [f for f in finds if f.found_at.startswith("hop")]
    missed = [f.label for f in finds if not f.found_at]
    expanded = stage != "its seeds"
    what = "the gold paragraph" if len(missed) == 1 and len(finds) == 1 else _names(missed) if missed else ""
    reach = (" and its expansion did not reach " + ("it" if len(missed) == 1 else "them")) if expanded else ""
    held = f"its seeds held {_names(seeds)}" if seeds else ""
    missing = (f" but missed {what}{reach}" if held else f"its seeds missed {what}{reach}") if missed else ""
    parts = [held + missing] if held else []
    parts += [f"its expansion reached {_q(f.label, 40)} in {f.found_at}" for f in hops]
    parts += [missing] if missing and not held else []
    return "; ".join(parts)


def _generic_gold(finds: list[GoldFind]) -> str:
    found = [f.label for f in finds if f.found_at]
    missed = [f.label for f in finds if not f.found_at]
    parts = [f"its retrieval found {_names(found)}"] if found else []
    parts += [f"missed {_names(missed)}"] if missed else []
    return "; ".join(parts)


#: a trace's `verdict_story` -> how its gold finds are worded (engine.methods.story)
GOLD_STORIES = {"fills": _fills_gold, "expansion": _expansion_gold}


def gold_clause(v: MethodVerdict) -> str:
    finds = list(v.gold)
    if not finds:
        return ""
    if v.outcome == "pending" and not v.seen:  # e.g. T2RAG's decomposition: nothing to judge yet
        return f"has retrieved nothing yet ({v.stage})"
    story = GOLD_STORIES.get(v.story)
    text = story(finds, v.stage) if story else _generic_gold(finds)
    dropped = [f.label for f in finds if f.found_at and f.used is False]
    if dropped:
        text += f"; {_names(dropped)} did not make it into the answer's evidence"
    return text


def method_sentence(v: MethodVerdict, result: Any = None) -> str:
    """`T2RAG: filled ?film = “X” from P3 in round 1; found both gold paragraphs by round 2;
    answered correctly (“Y”). 4 LLM calls, 1,234 tokens, $0.0012, 1.3 s.`"""
    clauses = [fills_clause(v), gold_clause(v), outcome_clause(v)]
    if v.open_placeholders and v.outcome != "error":
        left = ", ".join(v.open_placeholders)
        clauses.append(f"a best guess: {left} {'was' if len(v.open_placeholders) == 1 else 'were'} never filled")
    error = str(getattr(result, "error", None) or "")
    if v.outcome == "error" and error:
        clauses.append(error[:120])
    if v.outcome == "pending" and not v.gold:
        clauses.append(f"has seen {len(v.seen)} chunk{'s' if len(v.seen) != 1 else ''} by {v.stage}")
    text = f"{v.title}: " + ("; ".join(c for c in clauses if c) or f"nothing retrieved yet ({v.stage})") + "."
    return text + (f" {v.spend.text()}." if v.outcome != "pending" else "")


def _gold_count(v: MethodVerdict, used: bool) -> int:
    return sum(1 for f in v.gold if (f.used if used else f.found_at))


def _and(names: list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _answers_line(v: CompareVerdict, gold: GoldSpec) -> str:
    ms = v.methods
    if not gold.answers:
        return "No gold answer to check against: compare the evidence"
    right = [m.title for m in ms if m.outcome == "correct"]
    partly = [m.title for m in ms if m.outcome == "partial"]
    if len(right) == len(ms):
        return "Both answered correctly" if len(ms) == 2 else "All answered correctly"
    if right:
        rest = [m.title for m in ms if m.outcome != "correct"]
        return f"{_and(right)} answered correctly, {_and(rest)} did not"
    text = "Neither answered correctly" if len(ms) == 2 else "None answered correctly"
    return text + (f" ({_and(partly)} partly)" if partly else "")


def beyond_noise(fast: float, slow: float) -> bool:
    """True when `fast` seconds beat `slow` by more than run-to-run noise (FASTER_SECONDS and
    FASTER_SHARE of the slower, both)."""
    gap = slow - fast
    return gap > FASTER_SECONDS and gap > FASTER_SHARE * slow


def _spend_line(ms: tuple[MethodVerdict, ...]) -> str:
    """Who spent less: fewer LLM calls when the counts differ, else time, but only beyond noise."""
    if len(ms) < 2:
        return ""
    by_calls = sorted(ms, key=lambda m: m.spend.calls)
    if by_calls[0].spend.calls != by_calls[1].spend.calls:
        lo, rest = by_calls[0], by_calls[1:]
        counts = " vs ".join(str(m.spend.calls) for m in [lo, *rest])
        return f"{lo.title} used {'fewer' if len(ms) == 2 else 'the fewest'} LLM calls ({counts})"
    if len({m.spend.calls for m in ms}) > 1:  # a tie for the fewest: no one line says it fairly
        return ""
    by_time = sorted(ms, key=lambda m: m.spend.seconds)
    lo, nxt = by_time[0], by_time[1]
    times = " vs ".join(f"{m.spend.seconds:.1f} s" for m in by_time)
    if beyond_noise(lo.spend.seconds, nxt.spend.seconds):
        return f"{lo.title} was {'faster' if len(ms) == 2 else 'the fastest'} ({times})"
    # no finding among the fastest: named in the columns' order, not as a ranking; any method
    # beyond noise behind them is named as slower
    close = [m for m in ms if not beyond_noise(lo.spend.seconds, m.spend.seconds)]
    slow = [m for m in ms if m not in close]
    text = f"{_and([m.title for m in close])} took about the same time ({_secs(close)})"
    return text + (
        f"; {_and([m.title for m in slow])} {'was' if len(slow) == 1 else 'were'} slower ({_secs(slow)})"
        if slow
        else ""
    )


def _secs(ms: list[MethodVerdict]) -> str:
    return " vs ".join(f"{m.spend.seconds:.1f} s" for m in ms)


def headline(v: CompareVerdict, gold: GoldSpec) -> str:
    """One line over all methods: at the end who was right, gold paragraphs used, who spent less,
    shared evidence; after an earlier step how many gold paragraphs each has seen so far."""
    ms = v.methods
    n_gold = len(gold.paragraphs)
    unique = ", ".join(f"{len(v.unique.get(m.method, ()))} only {m.title}'s" for m in ms)
    if not v.final:
        seen = ", ".join(f"{m.title} {_gold_count(m, used=False)}" for m in ms)
        lead = f"So far, gold paragraphs seen (of {n_gold}): {seen}" if n_gold else "So far"
        return f"{lead}. Chunks seen: {len(v.shared)} by both; {unique}."
    parts = [_answers_line(v, gold)]
    if n_gold:
        parts.append(
            f"gold paragraphs in the evidence (of {n_gold}): "
            + ", ".join(f"{m.title} {_gold_count(m, used=True)}" for m in ms)
        )
    parts.append(_spend_line(ms))
    parts.append(f"evidence: {len(v.shared)} chunks shared, {unique}")
    return ". ".join(p[0].upper() + p[1:] for p in parts if p) + "."
