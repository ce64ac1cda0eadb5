"""The suite runs from a clone in any folder: it never reads beside the repository."""

from __future__ import annotations

import re
import tempfile

import pytest

from tests.conftest import REPO, SHARED_BESIDE, SHARED_DATA


def test_reading_beside_the_repository_is_refused():
    beside = SHARED_BESIDE / "data" / "README.md"
    with pytest.raises(RuntimeError, match="outside the repository"):
        open(beside, encoding="utf-8")
    if not str(REPO).startswith(tempfile.gettempdir()):  # a clone inside /tmp lives among temp folders
        with pytest.raises(RuntimeError, match="outside the repository"):
            list((REPO.parent).iterdir())


def test_the_qa_samples_ship_in_the_repository_with_their_attribution():
    assert SHARED_DATA.is_relative_to(REPO)
    readme = (SHARED_DATA / "README.md").read_text(encoding="utf-8")
    for folder in ("hotpotqa_hipporag_train100", "musique_kag_100", "hoprag_quickstart"):
        assert (SHARED_DATA / folder).is_dir() and folder in readme
    assert "CC BY-SA 4.0" in readme and "CC BY 4.0" in readme


def test_no_test_names_the_shared_folder():
    """Every test file and fixture, in every folder (the tests are grouped like the code)."""
    pattern = re.compile(r"\.\./shared|parent\s*/\s*['\"]shared['\"]")
    offenders = [
        str(p.relative_to(REPO))
        for p in (REPO / "tests").rglob("*")
        if p.suffix in (".py", ".json", ".md", ".txt")
        and p.name != "conftest.py"
        and pattern.search(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert offenders == []
