"""The preset a result ran under, and how it departs from the paper: one badge wherever a method's
result is shown (Ask, KG2RAG, Compare columns, presentation, HTML export, eval summary), with its
departures one click away. Also the facts a fair comparison needs per column: the chunk budget,
the first stage, and one token line drawn the same way for every method.

The names and reasons come from the engine's one registry (engine/methods/presets.py); a trace
made before presets existed gets them computed from its recorded settings."""

from __future__ import annotations

import dataclasses
from typing import Any

import streamlit as st

from engine.methods.presets import CUSTOM, describe, has_presets

BADGES = {"paper": "📄 paper preset", "tuned": "🛠 tuned preset", CUSTOM: "✏️ custom settings"}
HELP = {
    "paper": "The paper and its authors' code, with SPEC's named bug fixes only.",
    "tuned": "Our measured defaults (docs/benchmarks.md): each departure from the paper is listed with its reason.",
    CUSTOM: "Neither preset: settings changed by hand. Each departure from the paper is listed.",
}


def preset_of(result) -> tuple[str, list]:
    """(preset name, departures) of a result, from the settings its trace recorded (the same as the
    trace's own `preset` / `departures`, which it also holds; the settings are validated when a
    trace loads, while the recorded strings of an uploaded file are not), else the recorded ones."""
    tr = getattr(result, "trace", None)
    settings = getattr(tr, "settings", None)
    # what the run itself could not do as the paper does (HippoRAG 2's filter under the offline rules)
    ran = list(tr.run_departures()) if callable(getattr(tr, "run_departures", None)) else []
    if settings is not None and dataclasses.is_dataclass(settings):
        name, deps = describe(result.method, settings)
        return name, deps + ran
    if getattr(tr, "preset", ""):
        return str(tr.preset), list(tr.departures)
    return "", []


def inputs_of(result) -> tuple[Any, Any, list[tuple[str, str, str]]]:
    """(the run's inputs, its method's paper's, the inputs that differ: (field, this run, paper))."""
    from engine.methods.inputs import differing
    from engine.methods.registry import METHODS, method_class

    run = getattr(result, "inputs", None)
    paper = None
    if result.method in METHODS:
        try:
            paper = method_class(result.method).paper_inputs
        except ImportError:  # a plug-in no longer installed
            paper = None
    return run, paper, differing(run, paper)


def inputs_line(result) -> str:
    """One line: what the run was fed, each input beside its paper's where they differ."""
    from engine.methods.inputs import describe

    run, paper, _ = inputs_of(result)
    return describe(run, paper)


def show_inputs_line(result) -> None:
    line = inputs_line(result)
    if line:
        st.caption(line)


_MD = str.maketrans({c: "\\" + c for c in "\\`*_[]()<>#!|"})


def _cell(text: str) -> str:
    """Plain text inside markdown: its markup characters escaped, on one line."""
    return " ".join(str(text).split()).translate(_MD)


def _settings_table(deps: list) -> str:
    """A markdown table (not a dataframe: pages index their dataframes, a popover's must not count)."""
    rows = [
        f"| {_cell(d.name)} | {_cell(d.value)} | {_cell(d.paper)} | {_cell(d.reason)} |"
        for d in deps
        if d.kind == "setting"
    ]
    return "| setting | this run | paper | why |\n|---|---|---|---|\n" + "\n".join(rows)


def _inputs_table(diff: list[tuple[str, str, str]]) -> str:
    rows = [f"| {_cell(name)} | {_cell(mine)} | {_cell(theirs)} |" for name, mine, theirs in diff]
    return "**Inputs that are not the paper's**\n\n| input | this run | paper |\n|---|---|---|\n" + "\n".join(rows)


def _fixes_text(deps: list) -> str:
    return "\n".join(
        f"- **{_cell(d.name)}**{' (engine behaviour)' if d.kind == 'engine' else ''}: {_cell(d.value)} "
        f"(reference code: {_cell(d.paper)})"
        for d in deps
        if d.kind in ("fix", "engine")
    )


