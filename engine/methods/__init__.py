"""Every method by its CLI name. Modules are imported on first use so `python -m engine corpus list`
does not pay for them."""
from __future__ import annotations

import importlib
from typing import Any

from engine.methods.base import Method, Result, TRACE_TYPES, Usage, load_result, save_result  # noqa: F401

#: CLI name -> (module, class). Each class is built as `Cls(reasoner)`.
METHODS: dict[str, tuple[str, str]] = {
    "t2rag": ("engine.methods.t2rag", "T2RAG"),
    "kg2rag": ("engine.methods.kg2rag", "KG2RAG"),
    "none": ("engine.methods.baselines", "NoRetrieval"),
    "standard": ("engine.methods.baselines", "StandardRAG"),
    "semantic": ("engine.methods.baselines", "SemanticRAG"),
    "semantic-rerank": ("engine.methods.baselines", "SemanticRerankRAG"),
    "hybrid": ("engine.methods.baselines", "HybridRAG"),
    "ircot": ("engine.methods.ircot", "IRCoT"),
}


def method_class(name: str) -> type:
    try:
        module, cls = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}") from None
    return getattr(importlib.import_module(module), cls)


def build_method(name: str, reasoner: Any, **kwargs: Any) -> Method:
    return method_class(name)(reasoner, **kwargs)


def register_all_traces() -> None:
    """Import every method module so each registers its trace type (needed to load saved traces)."""
    for module, _ in set(METHODS.values()):
        try:
            importlib.import_module(module)
        except ImportError:
            pass
