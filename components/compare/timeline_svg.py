"""A run's timeline as a static SVG for the offline HTML export: the same rows, colours and bar
texts as the app's plotly timeline (components.compare.timeline_view), with no script at all, so it draws
under the export's Content-Security-Policy and with scripts disabled.

Every string from a trace (step labels, model names, details, errors) goes through `esc` before
it lands in a text node or an attribute: the markup in this file is the only markup in the SVG.
"""

from __future__ import annotations

from components.compare.timeline_view import (
    ERROR_COLOR,
    FREE_COLOR,
    bar_color,
    bar_text,
    hover_lines,
    is_free,
    row_label,
)
from components.shell.safe import esc
from engine.runs.timeline import Span, tree_rows

WIDTH = 900
LABEL_W = 270  # the label column (monospace tree)
TEXT_W = 170  # room right of the bars for their text
ROW_H = 22
TOP, AXIS_H = 6, 40
_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200)


def axis_step(total: float, most: int = 6) -> float:
    """A round tick step giving at most `most` intervals over `total` seconds."""
    return next((s for s in _STEPS if total / s <= most), _STEPS[-1] * (1 + int(total / (_STEPS[-1] * most))))


def _tick(v: float, step: float) -> str:
    digits = 0 if step >= 1 else 1 if step >= 0.1 else 2 if step >= 0.01 else 3
    return f"{v:.{digits}f}s"


def _axis(total: float, x0: float, scale: float, y: float) -> list[str]:
    step = axis_step(total)
    out = []
    i = 0
    while i * step <= total * 1.0001:
        x = x0 + i * step * scale
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{y:.1f}" stroke="#e3e6ea" stroke-width="1"/>'
            f'<text x="{x:.1f}" y="{y + 14:.1f}" font-size="11" text-anchor="middle" fill="#555">'
            f"{_tick(i * step, step)}</text>"
        )
        i += 1
    mid = x0 + total * scale / 2
    out.append(
        f'<text x="{mid:.1f}" y="{y + 32:.1f}" font-size="11" text-anchor="middle" fill="#555">'
        "seconds into the run</text>"
    )
    return out


def _row(s: Span, label: str, i: int, x0: float, scale: float, total: float) -> str:
    y = TOP + i * ROW_H
    w = max(s.duration * scale, 2.0)  # a free call still shows as a sliver
    x = x0 + s.start * scale
    free = is_free(s) and not s.error
    stroke = ' stroke="#777" stroke-dasharray="3 2"' if free else f' stroke="{ERROR_COLOR}"' if s.error else ""
    title = esc("\n".join(hover_lines(s)))
    text, inside = esc(bar_text(s)), s.duration > total * 0.55
    tx, anchor = (x + w - 4, "end") if inside else (x + w + 4, "start")
    ink = "#fff" if inside and s.kind == "run" else "#333"
    cls = "span" + (" failed" if s.error else "") + (" free" if free else "") + f" kind-{s.kind}"
    return (
        f'<g class="{cls}"><title>{title}</title>'
        f'<text x="8" y="{y + 15}" font-size="11.5" fill="#333" xml:space="preserve" '
        f'font-family="ui-monospace, Menlo, Consolas, monospace">{esc(label)}</text>'
        f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{ROW_H - 8}" rx="2" '
        f'fill="{FREE_COLOR if free else bar_color(s)}"{stroke}/>'
        f'<text x="{tx:.1f}" y="{y + 15}" font-size="11" text-anchor="{anchor}" fill="{ink}">{text}</text></g>'
    )


def timeline_svg(spans: list[Span], width: int = WIDTH, x_max: float | None = None) -> str:
    """One `<svg>` element: a row per span, depth first, bars on a shared seconds axis (`x_max`
    seconds long when several runs are drawn on one scale)."""
    if len(spans) < 2:
        return ""
    rows = tree_rows(spans)
    total = max([s.end for s in spans] + [x_max or 0.0]) or 1.0
    x0, scale = LABEL_W, (width - LABEL_W - TEXT_W) / total
    y_axis = TOP + len(rows) * ROW_H + 2
    height = y_axis + AXIS_H
    body = _axis(total, x0, scale, y_axis)
    body += [
        _row(s, row_label(s, prefix).replace(" ", "\u00a0"), i, x0, scale, total)
        for i, (s, _, prefix) in enumerate(rows)
    ]
    label = esc(f"Timeline of {spans[0].label}")
    return (
        f'<svg class="timeline-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{label}" font-family="system-ui, sans-serif">{"".join(body)}</svg>'
    )