def show_preset_badge(result, key: str) -> None:
    """The badge, and (one click) every setting that differs from the paper plus SPEC's named fixes."""
    name, deps = preset_of(result)
    if not name or not has_presets(result.method):
        return
    changed = [d for d in deps if d.kind in ("setting", "run")]
    many = "departure" if len(changed) == 1 else "departures"
    _, _, diff = inputs_of(result)
    label = BADGES.get(name, name) + (f" · {len(changed)} {many} from the paper" if changed else "")
    label += f" · {len(diff)} input{'s' if len(diff) != 1 else ''} not the paper's" if diff else ""
    with st.popover(label, help=HELP.get(name, ""), key=f"preset_{key}"):
        if any(d.kind == "setting" for d in changed):
            st.markdown("**Settings that differ from the paper**")
            st.markdown(_settings_table(deps))
        else:
            st.markdown("Every setting is the paper's." + (" Its inputs are not:" if diff else ""))
        if diff:
            st.markdown(_inputs_table(diff))
        for d in deps:
            if d.kind == "run":
                st.markdown(
                    f"**This run: {_cell(d.name)}**: {_cell(d.value)} (paper: {_cell(d.paper)}); {_cell(d.reason)}"
                )
        fixes = _fixes_text(deps)
        if fixes:
            st.markdown(
                "**SPEC's bug fixes of the authors' code, and engine behaviour** (every preset keeps them)\n\n" + fixes
            )


def show_settings_badge(method: str, settings, key: str) -> None:
    """The badge for settings not yet run (the Settings page)."""
    show_preset_badge(_Shown(method, settings), key=key)


def preset_picker(method: str, disabled: bool = False) -> str | None:
    """One button per preset; the preset clicked, else None."""
    from engine.methods.presets import PRESETS

    picked = None
    for col, preset in zip(st.columns(len(PRESETS)), PRESETS):
        if col.button(
            f"Load the {preset} preset",
            key=f"preset_{method}_{preset}",
            disabled=disabled,
            help=HELP.get(preset, ""),
            width="stretch",
        ):
            picked = preset
    return picked


def show_preset_badges(results: list, key: str) -> None:
    """One badge per result with presets, side by side."""
    shown = [r for r in results if has_presets(r.method) and preset_of(r)[0]]
    for col, r in zip(st.columns(max(1, len(shown))), shown):
        with col:
            st.caption(r.method)
            show_preset_badge(r, key=f"{key}_{r.method}")


def preset_lines(result) -> list[str]:
    """The same as plain lines (the HTML export lists them all: no click there)."""
    name, deps = preset_of(result)
    if not name or not has_presets(result.method):
        return []
    changed = [d for d in deps if d.kind == "setting"]
    _, _, diff = inputs_of(result)
    head = f"Preset: {name}"
    if not changed:
        head += " (every setting is the paper's" + (
            "; inputs are not: " + ", ".join(n for n, _, _ in diff) if diff else ""
        )
        head += ")"
    line = inputs_line(result)
    return (
        [head]
        + ([line] if line else [])
        + [f"departs from the paper: {d.name} = {d.value} (paper: {d.paper}): {d.reason}" for d in changed]
        + [
            f"this run departs from the paper: {d.name}: {d.value} (paper: {d.paper}); {d.reason}"
            for d in deps
            if d.kind == "run"
        ]
        + [
            f"{'bug fix' if d.kind == 'fix' else 'engine behaviour'} kept: {d.name}: {d.value} "
            f"(reference code: {d.paper})"
            for d in deps
            if d.kind in ("fix", "engine")
        ]
    )


# --- a fair comparison: budget, first stage, tokens ------------------------------------------------


def _get(settings: Any, name: str, default: Any = None) -> Any:
    return getattr(settings, name, default) if settings is not None else default


