"""Regroup the flat layout into folders by layer (issue 27, item 5). Run once from the repository
root after every branch is merged, then delete this script:

    .venv/bin/python scripts/regroup_layout.py            # moves, rewrites, ruff --fix, ruff format
    .venv/bin/python scripts/regroup_layout.py --dry-run  # only says what it would move

It is idempotent: a module already at its new place is left alone, a module the mapping names but
that no longer exists is skipped with a note, and a module at an old place that the mapping does
not name is LISTED (never guessed) so it can be added to MAPPING and the script run again.

What it does, in order:
1. `git mv` every file of MAPPING to its new place (a package gets an `__init__.py`); a module whose
   new name equals its old one (`engine.session`, `engine.runs`) becomes its package's `__init__.py`
   so every existing `engine.session.X` keeps meaning the same thing.
2. rewrites every reference in the project's text files: `from pkg import mod` statements (split
   per new package, the old name kept with `as` where the module was renamed), dotted names
   anywhere (imports, `patch("engine.x.y")`, importlib strings, `python -m engine.x`, registry
   paths) and file paths (`engine/x.py`, `tests/test_x.py`) in code and docs.
3. fixes `Path(__file__)` parent counts in every file it moved (a test one folder deeper needs one
   more `.parent` to reach `fixtures/` or the repository).
4. runs `ruff check --fix` and `ruff format` over the project's code.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: old dotted module -> new dotted module. A new name equal to the old one moves the module into
#: its package's __init__.py (the package takes the module's name, nothing importing it changes).
ENGINE: dict[str, str] = {
    # core: the leaves every layer may import
    "engine.types": "engine.core.types",
    "engine.serde": "engine.core.serde",
    "engine.config": "engine.core.config",
    "engine.limits": "engine.core.limits",
    "engine.faults": "engine.core.faults",
    "engine.progress": "engine.core.progress",
    "engine.textnorm": "engine.core.textnorm",
    # triplets: extraction and the triplet files and rules
    "engine.extraction": "engine.triplets.extraction",
    "engine.triplet_io": "engine.triplets.files",
    "engine.triplet_resolve": "engine.triplets.resolve",
    "engine.triplet_rules": "engine.triplets.rules",
    # corpus: documents into chunks, pages of pending work, the sample corpora, the graph tab's view
    "engine.chunking": "engine.corpus.chunking",
    "engine.pagescan": "engine.corpus.pagescan",
    "engine.pending": "engine.corpus.pending",
    "engine.samples": "engine.corpus.samples",
    "engine.graph_view": "engine.corpus.graph_view",
    # runs: a saved run (the package itself), its timeline, its what-if re-run
    "engine.runs": "engine.runs",
    "engine.timeline": "engine.runs.timeline",
    "engine.whatif": "engine.runs.whatif",
    # session: a user's model, key, settings (the package itself) and the operator's budget caps
    "engine.session": "engine.session",
    "engine.budget": "engine.session.budget",
    # beside their layer's other modules
    "engine.backup": "engine.integrity.backup",
    "engine.rerank": "engine.embed.rerank",
}

COMPONENTS: dict[str, str] = {
    # shell: the app around the pages (sidebar, theme, state, first page, background work, safety)
    "components.sidebar": "components.shell.sidebar",
    "components.theme": "components.shell.theme",
    "components.state": "components.shell.state",
    "components.landing": "components.shell.landing",
    "components.warmup": "components.shell.warmup",
    "components.safe": "components.shell.safe",
    "components.progress": "components.shell.progress",
    "components.runner": "components.shell.runner",
    "components.run_controls": "components.shell.run_controls",
    "components.settings_form": "components.shell.settings_form",
    "components.method_page": "components.shell.method_page",
    # widgets: small pieces every page draws with
    "components.question_input": "components.widgets.question_input",
    "components.tables": "components.widgets.tables",
    "components.stepper": "components.widgets.stepper",
    "components.llm_calls": "components.widgets.llm_calls",
    "components.chunk_names": "components.widgets.chunk_names",
    "components.preset_badge": "components.widgets.preset_badge",
    "components.answer_box": "components.widgets.answer_box",
    "components.evidence_chain": "components.widgets.evidence_chain",
    "components.result_view": "components.widgets.result_view",
    # graphs: drawing a graph (the interactive page, its layout, the static SVG, the colours)
    "components.graph": "components.graphs.graph",
    "components.graph_page": "components.graphs.page",
    "components.graph_layout": "components.graphs.layout",
    "components.entity_graph": "components.graphs.entity_graph",
    "components.graph_static": "components.graphs.static",
    "components.palette": "components.graphs.palette",
    # compare: the Compare page's columns, verdict, timelines and what-if
    "components.compare_view": "components.compare.view",
    "components.compare_sync": "components.compare.sync",
    "components.compare_verdict": "components.compare.verdict",
    "components.compare_whatif": "components.compare.whatif",
    "components.timeline_view": "components.compare.timeline_view",
    "components.timeline_svg": "components.compare.timeline_svg",
    "components.whatif_view": "components.compare.whatif_view",
    # corpus: the Corpora page's actions
    "components.corpus_actions": "components.corpus.actions",
    "components.backup_actions": "components.corpus.backup_actions",
    # report: export and presentation
    "components.export": "components.report.export",
    "components.present_view": "components.report.present_view",
    # eval: the Evaluate page
    "components.eval_view": "components.eval.view",
    # method views before components/methods/ takes them (skipped when already moved there)
    "components.t2rag_view": "components.methods.t2rag_view",
    "components.kg2rag_view": "components.methods.kg2rag_view",
}
#: stay where they are: Streamlit's pages, the per-method views, the step labels
COMPONENTS_STAY = {"components.steps"}

_TEST_GROUPS: dict[str, list[str]] = {
    "app": [
        "app_answer_box",
        "app_answer_honesty",
        "app_components",
        "app_defaults",
        "app_first_contact",
        "app_pages",
        "app_presets",
        "app_safety",
        "app_showcase",
        "app_timeline_whatif",
        "app_views",
        "app_warmup",
        "landing_showcase",
        "extraction_pages",
        "markdown_inline_html",
        "graph_layout_overlap",
        "graph_readability",
        "timeline_drawings",
        "failures_visible",
        "samples_background",
    ],
    "browser": ["browser", "browser_presets", "browser_question", "browser_security"],
    "project": ["code_shape", "import_graph", "packaging", "self_contained"],
    "engine/llm": [
        "llm_client",
        "llm_cached",
        "contracts",
        "deadlines",
        "deadline_slow_bodies",
        "usage_tokens",
        "light_encoder",
        "sentence_vectors",
    ],
    "engine/reasoners": ["llm_reasoner", "offline_reasoner", "offline_hops"],
    "engine/triplets": ["extraction", "batch_extraction", "triplet_io", "triplet_rules"],
    "engine/store": [
        "store",
        "store_backends",
        "vector_backends",
        "vectors_from_index",
        "checks",
        "chunking",
        "counts_cache",
        "corpus_create_atomic",
        "entity_neighbourhood",
        "graph_view",
        "index_choice",
        "index_filecheck",
        "index_incremental",
        "ingest",
        "ingest_gold",
        "text_search",
        "add_overlap",
        "read_only_and_locks",
        "backup_untrusted",
        "recovery",
    ],
    "engine/methods": [
        "t2rag",
        "t2rag_corpus",
        "t2rag_placeholders",
        "t2rag_sources",
        "t2rag_state",
        "kg2rag",
        "kg2rag_defaults",
        "kg2rag_graph",
        "kg2rag_real",
        "baselines",
        "ircot",
        "registry",
        "presets",
        "parity_kg2rag",
        # other branches of issue 27 (skipped with a note where absent)
        "hipporag2",
        "parity_hipporag2",
        "method_contract",
        "plugins",
        "parity_t2rag",
        "honest_evidence",
        "recall_guards",
    ],
    "engine/eval": [
        "eval_cli",
        "eval_evidence",
        "eval_failures",
        "eval_harness",
        "eval_lock",
        "eval_metrics",
        "eval_musique_idx",
        "eval_official",
        "eval_probes",
        "eval_run_all",
        "eval_streaming",
        "official_metrics",
        "recall_loss",
    ],
    "engine/session": ["cli", "presets_cli", "budget_concurrency", "timeline_whatif", "verdict"],
    "reliability": [
        "reliability_concurrency",
        "reliability_extraction_kill",
        "reliability_faults",
        "reliability_injection",
        "reliability_inputs",
        "reliability_paths",
        "reliability_secrets",
        "crash_safety",
        "backup_kills",
        "content_limits",
        "input_limits",
    ],
    "security": ["security_endpoints", "security_markup", "security_session", "security_traces"],
}
TESTS: dict[str, str] = {
    f"tests.test_{name}": f"tests.{group.replace('/', '.')}.test_{name}"
    for group, names in _TEST_GROUPS.items()
    for name in names
}
#: helpers, doubles and data stay at tests/ (imported as tests.doubles, tests.loopback, ...)
TESTS_STAY = {
    "tests.conftest",
    "tests._apptest",
    "tests.doubles",
    "tests.loopback",
    "tests.loopback_batch",
    "tests._app_helpers",
    "tests._eval_helpers",
    "tests._fake_embedder",
    "tests._kg2rag_helpers",
    "tests._t2rag_helpers",
}

MAPPING: dict[str, str] = {**ENGINE, **COMPONENTS, **TESTS}

#: other text that names the old layout (globs, folder names), replaced as written
LITERAL: dict[str, str] = {
    "tests/test_browser*.py": "tests/browser/",
    "tests/test_app_*.py": "tests/app/",
    "tests/test_reliability_*.py": "tests/reliability/",
    "tests/test_security_*.py": "tests/security/",
}

#: docstrings of the packages the script creates
PACKAGE_DOCS = {
    "tests": "The test suite; its folders follow the code's.",
    "engine/core": "The leaves: typed values, JSON helpers, settings from the environment, limits, faults, progress.",
    "engine/triplets": "Triplets: extraction over a corpus, triplet files in and out, resolution, the filter rules.",
    "engine/corpus": "A corpus's documents: chunking, page scans, pending work, the sample corpora, the graph view.",
    "components/shell": "The app around the pages: sidebar, theme, state, first page, warm-up, runner, settings.",
    "components/widgets": "Small pieces the pages draw with: inputs, tables, stepper, answer box, evidence, calls.",
    "components/graphs": "Drawing graphs: the interactive vis-network page, its layout, the static SVG, colours.",
    "components/compare": "The Compare page: columns, verdict, timelines, what-if re-runs.",
    "components/corpus": "The Corpora page's actions: add, extract, drop, back up, restore.",
    "components/report": "The HTML export and the presentation mode.",
    "components/eval": "The Evaluate page's view.",
    "tests/app": "AppTest tests of the pages and components.",
    "tests/browser": "Headless Chromium tests.",
    "tests/project": "Tests of the project's shape: import layers, file sizes, packaging.",
    "tests/engine": "Tests of the engine, grouped by layer.",
    "tests/reliability": "Crashes, kills, faults, bad inputs.",
    "tests/security": "Keys, endpoints, markup, traces.",
}

TEXT_SUFFIXES = {".py", ".md", ".toml", ".ini", ".cfg", ".txt", ".sh", ".yml", ".yaml", ".json", ".html"}
TEXT_NAMES = {"Makefile", "run"}
#: what `make check` lints and formats
CODE_DIRS = ["engine", "components", "pages", "app.py", "tests"]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def module_path(dotted: str, new_package: bool = False) -> Path:
    parts = dotted.split(".")
    if new_package:
        return ROOT.joinpath(*parts, "__init__.py")
    return ROOT.joinpath(*parts).with_suffix(".py")


def targets(old: str, new: str) -> tuple[Path, Path]:
    return module_path(old), module_path(new, new_package=(old == new))


def check_mapping() -> None:
    """Refuse a mapping that would make a rewrite ambiguous or shadow a standard module."""
    renamed = {o: n for o, n in MAPPING.items() if o != n}
    for old in renamed:
        for new in renamed.values():
            assert not new.startswith(old + "."), f"{new} starts with the old name {old}: the rewrite would repeat"
    for new in MAPPING.values():
        for part in new.split(".")[1:-1]:
            assert part not in sys.stdlib_module_names, f"package {part} ({new}) shadows a standard module"


def ensure_package(folder: Path, dry: bool) -> None:
    """Make every folder from the top package down to `folder` a package (an __init__ with a line)."""
    rel = folder.relative_to(ROOT)
    # tests/ itself becomes a package too, so pytest names a test by its folder (tests.app.test_x)
    # and not as a top-level `app.test_x` or `engine.test_x` that would shadow the real ones
    for i in range(1 if rel.parts[0] == "tests" else 2, len(rel.parts) + 1):
        sub = ROOT.joinpath(*rel.parts[:i])
        init = sub / "__init__.py"
        if init.exists() or dry:
            continue
        sub.mkdir(parents=True, exist_ok=True)
        doc = PACKAGE_DOCS.get(sub.relative_to(ROOT).as_posix(), "")
        init.write_text(f'"""{doc}"""\n' if doc else "", encoding="utf-8")
        git("add", str(init))


def move_files(dry: bool) -> dict[Path, int]:
    """git mv each mapped file; returns each moved file's new path -> how many folders deeper."""
    moved: dict[Path, int] = {}
    for old, new in MAPPING.items():
        src, dst = targets(old, new)
        if dst.exists() and not src.exists():
            continue  # already moved
        if not src.exists():
            print(f"skipped (no longer exists): {old}")
            continue
        if dst.exists():
            print(f"CONFLICT, not moved: both {src.relative_to(ROOT)} and {dst.relative_to(ROOT)} exist")
            continue
        print(f"move {src.relative_to(ROOT)} -> {dst.relative_to(ROOT)}")
        if dry:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        # a module becoming its own package's __init__ must not find one there already
        ensure_package(dst.parent.parent if old == new else dst.parent, dry)
        git("mv", str(src), str(dst))
        moved[dst] = len(dst.relative_to(ROOT).parts) - len(src.relative_to(ROOT).parts)
    return moved


