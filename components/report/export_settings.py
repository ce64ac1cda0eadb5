"""The export's settings section: per method, the preset it ran and how it departs from the paper,
as a table a reader can scan (static, escaped markup: it reads with scripts off).

    T2RAG · tuned preset · 7 settings differ from the paper
    Inputs: embedder bundled:all-MiniLM-L6-v2 (paper: nvidia/NV-Embed-v2) · triplets offline rules (paper: ...) · ...
    | setting | this run | paper | why |
    SPEC's bug fixes of the authors' code, kept by every preset: all source chunks; wh-words as ...

Read from the settings each trace recorded (components.widgets.preset_badge.preset_of), like the
badge on screen.
"""

from __future__ import annotations

from components.shell.safe import esc
from engine.methods.registry import title as method_title

CSS = """
.presets table{border-collapse:collapse;font-size:.85em;margin:.3em 0 .6em;width:100%}
.presets th,.presets td{border:1px solid #dde;padding:.25em .5em;text-align:left;vertical-align:top}
.presets th{background:#f4f6fa} .presets h3{font-size:1em;margin:.8em 0 .2em} .presets .why{color:#555}
.presets .fixes{font-size:.85em;color:#444;margin:.2em 0} .presets .inputs{font-size:.85em;color:#444;margin:.1em 0}
"""

#: the preset's name as the badge on screen words it
NAMES = {"paper": "paper preset", "tuned": "tuned preset", "custom": "custom settings"}


def _method_block(result) -> str:
    from components.widgets.preset_badge import inputs_line, inputs_of, preset_of
    from engine.methods.presets import has_presets

    name, deps = preset_of(result)
    head = f"<h3>{esc(method_title(result.method))}"
    line = inputs_line(result)
    if not name or not has_presets(result.method):
        one = head + " · one form (its paper and tuned settings are the same)</h3>"
        return one + (f'<p class="inputs">{esc(line)}</p>' if line else "")
    changed = [d for d in deps if d.kind == "setting"]
    count = f"{len(changed)} setting{'s' if len(changed) != 1 else ''} differ from the paper" if changed else ""
    _, _, diff = inputs_of(result)
    same = " · every setting is the paper's" + ("; its inputs are not" if diff else "")
    head += f" · {esc(NAMES.get(name, name))}" + (f" · {count}" if count else same)
    out = [head + "</h3>"]
    if line:
        out.append(f'<p class="inputs">{esc(line)}</p>')
    if changed:
        rows = "".join(
            f"<tr><td>{esc(d.name)}</td><td>{esc(d.value)}</td><td>{esc(d.paper)}</td>"
            f'<td class="why">{esc(d.reason)}</td></tr>'
            for d in changed
        )
        out.append(f"<table><tr><th>setting</th><th>this run</th><th>paper</th><th>why</th></tr>{rows}</table>")
    kept = [d for d in deps if d.kind in ("fix", "engine")]
    if kept:
        items = "".join(f"<li><b>{esc(d.name)}</b>: {esc(d.value)} (reference code: {esc(d.paper)})</li>" for d in kept)
        out.append(
            f'<details class="fixes"><summary>{len(kept)} bug fixes of the authors\' code and engine behaviours, '
            f"kept by every preset: {esc(', '.join(d.name for d in kept))}</summary><ul>{items}</ul></details>"
        )
    return "".join(out)


def settings_block(run) -> str:
    """The section: one block per method of the run."""
    if not run.results:
        return ""
    return (
        '<section class="presets"><h2>Settings each method ran with</h2>'
        + "".join(_method_block(r) for r in run.results)
        + "</section>"
    )
