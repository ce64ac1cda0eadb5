"""The sample corpora build aside and appear complete or not at all, with progress the app can follow
(the first `make run` no longer waits for them: `sample ensure --background` and the app start at
once). A tiny sample cut from the bundled HotpotQA file (CC BY-SA 4.0, sample_corpora/README.md)
keeps this fast."""

from __future__ import annotations

import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from engine.session import samples
from engine.store import Workspace
from tests._app_helpers import REPO


@pytest.fixture()
def tiny_sample(tmp_path, monkeypatch):
    rows = json.loads((REPO / "sample_corpora" / "hotpotqa_30.json").read_text(encoding="utf-8"))[:1]
    folder = tmp_path / "bundled"
    folder.mkdir()
    (folder / "tiny.json").write_text(json.dumps(rows), encoding="utf-8")
    monkeypatch.setattr(samples, "SAMPLE_DIR", folder)
    monkeypatch.setattr(samples, "SAMPLES", {"tiny-sample": "tiny.json"})
    return "tiny-sample"


def test_a_sample_appears_complete_with_its_progress_recorded(tmp_path, embedder, tiny_sample):
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    seen = []

    def watch(done, total, label=""):
        # while it builds, the workspace lists no half-built corpus and the app sees a running build
        seen.append((ws.list(), samples.build_status(ws.root)))

    lines = list(samples.ensure_sample_corpora(ws, on_progress=watch))
    assert len(lines) == 1 and lines[0].startswith("built tiny-sample: 10 documents, ") and "1 questions" in lines[0]
    assert seen and all(names == [] for names, _ in seen)
    assert any(s.running and s.name == "tiny-sample" for _, s in seen)
    assert ws.list() == ["tiny-sample"] and not ws.open("tiny-sample").counts().pending
    assert not samples.build_status(ws.root).running
    assert not list(ws.root.glob(".sample-staging-*"))  # the staging folder is gone
    assert list(samples.ensure_sample_corpora(ws))[0].startswith("tiny-sample: ready")
    assert samples.start_background_build(ws).startswith("sample corpora ready")  # nothing to start


def test_a_failed_build_leaves_no_corpus_and_says_why(tmp_path, embedder, tiny_sample):
    ws = Workspace(tmp_path / "ws", embedder=embedder)

    def fail(done, total, label=""):
        if "extract" in label.lower() or done > 3:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        list(samples.ensure_sample_corpora(ws, on_progress=fail))
    assert ws.list() == [] and not list(ws.root.glob(".sample-staging-*"))
    status = samples.build_status(ws.root)
    assert not status.running and "disk full" in status.error


def test_a_build_whose_process_died_is_not_shown_as_running(tmp_path):
    (tmp_path / samples.STATUS_FILE).write_text(
        json.dumps({"pid": 2**22 + 12345, "running": True, "name": "hotpotqa-sample"})
    )
    status = samples.build_status(tmp_path)
    assert not status.running and "process is gone" in status.error


def test_the_first_page_shows_the_background_build_and_no_build_button(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir()
    (root / samples.STATUS_FILE).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "running": True,
                "name": "hotpotqa-sample",
                "position": 1,
                "count": 2,
                "done": 150,
                "total": 315,
                "label": "embedding chunks",
            }
        )
    )
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    monkeypatch.delenv("TRIPLET_LENS_DEMO", raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception and not at.error
    text = " ".join(p.proto.text for p in at.get("progress"))
    assert (
        "Building the sample corpus **hotpotqa-sample** (1 of 2) in the background: embedding chunks 150/315" in text
    ), text
    assert not [b for b in at.button if b.key == "samples_go"]  # no second build offered meanwhile
    # the build ends without a corpus (it failed): the page says so and offers the button again
    (root / samples.STATUS_FILE).write_text(
        json.dumps({"pid": os.getpid(), "running": False, "error": "RuntimeError: disk full"})
    )
    at.run()
    assert any("disk full" in w.value for w in at.warning)
    assert at.button(key="samples_go")
