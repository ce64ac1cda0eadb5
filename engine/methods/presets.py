"""Named presets for every method, in one registry: `paper` and `tuned`.

    settings = preset_settings(method, "paper")            # the paper and the authors' code
    preset_name(method, settings)                            # "paper"
    departures(method, tuned)                                # [Departure(name, tuned value, paper value, ...), ...]

* `paper` is the paper and its authors' code, with SPEC's documented bug fixes only (the method's `preset_fixes`, each
  named: every preset keeps them, and the trace lists them as departures of kind "fix").
* `tuned` is our measured default (docs/benchmarks.md): the settings dataclasses' own defaults.

A settings object that is neither (a preset with `--set k=8` on top, a Settings form edit) is
`custom`; its departures from `paper` are listed all the same. `reranker` is configuration, not a
choice of the preset (a cross-encoder is used when one is configured, in both), so it is never a
departure. The trace records the preset and its departures (`trace.preset`, `trace.departures`),
the screen names the preset on a badge and lists the departures in one click, and
docs/methods.md's tables are generated from each method's `departures.py` and checked
(tests/engine/methods/test_presets.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.methods.departure import Departure
from engine.methods.inputs import FIELDS

PRESETS = ("paper", "tuned")
CUSTOM = "custom"
#: Fields that configure the run rather than choose a method variant: never a departure.
NEUTRAL = frozenset({"reranker"})

#: Each method's departures live in its own package (`departures.py`), named on its class:
#: `preset_reasons` (setting -> why `tuned` departs there), `preset_fixes` (SPEC's named bug fixes and
#: the engine behaviour every preset shares) and `run_departures` (what a run cannot do as the paper
#: does, whatever its settings). Nothing here names a method.


def reasons(method: str) -> dict[str, str]:
    return dict(_method_cls(method).preset_reasons)


def fixes(method: str) -> tuple[Departure, ...]:
    return tuple(_method_cls(method).preset_fixes)


def run_departures(method: str) -> tuple[Departure, ...]:
    return tuple(_method_cls(method).run_departures)


def _method_cls(method: str) -> Any:
    from engine.methods.registry import method_class

    return method_class(method)


#: A method with a paper of its own has a settings class with a `paper()` constructor
#: (`T2RAGSettings.paper`, `KG2RAGSettings.paper`, `HippoRAG2Settings.paper`); every other method (the
#: baselines, IRCoT) has one form, so its `paper` and `tuned` are its settings class's defaults.


def has_presets(method: str) -> bool:
    """True for a method with a paper of its own (T2RAG, KG2RAG, HippoRAG 2): its settings class
    has a `paper()` constructor, so its `paper` and `tuned` presets can differ."""
    return callable(getattr(_settings_cls(method), "paper", None))


def _settings_cls(method: str) -> Any:
    from engine.methods.registry import settings_class

    return settings_class(method)


def preset_settings(method: str, preset: str, **overrides: Any) -> Any:
    """The method's settings under `preset` ("paper" or "tuned"), with `overrides` on top."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    cls = _settings_cls(method)
    base = cls.paper() if preset == "paper" and has_presets(method) else cls()
    return dataclasses.replace(base, **overrides) if overrides else base


def _compared(settings: Any) -> dict[str, Any]:
    if settings is None or not dataclasses.is_dataclass(settings):
        return {}
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name not in NEUTRAL}


def preset_name(method: str, settings: Any) -> str:
    """ "paper", "tuned" or "custom" (neither; e.g. a preset with a changed k)."""
    mine = _compared(settings)
    for preset in PRESETS:
        if mine == _compared(preset_settings(method, preset)):
            return preset
    return CUSTOM


def departures(method: str, settings: Any, *, fixes: bool = True) -> list[Departure]:
    """Every setting of `settings` that differs from the paper's (name, value, paper value, reason),
    after SPEC's named bug fixes (kind "fix") and the engine behaviour every preset shares (kind
    "engine") when `fixes`."""
    mine = _compared(settings)
    paper = _compared(preset_settings(method, "paper")) if mine else {}
    out = list(_method_cls(method).preset_fixes) if fixes else []
    for name, value in mine.items():
        if name in paper and value != paper[name]:
            reason = _method_cls(method).preset_reasons.get(name, "changed in this session's settings")
            out.append(Departure(name, _show(value), _show(paper[name]), reason))
    return out


