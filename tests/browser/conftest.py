"""What the real-browser tests share: the Chromium binary, and a Streamlit server on the small
HotpotQA sample corpus (one per test module, on its own workspace and port)."""

from __future__ import annotations

import pytest

from tests._app_helpers import require_chromium, sample_server


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    yield from sample_server(tmp_path_factory, embedder)
