"""The import floors of docs/architecture.md, checked on the source of every folder: engine/,
components/, pages/ and app.py. Each folder stands on one floor; a module imports only from its own
floor or below (lazy imports inside functions included, read with `ast`, nothing executed), so a
folder can be understood with only the floors under it. An import that runs up a floor is a
failure unless it is one of the `EXCEPTIONS` below, each with its reason. Module cycles are
checked across the whole front end too (the engine's: test_import_graph.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: bottom to top; one entry per floor, each the folders (or top-level modules) standing on it
FLOORS: list[tuple[str, ...]] = [
    ("engine.core",),
    ("engine.llm",),
    ("engine.embed",),
    ("engine.vectors",),
    ("engine.reasoners",),
    ("engine.ingest",),
    ("engine.store",),
    ("engine.integrity",),
    ("engine.triplets",),
    ("engine.extraction_batch",),
    ("engine.methods",),
    ("engine.runs",),
    ("engine.session",),
    ("engine.eval",),
    ("engine.verdict",),
    ("engine.cli", "engine.__main__", "engine"),
    ("components.shell",),
    ("components.graphs", "components.chunk_names"),
    ("components.steps",),
    ("components.contract",),
    ("components.widgets",),
    ("components.methods",),
    ("components.compare", "components.corpus"),
    ("components.eval",),
    ("components.report",),
    ("components.screens",),
    ("pages", "app"),
]

#: (importing module, imported folder) -> why this one arrow may run up
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("engine.store.workspace", "engine.integrity"): "a workspace's drop and a corpus's destructive change never "
    "run without their snapshot, and no workspace opens without the sweep of interrupted operations: the three "
    "hooks (integrity.interrupted.sweep, integrity.backup.snapshot_before, keep_dropped) are imported inside the "
    "methods that call them, so a Workspace built anywhere (tests, plug-ins) keeps its way back",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files() -> list[Path]:
    return [*ROOT.glob("engine/**/*.py"), *ROOT.glob("components/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.split(".")[0] in ("engine", "components", "pages", "app")}


def _floor(module: str) -> int | None:
    """The floor of the folder holding `module` (the longest matching prefix)."""
    best, level = -1, None
    for i, names in enumerate(FLOORS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, level = len(name), i
    return level


def test_every_folder_stands_on_a_floor():
    assert [_module_name(p) for p in _files() if _floor(_module_name(p)) is None] == []


def test_no_import_runs_up_a_floor():
    up = []
    for path in _files():
        mod = _module_name(path)
        mine = _floor(mod)
        assert mine is not None
        for imp in _imports(path):
            theirs = _floor(imp)
            if theirs is not None and theirs > mine:
                folder = FLOORS[theirs][0] if imp.startswith(FLOORS[theirs][0]) else imp
                if (mod, folder) not in EXCEPTIONS:
                    up.append(f"{mod} imports {imp} ({FLOORS[theirs][0]} is above {FLOORS[mine][0]})")
    assert up == []


def test_each_exception_is_still_needed():
    seen = {
        (_module_name(p), FLOORS[_floor(imp) or 0][0])
        for p in _files()
        for imp in _imports(p)
        if (_floor(imp) or 0) > (_floor(_module_name(p)) or 0)
    }
    assert set(EXCEPTIONS) <= seen


def test_no_import_cycles_in_the_front_end():
    """Module cycles anywhere in components/ and pages/ (package __init__ re-exports apart)."""
    import networkx as nx

    modules = {_module_name(p): _imports(p) for p in _files() if not _module_name(p).startswith("engine")}
    g = nx.DiGraph()
    for mod, imports in modules.items():
        for imp in imports:
            parts = imp.split(".")
            target = next(
                (".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in modules), None
            )
            if target and target != mod and not mod.startswith(target + "."):
                g.add_edge(mod, target)
    assert [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1] == []