def first_stage(result) -> str:
    """The method's first retrieval stage, named as it ran (its view's `first_stage`)."""
    from components.contract import view_for

    return view_for(result).first_stage(result)


def chunk_budget(result) -> str:
    """k per round and in total, the way each method spends it."""
    tr = getattr(result, "trace", None)
    s = _get(tr, "settings")
    k = _get(s, "k")
    if k is None and _get(s, "qa_top_k") is not None:  # a method that reads its best passages (HippoRAG 2)
        return f"budget: qa_top_k = {_get(s, 'qa_top_k')} passages read ({len(result.evidence_chunk_ids)} used)"
    if k is None:
        return "no chunks"
    if _get(s, "rounds") is not None:  # a method that retrieves k chunks each round (T2RAG)
        rounds = len(getattr(tr, "rounds", []) or [])
        shown = len(tr.chunk_ids_shown()) if hasattr(tr, "chunk_ids_shown") else len(result.evidence_chunk_ids)
        return (
            f"budget: k = {k} chunks per round × {rounds} of up to {_get(s, 'rounds')} rounds ({shown} shown in total)"
        )
    if _get(s, "steps") is not None:  # a method that retrieves k chunks each step (IRCoT)
        return f"budget: k = {k} chunks per step × up to {_get(s, 'steps')} steps"
    return f"budget: k = {k} chunks in total ({len(result.evidence_chunk_ids)} used)"


def token_line(result) -> str:
    """Needed, cached and billed tokens, and dollars: the same line for every method."""
    u = result.usage
    needed = u.prompt_tokens + u.completion_tokens
    billed = u.billed_prompt_tokens + u.billed_completion_tokens
    cost = "price unknown" if u.cost is None else f"${u.cost:.5f}"
    return (
        f"{u.calls} LLM calls ({u.cached_calls} cached) · {needed} tokens needed · {billed} billed · {cost}"
        f" · engine {u.engine_time:.2f}s · LLM {u.llm_time:.2f}s"
    )


def show_column_facts(result, run, key: str) -> None:
    """A Compare column's badge, budget, first stage and token line; a method whose view names a
    fair reference (e.g. KG2RAG with hybrid seeds: the Hybrid RAG baseline) says so."""
    from components.contract import view_for
    from engine.methods.registry import title

    show_preset_badge(result, key)
    one_form = "" if has_presets(result.method) else "one form (its paper and tuned presets are the same) · "
    st.caption(f"{one_form}{chunk_budget(result)} · {first_stage(result)}")
    ref = view_for(result).fair_reference(result)
    if ref and ref != result.method:
        beside = " (in this comparison)" if run is not None and run.by_method(ref) else " (add it to compare)"
        st.caption(
            f"↔ its first stage is the same as a baseline's: the **{title(ref)}** baseline is the fair "
            "reference beside it" + beside
        )
    st.caption(token_line(result))
    show_inputs_line(result)


def show_eval_presets(summary) -> None:
    """One badge per evaluated method, from the settings its output folder recorded."""
    import json
    from pathlib import Path

    from engine.core import serde
    from engine.methods.registry import settings_class

    path = Path(summary.out_dir) / "run.json"
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("settings", {})
    except (OSError, ValueError):
        recorded = {}
    shown = [m.method for m in summary.methods if has_presets(m.method)]
    for col, method in zip(st.columns(max(1, len(shown))), shown):
        raw = recorded.get(method)
        settings = serde.from_dict(settings_class(method), raw) if raw else settings_class(method)()
        with col:
            st.caption(method)
            inputs = (getattr(summary, "inputs", None) or {}).get(method)
            show_preset_badge(_Shown(method, settings, inputs), key=f"eval_{method}")


@dataclasses.dataclass
class _Shown:
    """A result-like view of recorded settings (the eval summary has no single trace)."""

    method: str
    settings: Any
    inputs: Any = None  # the run's RunInputs, when known

    @property
    def trace(self):
        return self
