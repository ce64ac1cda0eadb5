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
    with pytest.raises(ValueError, match="unknown method 'bm26'"):
        method_info("bm26")
    assert method_info("bm25").label == "BM25 (baseline)" and method_info("hipporag2").label == "HippoRAG 2 (baseline)"

    from components.shell.state import METHOD_LABELS
    from components.steps import METHOD_TITLES

    assert list(METHOD_LABELS) == app_methods()
    assert METHOD_TITLES == {m.name: m.title for m in METHODS.values()}


def _doc_examples(doc: str) -> list[str]:
    """The indented code blocks of a docstring, each dedented."""
    import textwrap

    blocks, cur = [], []
    for line in doc.splitlines() + [""]:
        if line.startswith("    "):
            cur.append(line)
        elif cur and line.strip():
            blocks.append(textwrap.dedent("\n".join(cur)))
            cur = []
    return blocks + ([textwrap.dedent("\n".join(cur))] if cur else [])


def test_the_package_surface_and_its_docstring_examples_work(tmp_path, monkeypatch, embedder, capsys):
    """`from engine import ...` gives every name the package lists, and every example of the
    package docstring runs as written, on a workspace holding the sample corpus's name."""
    import engine
    from tests._app_helpers import build_small_corpus

    for name in engine.__all__:
        assert getattr(engine, name) is not None, name
    assert "Session" in engine.__all__ and "SessionConfig" not in engine.__all__
    build_small_corpus(tmp_path, "hotpotqa-sample", questions=1, embedder=embedder)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    examples = _doc_examples(engine.__doc__ or "")
    assert len(examples) == 2 and "make_reasoner" in examples[1]
    for code in examples:
        exec(compile(code, "engine/__init__.py docstring", "exec"), {})
    printed = capsys.readouterr().out
    assert "offline-rules" in printed and "Usage(" in printed  # the answer with its usage, the reasoner's name
