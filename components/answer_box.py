"""The answer box: coloured by its verdict against the gold answers, the same on every page.

green = exact match, amber = partly right (F1 > 0), red = wrong or the method failed,
neutral grey-blue = no gold answer known (a free question), so colour never claims more than
the data says. The verdict is also a class on the box (`tl-answer-correct` ...), which the
browser tests read.
"""
from __future__ import annotations

from dataclasses import dataclass

from components.safe import esc, html_block

STYLES = {
    "correct": ("#e7f5ec", "#2a9d5c", "✅ correct"),
    "partial": ("#fff6e0", "#d49a1a", "🟡 partly right"),
    "wrong": ("#fdecec", "#d64545", "❌ wrong"),
    "error": ("#fdecec", "#d64545", "⚠️ no answer"),
    "unknown": ("#eef2f7", "#6b7f99", "no gold answer to check against"),
}


@dataclass(frozen=True)
class Verdict:
    kind: str  # correct | partial | wrong | error | unknown
    em: float | None = None
    f1: float | None = None

    @property
    def mark(self) -> str:
        return {"correct": "✅", "partial": "🟡", "wrong": "❌", "error": "❌"}.get(self.kind, "")


def verdict(result, gold: list[str] | None) -> Verdict:
    """How `result`'s answer scores against `gold` (official EM / F1 of engine.eval.metrics)."""
    if result.error or not (result.answer or "").strip():
        return Verdict("error" if result.error else ("wrong" if gold else "unknown"))
    if not gold:
        return Verdict("unknown")
    from engine.eval.metrics import answer_score

    s = answer_score(result.answer, gold)
    kind = "correct" if s.em == 1 else ("partial" if s.f1 > 0 else "wrong")
    return Verdict(kind, s.em, s.f1)


def _open_placeholders(trace) -> list[str]:
    """The placeholders still open when T2RAG stopped (its last state), e.g. ['?answer']."""
    snap = trace.rounds[-1].state_after if trace.rounds else getattr(trace.decomposition, "state", None)
    seen: dict[str, None] = {}
    for t in (snap.searchable + snap.fuzzy) if snap is not None else []:
        for p in t.placeholders:
            seen.setdefault(p, None)
    return list(seen)


def _t2rag_why(trace) -> str:
    from engine.methods.t2rag.trace import STOP_REASONS

    stop = STOP_REASONS.get(trace.stop_reason, trace.stop_reason or "")
    parsed = trace.synthesis.call.parsed if trace.synthesis and trace.synthesis.call else None
    if isinstance(parsed, dict) and parsed.get("why"):
        return str(parsed["why"]) + (f" ({stop})" if stop else "")
    open_ = _open_placeholders(trace)
    if open_:
        filled = "was" if len(open_) == 1 else "were"
        return f"{', '.join(open_)} {filled} never filled" + (f" ({stop})" if stop else "")
    return f"the synthesis was forced ({stop})" if stop else "the synthesis was forced"


def _kg2rag_why(trace) -> str:
    if trace.note:
        return trace.note
    if not trace.seeds:
        return "no chunk matched the question, so there was nothing to expand from"
    n = len(trace.tree_chunk_ids) + len(trace.fill_chunk_ids)
    return f"the answer step found no answer in the {n} chunks it was given"


def caveat(result) -> tuple[str, str]:
    """(kind, words) qualifying an answer, from its trace: ('guess', ...) for an answer T2RAG
    synthesized with placeholders still open, ('empty', ...) for no answer, else ('', '')."""
    trace = getattr(result, "trace", None)
    method = getattr(result, "method", "")
    empty = not (result.answer or "").strip()
    if result.error:
        return "", ""
    if getattr(trace, "synthesis", None) is not None:  # a synthesis that may have been forced (T2RAG)
        forced = trace.synthesis.mode == "forced"
        if empty:
            return "empty", _t2rag_why(trace) if forced else "the answer step returned nothing"
        return ("guess", _t2rag_why(trace)) if forced else ("", "")
    if empty:
        if hasattr(trace, "seeds") and hasattr(trace, "trees"):  # seeds and trees to say why (KG2RAG)
            return "empty", _kg2rag_why(trace)
        return "empty", getattr(result, "stop_reason", "") or f"{method or 'the method'} returned no answer"
    return "", ""


def _body(result, v: Verdict) -> str:
    if v.kind == "error":
        return f"<i>{esc(result.method)} could not finish:</i> {esc(result.error)}"
    kind, why = caveat(result)
    if kind == "empty":
        return (f'<i class="tl-answer-none">The corpus did not answer this.</i>'
                f'<br><small>Why: {esc(why)}</small>')
    body = esc(result.answer)
    if kind == "guess":
        body += f'<br><small class="tl-answer-guess">⚠️ best guess: {esc(why)}</small>'
    return body


def answer_box_html(result, gold: list[str] | None, label: str = "Answer", chain: str = "") -> str:
    """The box; `chain` is the evidence chain's markup (components.evidence_chain), built from
    escaped pieces, shown inside the box under the answer."""
    v = verdict(result, gold)
    bg, edge, tag = STYLES[v.kind]
    body = _body(result, v)
    score = "" if v.em is None else f" · EM {v.em:.0f} · F1 {v.f1:.2f}"
    gold_line = f"<br><small>Gold: {esc(' / '.join(gold))}{score}</small>" if gold else ""
    return (f'<div class="tl-answer tl-answer-{v.kind}" style="background:{bg};border-left:5px solid {edge};'
            f'padding:.6em .9em;border-radius:6px;margin:.3em 0 .6em 0">'
            f'<small style="color:{edge};font-weight:600">{esc(label)} · {esc(tag)}</small><br>'
            f'<span style="font-size:1.15em">{body}</span>{gold_line}{chain}</div>')


def show_answer(result, gold: list[str] | None = None, label: str = "Answer", corpus=None,
                with_chain: bool = False) -> None:
    from components.evidence_chain import chain_html

    html_block(answer_box_html(result, gold, label, chain_html(result, corpus) if with_chain else ""))
