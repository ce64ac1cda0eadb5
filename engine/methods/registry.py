"""The one list of methods: engine name, title, class, whether it is a baseline and where the app
offers it. The CLI, the app's pages and the evaluation read it; nothing else lists methods.

    for m in METHODS.values(): print(m.name, m.title, m.baseline)
    cls = method_class("t2rag"); settings = cls.settings_cls()

Modules are imported on first use, so `python -m engine corpus list` does not pay for them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MethodInfo:
    name: str  # the engine and CLI name
    title: str  # what a user reads
    module: str
    cls: str
    baseline: bool  # a reference point, not one of the two methods the product compares
    #: offered on the app's Compare and Evaluate pages and in its Settings (the others are CLI-only:
    #: the rerank baseline needs a cross-encoder or a rerank endpoint, IRCoT a real LLM)
    in_app: bool = True
    needs_model: bool = False  # free-form reasoning: the offline reasoner cannot run it

    @property
    def label(self) -> str:
        return f"{self.title} (baseline)" if self.baseline else self.title


METHODS: dict[str, MethodInfo] = {
    m.name: m
    for m in (
        MethodInfo("t2rag", "T2RAG", "engine.methods.t2rag", "T2RAG", baseline=False),
        MethodInfo("kg2rag", "KG2RAG", "engine.methods.kg2rag", "KG2RAG", baseline=False),
        MethodInfo("semantic", "Semantic RAG", "engine.methods.baselines", "SemanticRAG", baseline=True),
        MethodInfo("hybrid", "Hybrid RAG", "engine.methods.baselines", "HybridRAG", baseline=True),
        MethodInfo("standard", "Standard RAG", "engine.methods.baselines", "StandardRAG", baseline=True),
        MethodInfo("bm25", "BM25", "engine.methods.baselines", "BM25RAG", baseline=True),
        MethodInfo("hipporag2", "HippoRAG 2", "engine.methods.hipporag2", "HippoRAG2", baseline=True),
        MethodInfo("none", "No retrieval", "engine.methods.baselines", "NoRetrieval", baseline=True),
        MethodInfo(
            "semantic-rerank",
            "Semantic RAG + rerank",
            "engine.methods.baselines",
            "SemanticRerankRAG",
            baseline=True,
            in_app=False,
        ),
        MethodInfo("ircot", "IRCoT", "engine.methods.ircot", "IRCoT", baseline=True, in_app=False, needs_model=True),
    )
}
#: The two methods the product compares; everything else is a baseline.
COMPARED = tuple(m.name for m in METHODS.values() if not m.baseline)


def method_info(name: str) -> MethodInfo:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}") from None


def method_class(name: str) -> Any:
    info = method_info(name)
    return getattr(importlib.import_module(info.module), info.cls)


def settings_class(name: str) -> Any:
    return method_class(name).settings_cls


def build_method(name: str, reasoner: Any, **kwargs: Any) -> Any:
    return method_class(name)(reasoner, **kwargs)


def title(name: str) -> str:
    """The title of a method by engine name (the name itself for an unknown one, e.g. an old run)."""
    info = METHODS.get(name)
    return info.title if info else name


def app_methods(*, baselines: bool | None = None) -> list[str]:
    """Engine names the app offers, in registry order; `baselines` True/False keeps only those."""
    return [m.name for m in METHODS.values() if m.in_app and (baselines is None or m.baseline == baselines)]


def register_all_traces() -> None:
    """Import every method module so each registers its trace type (needed to load saved traces)."""
    for module in {m.module for m in METHODS.values()}:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
