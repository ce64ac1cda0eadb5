"""Shared fixtures: the bundled embedder (loaded once per session) and a temporary workspace."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: fixtures defined once and used by name anywhere: the loopback LLM server, the AppTest app
pytest_plugins = ["tests.loopback", "tests._apptest"]

REPO = Path(__file__).resolve().parent.parent
#: The real QA samples the tests read, copied into the repository with their attribution
#: (tests/fixtures/qa/README.md): a clone in any folder runs the suite.
SHARED_DATA = REPO / "tests" / "fixtures" / "qa"

_REPO_STR = str(REPO) + os.sep
_BESIDE = str(REPO.parent) + os.sep
#: the shared data folder of a developer machine: the guard below refuses reads from it
SHARED_BESIDE = REPO.parent / "shared"
_SHARED = str(SHARED_BESIDE) + os.sep
#: the system's temporary folder: a clone may itself live there (a CI checkout in /tmp), and then
#: the folders tests make with tmp_path sit beside it
_TMP = os.path.realpath(tempfile.gettempdir()) + os.sep
#: the interpreter's own installation (a virtual environment may be a link to one beside the clone,
#: as in a git worktree; a package that resolves its own path then reads through the real folder)
_INSTALLED = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


class OutsideRepoRead(RuntimeError):
    """A test opened a file beside the repository (e.g. ../shared), which a user's clone lacks."""


def _refuse_reads_beside_the_repo(event: str, args: tuple) -> None:
    # The folder holding the clone is someone else's: tests read only the repository itself, the
    # temporary folders they make, and the installed packages. Siblings of the clone are refused at
    # open, so a test that depends on them fails here and not only on a user's machine.
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    path = args[0]
    if isinstance(path, int) or path is None:
        return
    try:
        path = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return
    p = path + os.sep
    in_temp = p.startswith(_TMP)  # tempfile opens the temp folder itself too
    if p.startswith(_INSTALLED):
        return
    if p.startswith(_SHARED) or (p.startswith(_BESIDE) and not p.startswith(_REPO_STR) and not in_temp):
        raise OutsideRepoRead(f"tests must not read outside the repository: {path}")


# conftest is imported twice (as `conftest` by pytest, as `tests.conftest` by tests that use its
# constants); audit hooks cannot be removed, so install one only
if not getattr(sys, "_triplet_lens_read_guard", False):
    sys.addaudithook(_refuse_reads_beside_the_repo)
    sys._triplet_lens_read_guard = True  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def embedder():
    from engine.embed import get_bundled_embedder

    return get_bundled_embedder()


@pytest.fixture()
def workspace(tmp_path, embedder):
    from engine.store import Workspace

    return Workspace(tmp_path / "ws", embedder=embedder)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    assert SHARED_DATA.is_dir(), f"the QA samples are expected at {SHARED_DATA}"
    return SHARED_DATA
