"""Every module of the project's code (engine/, components/, pages/, app.py, tests/) stays readable
in one sitting: no file over ~420 lines, no function over 60 (from its `def` line to its last line,
nested functions measured on their own). A long piece is split into named steps; an exception goes
in the allow-list below with the reason it stands."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 420
MAX_FUNCTION_LINES = 60

#: the front end and the tests joined the scan in issue 27 with these over the limits
FIRST_SCAN = "over the limit when components/, pages/ and tests/ joined the scan (issue 27); split next"

#: "path::qualified.name" -> why it may be longer for now. Keep it short; an entry that is no
#: longer over the limit fails the test, so the list only shrinks.
ALLOWED_LONG_FUNCTIONS: dict[str, str] = {
    "components/corpus/actions.py::create_corpus": FIRST_SCAN,
    "components/graphs/entity_graph.py::entity_subgraph": FIRST_SCAN,
    "components/eval/view.py::charts": FIRST_SCAN,
    "components/graphs/layout.py::_separate": FIRST_SCAN,
    "components/graphs/layout.py::_tidy_tree": FIRST_SCAN,
    "components/graphs/layout.py::component_layout": FIRST_SCAN,
    "components/methods/kg2rag_graph.py::weighted_graph": FIRST_SCAN,
    "components/methods/kg2rag.py::steps": FIRST_SCAN,
    "components/methods/t2rag.py::_show_round": FIRST_SCAN,
    "tests/loopback.py::_make_handler": FIRST_SCAN,
    "tests/reference/kg2rag.py::graph_filter": "restates the authors' function as they wrote it (parity reference)",
    "tests/browser/test_browser.py::_whatif_on_ask_with_a_model": FIRST_SCAN,
    "tests/browser/test_browser.py::test_demo_walk_landing_compare_in_sync_and_a_graph_click": FIRST_SCAN,
    "tests/browser/test_browser.py::test_the_demo_path_works_the_first_time": FIRST_SCAN,
    "tests/browser/test_browser.py::test_the_offline_export_opens_a_chunk_with_its_span_from_a_citation_and_a_graph_node": FIRST_SCAN,  # noqa: E501
    "tests/reliability/test_reliability_extraction_kill.py::test_sigkill_during_extraction_then_resume_never_rebills_a_stored_chunk": FIRST_SCAN,  # noqa: E501
    "tests/reliability/test_reliability_extraction_kill.py::test_sigkill_during_llm_extraction_never_rebills_a_stored_chunk": FIRST_SCAN,  # noqa: E501
    "tests/reliability/test_reliability_inputs.py::test_hostile_triplet_files_are_refused_or_skipped_without_touching_stored_rows": FIRST_SCAN,  # noqa: E501
}
#: "path" -> why the file may be longer.
ALLOWED_LONG_FILES: dict[str, str] = {
    "tests/browser/test_browser.py": FIRST_SCAN,
    "tests/engine/triplets/test_batch_extraction.py": FIRST_SCAN,
    "tests/engine/reasoners/test_offline_reasoner.py": FIRST_SCAN,
}


def function_lengths(source: str) -> dict[str, int]:
    """Qualified name ("Class.method", "outer.inner") -> lines from `def` to its last line."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


#: the project's code, as `make check` lints it
CODE = ("engine", "components", "pages", "app.py", "tests")


def _code_files() -> list[Path]:
    files = sorted(f for top in CODE for f in ([ROOT / top] if top.endswith(".py") else (ROOT / top).rglob("*.py")))
    assert len(files) > 250 and ROOT / "app.py" in files, "the scan must see the engine, the front end and the tests"
    return files


def _long_functions() -> dict[str, int]:
    long = {}
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        for name, n in function_lengths(path.read_text(encoding="utf-8")).items():
            if n > MAX_FUNCTION_LINES:
                long[f"{rel}::{name}"] = n
    return long


def test_no_function_is_over_60_lines():
    long = _long_functions()
    new = {k: n for k, n in long.items() if k not in ALLOWED_LONG_FUNCTIONS}
    assert new == {}, f"split these into named steps (or allow-list one with the reason): {new}"


def test_the_allow_list_names_only_functions_still_too_long():
    long = _long_functions()
    stale = sorted(set(ALLOWED_LONG_FUNCTIONS) - set(long))
    assert stale == [], f"no longer over {MAX_FUNCTION_LINES} lines (or gone): drop from the allow-list: {stale}"


def test_no_file_is_over_420_lines():
    long = {}
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES and rel not in ALLOWED_LONG_FILES:
            long[rel] = n
    assert long == {}, f"split these into cohesive modules: {long}"


def test_the_measure_sees_methods_nested_functions_and_their_full_length():
    # the checks above can fail: a 61-line method and a nested function are measured by name
    body = "\n".join(f"        x{i} = {i}" for i in range(59))
    source = (
        f"class A:\n    def run(self):\n{body}\n        return x0\n\n\ndef outer():\n    def inner():\n        pass\n"
    )
    got = function_lengths(source)
    assert got == {"A.run": 61, "outer": 3, "outer.inner": 2}
    assert got["A.run"] > MAX_FUNCTION_LINES