def _show(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value == -1:
        return "-1 (no limit)"
    return str(value)


def describe(method: str, settings: Any) -> tuple[str, list[Departure]]:
    """The preset name and the departures list, as a trace records them."""
    return preset_name(method, settings), departures(method, settings)


def prompted(reasoner: Any, prompt_set: str) -> Any:
    """`reasoner` building its prompts from `prompt_set` ("tuned", or a method's "<method>-paper" set);
    a reasoner without prompts (the offline rules) is returned as it is."""
    variant = getattr(reasoner, "with_prompt_set", None)
    return variant(prompt_set) if callable(variant) else reasoner


# --- docs/methods.md's preset tables are generated here (tests/engine/methods/test_presets.py keeps them in step) ---

DOCS_BEGIN, DOCS_END = (
    "<!-- presets:{method} (generated: python -m engine.methods.presets --write-docs) -->",
    ("<!-- /presets:{method} -->"),
)


def documented() -> tuple[str, ...]:
    """Methods whose preset table docs/methods.md holds (generated between its markers): every method
    with a paper of its own."""
    from engine.methods.registry import METHODS

    return tuple(m for m in METHODS if has_presets(m))


def docs_table(method: str) -> str:
    """The method's presets as a markdown table: every setting, its paper and tuned value, and why
    tuned departs; then SPEC's named bug fixes that both keep."""
    paper, tuned = preset_settings(method, "paper"), preset_settings(method, "tuned")
    rows = ["| setting | `paper` | `tuned` | why `tuned` departs |", "|---|---|---|---|"]
    for f in dataclasses.fields(paper):
        a, b = getattr(paper, f.name), getattr(tuned, f.name)
        why = "" if a == b else reasons(method).get(f.name, "")
        if f.name in NEUTRAL:
            why = "configuration, not a preset choice: when set, a cross-encoder ranks in both"
        rows.append(f"| `{f.name}` | {_show(a)} | {_show(b)} | {why} |")
    paper_in = _method_cls(method).paper_inputs
    if paper_in is not None:
        fed = "; ".join(f"{label} {paper_in.shown(name)}" for name, label in FIELDS if getattr(paper_in, name))
        rows += [
            "",
            f"The paper's inputs (a preset sets none of them; every result's inputs line compares its own): {fed} "
            f"({paper_in.source}).",
        ]
    rows += ["", "SPEC's bug fixes of the authors' code (and engine behaviour), kept by both presets:", ""]
    rows += [
        f"- **{d.name}**{' (engine)' if d.kind == 'engine' else ''}: {d.value} (reference code: {d.paper}); {d.reason}"
        for d in fixes(method)
    ]
    if run_departures(method):
        rows += ["", "A run's own departures, whatever its settings (the trace and the badge name them):", ""]
        rows += [f"- **{d.name}**: {d.value} (paper: {d.paper}); {d.reason}" for d in run_departures(method)]
    return "\n".join(rows)


def docs_block(method: str) -> str:
    return "\n".join([DOCS_BEGIN.format(method=method), docs_table(method), DOCS_END.format(method=method)])


def write_docs(path: str) -> None:
    """Rewrite each generated block of `path` (docs/methods.md) from the registry."""
    import re
    from pathlib import Path

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    for method in documented():
        begin = re.escape(DOCS_BEGIN.format(method=method))
        end = re.escape(DOCS_END.format(method=method))
        block = docs_block(method)
        text = re.sub(f"{begin}.*?{end}", lambda _m: block, text, flags=re.DOTALL)  # noqa: B023 - used at once
    p.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--write-docs"]:
        write_docs(sys.argv[2] if len(sys.argv) > 2 else "docs/methods.md")
    else:
        print("\n\n".join(docs_block(m) for m in documented()))
