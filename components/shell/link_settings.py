"""The methods' settings as one link parameter: each method's preset name plus the fields changed
on top of it, so a reload or a shared link runs what the sender ran.

    settings=kg2rag:paper|t2rag:tuned;k=8;rounds=2

A method at its default (`tuned`, nothing changed) is left out. Read back field by field against
the method's settings class: an unknown method, field or value is dropped and named, never applied.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

#: between methods, between a method's preset and its changed fields
METHOD_SEP, FIELD_SEP = "|", ";"
#: the longest parameter read (a link is untrusted input)
MAX_PARAM = 2000


def _fields(settings: Any) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.init}


def _carried(name: str) -> bool:
    """A link carries the method's choices, not the server's configuration: a reranker names a
    model path or an endpoint, which a link someone sends must not set (engine.methods.presets.NEUTRAL)."""
    from engine.methods.presets import NEUTRAL

    return name not in NEUTRAL


def nearest_preset(method: str, settings: Any) -> tuple[str, dict[str, tuple[Any, Any]]]:
    """The preset `settings` differ least from, and each differing field as (value, preset's)."""
    from engine.methods.presets import PRESETS, preset_settings

    best: tuple[str, dict[str, tuple[Any, Any]]] | None = None
    mine = _fields(settings)
    for preset in sorted(PRESETS, key=lambda p: p != "tuned"):  # a tie goes to the default
        theirs = _fields(preset_settings(method, preset))
        diff = {k: (v, theirs[k]) for k, v in mine.items() if k in theirs and v != theirs[k]}
        if best is None or len(diff) < len(best[1]):
            best = (preset, diff)
    assert best is not None  # PRESETS is never empty
    return best


def _text(value: Any) -> str:
    return str(value)


def method_param(method: str, settings: Any) -> str:
    """`preset;field=value;...` for one method, "" at its default (tuned, nothing changed)."""
    if settings is None or not dataclasses.is_dataclass(settings):
        return ""
    preset, diff = nearest_preset(method, settings)
    if preset == "tuned" and not diff:
        return ""
    return FIELD_SEP.join([preset, *(f"{k}={_text(v)}" for k, (v, _) in diff.items() if _carried(k))])


def settings_param(session: Any) -> str:
    """Every method whose session settings are not its default, as one parameter."""
    from engine.methods.registry import app_methods

    parts = []
    for method in app_methods():
        if method not in session.method_overrides:
            continue
        text = method_param(method, session.settings_for(method))
        if text:
            parts.append(f"{method}:{text}")
    return METHOD_SEP.join(parts)


def _parse(tp: Any, raw: str) -> Any:
    if tp is bool:
        if raw not in ("True", "False"):
            raise ValueError("not True or False")
        return raw == "True"
    if tp is int:
        return int(raw)
    if tp is float:
        return float(raw)
    if tp is str:
        return raw
    raise ValueError("not a setting a link can carry")


def parse_method(method: str, text: str) -> tuple[str, dict[str, Any], list[str]]:
    """(preset, changed fields, problems) from one method's part of the parameter."""
    from engine.methods.presets import PRESETS
    from engine.methods.registry import settings_class

    preset, *pairs = text.split(FIELD_SEP)
    problems = []
    if preset not in PRESETS:
        problems.append(f"{method}: unknown preset {preset[:20]!r}")
        preset = "tuned"
    cls = settings_class(method)
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, _, raw = pair.partition("=")
        if name not in names:
            problems.append(f"{method}: unknown setting {name[:30]!r}")
            continue
        if not _carried(name):
            problems.append(f"{method}: {name} (set on the Settings page, not by a link)")
            continue
        try:
            values[name] = _parse(hints.get(name), raw)
        except ValueError as exc:
            problems.append(f"{method}: {name}={raw[:30]!r} ({exc})")
    return preset, values, problems


def apply_settings_param(session: Any, text: str) -> list[str]:
    """Load each method's preset and changed fields from the parameter into `session`; the
    problems, each naming what was left out."""
    from engine.methods.registry import app_methods

    problems: list[str] = []
    offered = app_methods()
    for part in text[:MAX_PARAM].split(METHOD_SEP):
        method, _, rest = part.partition(":")
        if method not in offered:
            problems.append(f"settings of unknown method {method[:30]!r}")
            continue
        preset, values, bad = parse_method(method, rest)
        problems += bad
        try:
            session.use_preset(method, preset)
            if values:
                session.set_method_settings(method, **values)
        except (ValueError, TypeError) as exc:  # a value the settings class refuses
            session.reset_method_settings(method)
            problems.append(f"{method}'s settings ({exc})")
    return problems


def describe_difference(method: str, settings: Any) -> str:
    """What makes `settings` custom, in words: "tuned with k = 8 (tuned: 10), hops = 2 (tuned: 1)";
    "" when they are a preset."""
    from components.shell.settings_form import human_label

    preset, diff = nearest_preset(method, settings)
    if not diff:
        return ""
    shown = ", ".join(f"{human_label(k)} = {v!r} ({preset}: {p!r})" for k, (v, p) in diff.items())
    return f"the {preset} preset with {shown}"
