"""The one method registry: every entry builds, has a settings class and a trace type, and the app's
and the CLI's method lists are read from it."""
from __future__ import annotations

import dataclasses

import pytest

from engine.methods import TRACE_TYPES, register_all_traces
from engine.methods.registry import COMPARED, METHODS, app_methods, build_method, method_info, settings_class, title
from engine.reasoners import make_reasoner


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_builds_with_its_settings(name, embedder):
    method = build_method(name, make_reasoner("", embedder=embedder))
    assert method.name == name
    settings = settings_class(name)()
    assert dataclasses.is_dataclass(settings)
    register_all_traces()
    if name in ("t2rag", "kg2rag", "ircot"):
        assert name in TRACE_TYPES


def test_titles_labels_and_app_lists_come_from_the_registry():
    assert COMPARED == ("t2rag", "kg2rag")
    assert len({m.title for m in METHODS.values()}) == len(METHODS)
    assert title("hybrid") == "Hybrid RAG" and title("from-an-old-run") == "from-an-old-run"
    assert method_info("semantic").label == "Semantic RAG (baseline)" and method_info("t2rag").label == "T2RAG"
    assert app_methods(baselines=False) == list(COMPARED)
    assert "ircot" not in app_methods() and method_info("ircot").needs_model
    with pytest.raises(ValueError, match="unknown method 'bm25'"):
        method_info("bm25")

    from components.state import METHOD_LABELS
    from components.steps import METHOD_TITLES

    assert list(METHOD_LABELS) == app_methods()
    assert METHOD_TITLES == {m.name: m.title for m in METHODS.values()}