def unmapped() -> list[str]:
    """Modules still at an old flat place that the mapping does not name (a branch added them)."""
    known = set(MAPPING) | COMPONENTS_STAY | TESTS_STAY
    out = []
    for folder, pattern in (("engine", "*.py"), ("components", "*.py"), ("tests", "*.py")):
        for path in sorted((ROOT / folder).glob(pattern)):
            dotted = f"{folder}.{path.stem}"
            if path.stem in ("__init__", "__main__") or dotted in known:
                continue
            out.append(path.relative_to(ROOT).as_posix())
    return out


def text_files() -> list[Path]:
    here = Path(__file__).resolve()
    out = []
    for rel in git("ls-files", "--cached", "--others", "--exclude-standard").splitlines():
        path = ROOT / rel
        if path.resolve() == here or not path.is_file() or ".venv" in path.parts:
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES or rel.startswith(".ci/"):
            out.append(path)
    return out


def _from_import_lines(name: str, alias: str | None, module: str) -> tuple[str, str, str | None]:
    """(package, name, alias) of `from module import name as alias` after the move."""
    new = MAPPING.get(f"{module}.{name}", f"{module}.{name}")
    pkg, _, base = new.rpartition(".")
    shown = alias or name
    return pkg, base, (shown if shown != base else None)


