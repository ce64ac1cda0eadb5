"""The layer rules of docs/architecture.md, checked on the source: every import statement of every
module under engine/ (lazy imports inside functions included), read with `ast`, nothing executed.

    engine/*            never streamlit (the engine is a library; the app is one front end)
    engine/llm          clients only: never the reasoners, methods, store, eval or CLI
    engine/reasoners    never the methods, store, eval, session or CLI
    engine/methods      never eval, session, CLI or the front end; the store only through its protocol
    engine/triplet_rules, engine/limits, engine/textnorm, engine/types: leaves (no engine layer above them)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, relative imports resolved. `from pkg import
    sub` names the submodule `pkg.sub` when there is one, else `pkg` (a name defined in it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    out: set[str] = set()
    type_only = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and getattr(block.test, "id", getattr(block.test, "attr", "")) == "TYPE_CHECKING"
        for stmt in block.body
        for n in ast.walk(stmt)
    }  # `if TYPE_CHECKING:` imports run never
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.add(
                    sub
                    if (ROOT / Path(*sub.split("."))).with_suffix(".py").exists()
                    or (ROOT / Path(*sub.split(".")) / "__init__.py").exists()
                    else mod
                )
    return out


MODULES = {_module_name(p): _imports(p) for p in ENGINE.rglob("*.py")}


def _offenders(layer: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for mod, imports in MODULES.items():
        if mod != layer and not mod.startswith(layer + "."):
            continue
        for imp in imports:
            if any(imp == f or imp.startswith(f + ".") for f in forbidden) and not any(
                imp == a or imp.startswith(a + ".") for a in allowed
            ):
                bad.append(f"{mod} imports {imp}")
    return sorted(set(bad))


def test_the_scan_sees_the_engine():
    assert len(MODULES) > 40 and "engine.methods.t2rag.method" in MODULES
    assert "engine.reasoners.base" in MODULES["engine.methods.t2rag.method"]


def test_the_engine_never_imports_streamlit():
    assert _offenders("engine", ("streamlit", "components", "pages", "app")) == []


@pytest.mark.parametrize(
    "layer, forbidden",
    [
        (
            "engine.llm",
            (
                "engine.reasoners",
                "engine.methods",
                "engine.store",
                "engine.eval",
                "engine.cli",
                "engine.session",
                "engine.triplets.extraction",
            ),
        ),
        (
            "engine.reasoners",
            (
                "engine.methods",
                "engine.store",
                "engine.eval",
                "engine.cli",
                "engine.session",
                "engine.triplets.extraction",
            ),
        ),
        (
            "engine.methods",
            (
                "engine.eval",
                "engine.cli",
                "engine.session",
                "engine.triplets.extraction",
                "engine.integrity.backup",
                "engine.integrity",
            ),
        ),
        (
            "engine.core.triplet_rules",
            ("engine.llm", "engine.reasoners", "engine.methods", "engine.store", "engine.triplets.extraction"),
        ),
        ("engine.core.limits", ("engine.llm", "engine.reasoners", "engine.methods", "engine.store")),
        ("engine.core.textnorm", ("engine.llm", "engine.reasoners", "engine.methods", "engine.store")),
        ("engine.core.types", ("engine.llm", "engine.reasoners", "engine.methods", "engine.store")),
    ],
)
def test_each_layer_imports_only_below_it(layer, forbidden):
    assert _offenders(layer, forbidden) == []


def test_methods_reach_the_store_only_through_its_protocol():
    store_modules = sorted(m for m in MODULES if m == "engine.store" or m.startswith("engine.store."))
    allowed = tuple(m for m in store_modules if m.endswith(".protocol"))
    assert _offenders("engine.methods", ("engine.store",), allowed) == []


#: Cycles still to break, each with the step that removes it (none left).
KNOWN_CYCLES: dict[frozenset, str] = {}


def test_no_import_cycles_in_the_engine():
    """A cycle means two modules cannot be understood (or tested) apart. Package __init__ files that
    re-export their submodules do not count: importing `pkg.sub` runs `pkg` first by design."""
    import networkx as nx

    g = nx.DiGraph()
    for mod, imports in MODULES.items():
        for imp in imports:
            parts = imp.split(".")
            target = next(
                (".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in MODULES), None
            )
            if target and target != mod and not mod.startswith(target + "."):
                g.add_edge(mod, target)
    cycles = [frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert [sorted(c) for c in cycles if c not in KNOWN_CYCLES] == []
