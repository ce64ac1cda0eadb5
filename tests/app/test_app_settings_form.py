"""Settings are what runs (AppTest, offline reasoner): after loading a preset every field of the
form shows that preset's value, Apply applies what the form shows, settings that are neither
preset say which fields make them custom, and the settings travel in the link (reload, a shared
link). Before: a keyed field ignored its new `value=`, so the form kept the previous preset's
values and Apply silently put them back; the loaded preset was lost on reload."""

from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from tests._apptest import goto as _goto
from tests._apptest import ok as _ok
from tests._apptest import open_link as _open_link

pytestmark = pytest.mark.timeout(600)

PRESET_METHODS = ("t2rag", "kg2rag")


def _form_values(at: AppTest, method: str) -> dict:
    """The value each field of `method`'s form shows, by setting name."""
    from engine.methods.registry import settings_class

    prefix = f"settings_{method}_"
    out = {}
    for f in dataclasses.fields(settings_class(method)):
        for kind in ("number_input", "checkbox", "selectbox", "text_input"):
            found = [w for w in at.get(kind) if getattr(w, "key", None) == prefix + f.name]
            if found:
                out[f.name] = found[0].value  # type: ignore[union-attr]
    return out


def _expected(method: str, preset: str) -> dict:
    from engine.methods.presets import preset_settings

    s = preset_settings(method, preset)
    return {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}


def _badges(at: AppTest) -> list[str]:
    return [p.proto.popover.label for p in at.get("popover")]


@pytest.mark.parametrize("method", PRESET_METHODS)
def test_loading_each_preset_shows_every_field_and_apply_applies_what_is_shown(app, method):
    from engine.methods.presets import preset_name

    at = _goto(app, "settings")
    for preset in ("paper", "tuned", "paper"):  # both directions: the bug kept the previous preset's fields
        at.button(key=f"preset_{method}_{preset}").click().run()
        _ok(at)
        assert _form_values(at, method) == _expected(method, preset), preset
        at.button(key=f"settings_{method}_apply").click().run()  # Apply with the fields as shown
        _ok(at)
        applied = at.session_state["session"].settings_for(method)
        assert preset_name(method, applied) == preset, (preset, applied)
    badge = "📄 paper preset"
    assert any(label.startswith(badge) for label in _badges(at)), _badges(at)
    # Reset (a button under the form) also fills every field
    at.button(key=f"preset_{method}_tuned").click().run()
    at.button(key=f"reset_{method}").click().run()
    _ok(at)
    assert _form_values(at, method) == _expected(method, "paper")


def test_settings_neither_preset_say_custom_and_which_fields(app):
    at = _goto(app, "settings")
    at.button(key="preset_kg2rag_tuned").click().run()
    at.number_input(key="settings_kg2rag_k").set_value(7)
    at.button(key="settings_kg2rag_apply").click().run()
    _ok(at)
    assert any(label.startswith("✏️ custom settings") for label in _badges(at)), _badges(at)
    custom = [c.value for c in at.caption if c.value.startswith("✏️ Custom:")]
    assert custom == ["✏️ Custom: the tuned preset with Chunks retrieved (k) = 7 (tuned: 10)."], custom
    at.button(key="preset_kg2rag_tuned").click().run()
    assert not [c.value for c in at.caption if c.value.startswith("✏️ Custom:")]


def test_the_methods_settings_survive_a_reload_and_travel_in_a_link(app, app_workspace, monkeypatch):
    at = _goto(app, "settings")
    at.button(key="preset_kg2rag_paper").click().run()
    at.number_input(key="settings_t2rag_k").set_value(8)
    at.button(key="settings_t2rag_apply").click().run()
    _ok(at)
    link = dict(at.query_params)
    assert link["settings"] == "t2rag:tuned;k=8|kg2rag:paper", link
    sent = at.session_state["session"]
    again = _open_link(app_workspace, monkeypatch, "settings", link)
    got = again.session_state["session"]
    for method in PRESET_METHODS:
        assert got.settings_for(method) == sent.settings_for(method), method
    assert _form_values(again, "t2rag")["k"] == 8 and _form_values(again, "kg2rag") == _expected("kg2rag", "paper")
    assert dict(again.query_params)["settings"] == link["settings"]


def test_a_link_with_bad_settings_says_what_it_left_out(app_workspace, monkeypatch):
    at = _open_link(
        app_workspace,
        monkeypatch,
        "settings",
        {"settings": "kg2rag:paper;k=many;nope=1;reranker=ce:/etc/passwd|t2rag:famous|who:tuned"},
    )
    warned = " ".join(w.value for w in at.warning)
    assert "k='many'" in warned and "'nope'" in warned and "'famous'" in warned and "'who'" in warned, warned
    assert "reranker (set on the Settings page, not by a link)" in warned  # a model path or endpoint: never
    s = at.session_state["session"].settings_for("kg2rag")
    from engine.methods.presets import preset_name

    assert preset_name("kg2rag", s) == "paper" and not s.reranker  # what could be read was applied