def rewrite_from_imports(source: str) -> str:
    """`from engine import budget, types` -> `from engine.session import budget` and
    `from engine.core import types`; a renamed module keeps its old name with `as`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        moved = [
            a
            for a in node.names
            if MAPPING.get(f"{node.module}.{a.name}", None) not in (None, f"{node.module}.{a.name}")
        ]
        if not moved:
            continue
        keep = [a for a in node.names if a not in moved]
        first, last = node.lineno - 1, node.end_lineno - 1
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        tail = lines[last].rstrip("\n")
        comment = tail[tail.index("#") :] if "#" in tail[node.end_col_offset :] else ""
        comment = ("  " + comment) if comment else ""
        stmts = []
        if keep:
            stmts.append(
                f"from {node.module} import "
                + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep)
            )
        for a in moved:
            pkg, base, alias = _from_import_lines(a.name, a.asname, node.module)
            stmts.append(f"from {pkg} import {base}" + (f" as {alias}" if alias else ""))
        text = "".join(f"{indent}{s}{comment if i == 0 else ''}\n" for i, s in enumerate(stmts))
        edits.append((first, last, text))
    for first, last, text in sorted(edits, reverse=True):
        lines[first : last + 1] = [text]
    return "".join(lines)


def _dotted_patterns() -> list[tuple[re.Pattern[str], str]]:
    pats = []
    for old, new in sorted(MAPPING.items(), key=lambda kv: -len(kv[0])):
        if old == new:
            continue
        pats.append((re.compile(r"(?<![\w.])" + re.escape(old) + r"(?!\w)"), new))
        old_path, new_path = old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"
        pats.append((re.compile(r"(?<![\w./])" + re.escape(old_path) + r"(?!\w)"), new_path))
    for old, new in MAPPING.items():
        if old == new:  # engine/session.py -> engine/session/__init__.py
            old_path = old.replace(".", "/") + ".py"
            pats.append(
                (re.compile(r"(?<![\w./])" + re.escape(old_path) + r"(?!\w)"), old.replace(".", "/") + "/__init__.py")
            )
    return pats


def rewrite_references(files: list[Path]) -> int:
    pats = _dotted_patterns()
    changed = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        new = rewrite_from_imports(text) if path.suffix == ".py" else text
        for pat, repl in pats:
            new = pat.sub(repl, new)
        for old, repl in LITERAL.items():
            new = new.replace(old, repl)
        if new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
            changed += 1
    return changed


_FILE_PARENTS = re.compile(r"Path\(__file__\)(\.resolve\(\))?((?:\.parent\b(?!s))+|\.parents\[(\d+)\])")


def fix_file_parents(moved: dict[Path, int]) -> None:
    """A file k folders deeper needs k more parents to reach the same folder."""
    for path, k in moved.items():
        if k <= 0 or path.suffix != ".py":
            continue

        def deeper(m: re.Match[str], k: int = k) -> str:
            levels = int(m.group(3)) + 1 if m.group(3) is not None else m.group(2).count(".parent")
            return f"Path(__file__){m.group(1) or ''}.parents[{levels + k - 1}]"

        text = path.read_text(encoding="utf-8")
        new = _FILE_PARENTS.sub(deeper, text)
        if new != text:
            path.write_text(new, encoding="utf-8")


def ruff() -> None:
    py = sys.executable
    targets = [d for d in CODE_DIRS if (ROOT / d).exists()]
    # import order only (a moved import sorts elsewhere); `ruff check` afterwards reports the rest
    subprocess.run([py, "-m", "ruff", "check", "--fix-only", "--quiet", *targets], cwd=ROOT)
    subprocess.run([py, "-m", "ruff", "format", "--quiet", *targets], cwd=ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="say what would move; change nothing")
    args = ap.parse_args()
    check_mapping()
    moved = move_files(args.dry_run)
    left = unmapped()
    if not args.dry_run:
        fix_file_parents(moved)
        print(f"rewrote references in {rewrite_references(text_files())} files")
        ruff()
    if left:
        print("NOT IN THE MAPPING (add each to MAPPING, or to a *_STAY set, and run again):")
        for rel in left:
            print(f"  {rel}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
