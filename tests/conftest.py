"""Shared fixtures: the bundled embedder (loaded once per session) and a temporary workspace."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
#: The real QA samples shipped beside the repo (../shared/data); sample_corpora/ has copies of a few.
SHARED_DATA = REPO.parent / "shared" / "data"


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
    assert SHARED_DATA.is_dir(), f"the shared QA samples are expected at {SHARED_DATA}"
    return SHARED_DATA
