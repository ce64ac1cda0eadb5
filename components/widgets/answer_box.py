"""The answer box: coloured by its verdict against the gold answers, the same on every page.

green = exact match, amber = partly right (F1 > 0), red = wrong or the method failed,
neutral grey-blue = no gold answer known (a free question), so colour never claims more than
the data says. The verdict is also a class on the box (`tl-answer-correct` ...), which the
browser tests read.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.shell.safe import esc, html_block

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


def caveat(result) -> tuple[str, str]:
    """(kind, words) qualifying an answer, from its view (components/methods/): ('guess', ...) for
    an answer given with what it needed still missing (T2RAG's forced synthesis), ('empty', why)
    for no answer, else ('', '')."""
    if result.error:
        return "", ""
    from components.contract import view_for

    return view_for(result).caveat(result)


def _body(result, v: Verdict) -> str:
    if v.kind == "error":
        return f"<i>{esc(result.method)} could not finish:</i> {esc(result.error)}"
    kind, why = caveat(result)
    if kind == "empty":
        return f'<i class="tl-answer-none">The corpus did not answer this.</i><br><small>Why: {esc(why)}</small>'
    body = esc(result.answer)
    if kind == "guess":
        body += f'<br><small class="tl-answer-guess">⚠️ best guess: {esc(why)}</small>'
    return body


def answer_box_html(result, gold: list[str] | None, label: str = "Answer", chain: str = "") -> str:
    """The box; `chain` is the evidence chain's markup (components.widgets.evidence_chain), built from
    escaped pieces, shown inside the box under the answer."""
    v = verdict(result, gold)
    bg, edge, tag = STYLES[v.kind]
    body = _body(result, v)
    score = "" if v.em is None else f" · EM {v.em:.0f} · F1 {v.f1:.2f}"
    gold_line = f"<br><small>Gold: {esc(' / '.join(gold))}{score}</small>" if gold else ""
    return (
        f'<div class="tl-answer tl-answer-{v.kind}" style="background:{bg};border-left:5px solid {edge};'
        f'padding:.6em .9em;border-radius:6px;margin:.3em 0 .6em 0">'
        f'<small style="color:{edge};font-weight:600">{esc(label)} · {esc(tag)}</small><br>'
        f'<span style="font-size:1.15em">{body}</span>{gold_line}{chain}</div>'
    )


def show_answer(
    result, gold: list[str] | None = None, label: str = "Answer", corpus=None, with_chain: bool = False
) -> None:
    from components.widgets.evidence_chain import chain_html

    html_block(answer_box_html(result, gold, label, chain_html(result, corpus) if with_chain else ""))
