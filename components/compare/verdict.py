"""The verdict strip: who did better and why, in one sentence per method (engine.verdict).

Drawn on Compare under each joint step and at the end, in presentation mode and (static, no
script) in the HTML export. The markup is built from escaped text only.
"""

from __future__ import annotations

from components.shell.safe import esc

_FALLBACK_COLORS = ("#e9a23b", "#8c6bb1", "#d64545", "#666666")
_OUTCOME = {
    "correct": ("✅", "#2a9d5c"),
    "partial": ("🟡", "#d49a1a"),
    "wrong": ("❌", "#d64545"),
    "error": ("⚠️", "#d64545"),
    "unknown": ("", "#6b7f99"),
    "pending": ("…", "#6b7f99"),
}


def method_color(method: str, index: int = 0) -> str:
    """One colour per method, the same on every chart and strip: its view's `COLOR`, else one of
    the fallback colours by its place in the run."""
    from components.contract import view_for

    return view_for(method).color or _FALLBACK_COLORS[index % len(_FALLBACK_COLORS)]


def run_gold(run, corpus):
    """The gold to judge `run` against: its gold answers and, when the run names a corpus question,
    that question's gold paragraphs (labelled among the chunks the methods saw)."""
    from engine.verdict import GoldSpec, chunk_ids_of, gold_spec

    question = None
    if corpus is not None and run.qid:
        question = next((q for q in corpus.questions() if q.qid == run.qid), None)
    if question is None:
        return GoldSpec(tuple(run.gold))
    return gold_spec(corpus, question, chunk_ids_of(run.results))


def run_verdict(run, corpus=None, at: dict[str, int] | None = None):
    """The `CompareVerdict` of a run with two or more results (None for a single result)."""
    from engine.verdict import compare_verdict

    if run is None or len(run.results) < 2:
        return None
    return compare_verdict(run.results, run_gold(run, corpus), at)


def line_html(m, index: int = 0) -> str:
    """One method's sentence, marked with its colour and its outcome."""
    mark, edge = _OUTCOME.get(m.outcome, ("", "#6b7f99"))
    return (
        f'<div class="tl-verdict-line" data-method="{esc(m.method)}" data-outcome="{esc(m.outcome)}" '
        f'style="border-left:5px solid {method_color(m.method, index)};padding:.15em .6em;margin:.25em 0">'
        f'<span style="color:{edge}">{esc(mark)}</span> {esc(m.sentence)}</div>'
    )


def show_method_line(run, result, step: int | None, corpus=None) -> None:
    """What one method has found by step `step` of its view (presentation mode, one method a step)."""
    from components.shell.safe import html_block
    from engine.verdict import method_verdict

    index = next((i for i, r in enumerate(run.results) if r is result), 0)
    line = line_html(method_verdict(result, run_gold(run, corpus), step), index)
    html_block(f'<div class="tl-verdict tl-verdict-step">{line}</div>')


def verdict_html(v, title: str = "Verdict") -> str:
    """The strip: a headline, then one line per method with its colour and outcome mark."""
    lines = [line_html(m, i) for i, m in enumerate(v.methods)]
    kind = "final" if v.final else "step"
    return (
        f'<div class="tl-verdict tl-verdict-{kind}" style="background:#f7f9fc;border:1px solid #d5dbe5;'
        f'border-radius:6px;padding:.5em .8em;margin:.4em 0 .8em 0">'
        f'<div style="font-weight:600;margin-bottom:.2em">⚖️ {esc(title)}: '
        f'<span class="tl-verdict-headline" style="font-weight:400">{esc(v.headline)}</span></div>'
        + "".join(lines)
        + "</div>"
    )


def show_verdict(run, corpus=None, at: dict[str, int] | None = None, title: str = "Verdict") -> None:
    from components.shell.safe import html_block

    v = run_verdict(run, corpus, at)
    if v is not None:
        html_block(verdict_html(v, title))
