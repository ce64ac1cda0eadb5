"""The one list of methods: engine name, title, class, whether it is a baseline, where the app
offers it and which view module draws it. The CLI, the app's pages and the evaluation read it;
nothing else lists methods.

    for m in METHODS.values(): print(m.name, m.title, m.baseline)
    cls = method_class("t2rag"); settings = cls.settings_cls()

Modules are imported on first use, so `python -m engine corpus list` does not pay for them; the
view module (`MethodInfo.view`) is the front end's, never imported here.

Third-party methods join through the entry-point group `triplet_lens.methods` (docs/plugins.md):
each entry point loads to a `MethodInfo` (or a function returning one); `load_plugins()` adds them
(the app, the CLI and trace loading call it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from engine.methods.base import Method, Warms


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
    #: the front end's view module for this method (components/methods/base.py: the contract)
    view: str = "components.methods.baseline"
    #: the URL path of the app page that steps through this method alone ("" = none)
    page: str = ""

    @property
    def label(self) -> str:
        return f"{self.title} (baseline)" if self.baseline else self.title


METHODS: dict[str, MethodInfo] = {
    m.name: m
    for m in (
        MethodInfo(
            "t2rag",
            "T2RAG",
            "engine.methods.t2rag",
            "T2RAG",
            baseline=False,
            view="components.methods.t2rag",
            page="ask",
        ),
        MethodInfo(
            "kg2rag",
            "KG2RAG",
            "engine.methods.kg2rag",
            "KG2RAG",
            baseline=False,
            view="components.methods.kg2rag",
            page="kg2rag",
        ),
        MethodInfo("semantic", "Semantic RAG", "engine.methods.baselines", "SemanticRAG", baseline=True),
        MethodInfo("hybrid", "Hybrid RAG", "engine.methods.baselines", "HybridRAG", baseline=True),
        MethodInfo("standard", "Standard RAG", "engine.methods.baselines", "StandardRAG", baseline=True),
        MethodInfo("bm25", "BM25", "engine.methods.baselines", "BM25RAG", baseline=True),
        MethodInfo(
            "hipporag2",
            "HippoRAG 2",
            "engine.methods.hipporag2",
            "HippoRAG2",
            baseline=True,
            view="components.methods.hipporag2",
        ),
        MethodInfo(
            "lightrag",
            "LightRAG",
            "engine.methods.lightrag",
            "LightRAG",
            baseline=True,
            view="components.methods.lightrag",
        ),
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
#: The methods Compare runs by default (the built-in ones that are not baselines); a plug-in joins
#: Compare through its picker.
COMPARED = tuple(m.name for m in METHODS.values() if not m.baseline)

#: the entry-point group third-party methods register under (docs/plugins.md)
ENTRY_POINT_GROUP = "triplet_lens.methods"
_loaded_plugins: set[str] = set()


def load_plugins() -> list[str]:
    """Add every method registered under the `triplet_lens.methods` entry-point group; returns the
    names added by this call. An entry point loads to a `MethodInfo` or a function returning one. A
    plug-in that fails to load, or names a method already registered, is skipped with a warning
    (it never replaces a built-in method)."""
    import warnings
    from importlib.metadata import entry_points

    added = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _loaded_plugins:
            continue
        try:
            obj = ep.load()
            info = obj() if callable(obj) and not isinstance(obj, MethodInfo) else obj
        except Exception as exc:  # noqa: BLE001 -- one broken plug-in must not stop the app
            warnings.warn(f"method plug-in {ep.name!r} did not load: {type(exc).__name__}: {exc}", stacklevel=2)
            continue
        if not isinstance(info, MethodInfo):
            warnings.warn(f"method plug-in {ep.name!r} gave {type(info).__name__}, not a MethodInfo", stacklevel=2)
            continue
        _loaded_plugins.add(ep.name)
        if info.name in METHODS:
            if METHODS[info.name] != info:
                warnings.warn(f"method plug-in {ep.name!r}: a method named {info.name!r} exists", stacklevel=2)
            continue
        METHODS[info.name] = info
        added.append(info.name)
    return added


def method_on_page(page: str) -> MethodInfo:
    """The method whose own stepper page has URL path `page`."""
    return next(m for m in METHODS.values() if m.page == page)


def method_info(name: str) -> MethodInfo:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHODS)}") from None


def method_class(name: str) -> type[Method]:
    """The method's class (imported on first use): see `engine.methods.base.Method` for what it has."""
    info = method_info(name)
    return cast("type[Method]", getattr(importlib.import_module(info.module), info.cls))


def settings_class(name: str) -> Any:
    return method_class(name).settings_cls


def build_method(name: str, reasoner: Any, **kwargs: Any) -> Method:
    return cast(Any, method_class(name))(reasoner, **kwargs)


def title(name: str) -> str:
    """The title of a method by engine name (the name itself for an unknown one, e.g. an old run)."""
    info = METHODS.get(name)
    return info.title if info else name


def app_methods(*, baselines: bool | None = None) -> list[str]:
    """Engine names the app offers, in registry order; `baselines` True/False keeps only those."""
    return [m.name for m in METHODS.values() if m.in_app and (baselines is None or m.baseline == baselines)]


def register_all_traces() -> None:
    """Import every method module so each registers its trace type (needed to load saved traces)."""
    load_plugins()
    for module in {m.module for m in METHODS.values()}:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


if TYPE_CHECKING:  # mypy checks every built-in method class against the protocol (nothing runs here)
    from engine.methods.baselines import (
        BM25RAG,
        HybridRAG,
        NoRetrieval,
        SemanticRAG,
        SemanticRerankRAG,
        StandardRAG,
    )
    from engine.methods.hipporag2 import HippoRAG2
    from engine.methods.ircot import IRCoT
    from engine.methods.kg2rag import KG2RAG
    from engine.methods.lightrag import LightRAG
    from engine.methods.t2rag import T2RAG

    _t2rag: type[Method] = T2RAG
    _kg2rag: type[Method] = KG2RAG
    _semantic: type[Method] = SemanticRAG
    _hybrid: type[Method] = HybridRAG
    _standard: type[Method] = StandardRAG
    _bm25: type[Method] = BM25RAG
    _hipporag2: type[Method] = HippoRAG2
    _none: type[Method] = NoRetrieval
    _rerank: type[Method] = SemanticRerankRAG
    _ircot: type[Method] = IRCoT
    _lightrag: type[Method] = LightRAG
    _warms: type[Warms] = HippoRAG2  # its index is loaded at app start-up (components/shell/warmup.py)
