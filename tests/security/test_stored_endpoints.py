"""Settings read from disk never send the user's key anywhere (issue 38, break 1).

A backup whose stored corpus settings name a litellm embedder at a stranger's base
(`embedder_api_base`), or a Milvus server (`vectors`), with the manifest's digests recomputed so the
backup verifies: restoring it sends nothing, and a question on it is refused, naming the field,
before any request leaves the machine, on the command line and in the app. Before the fix `corpus
restore` itself sent `Authorization: Bearer $OPENAI_API_KEY` to the stored base (the embedder's
dimension probe), and every later `ask` sent more. Control runs in which the user lists the endpoint
(TRIPLET_LENS_API_BASES) do reach it, so these tests can fail.
"""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.cli import main
from tests._app_helpers import REPO, build_small_corpus
from tests._apptest import switch_to
from tests.loopback import LoopbackServer

CANARY = "sk-canary-STORED-0123456789"
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


@pytest.fixture()
def listener():
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def source_backup(tmp_path_factory, embedder) -> Path:
    """A real corpus's backup, made once; each test crafts a copy of it."""
    root = tmp_path_factory.mktemp("stored_src")
    build_small_corpus(root, "src", questions=1, embedder=embedder)
    out = tmp_path_factory.mktemp("stored_bk") / "src-backup"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIPLET_LENS_WORKSPACE", str(root))
        assert main(["corpus", "backup", "src", "--to", str(out)]) == 0
    return out


def _craft(source: Path, dest: Path, **settings: str) -> Path:
    """A copy of the backup whose stored corpus settings carry `settings`, its digests recomputed:
    what an attacker hands over, and what `verify` accepts."""
    import shutil

    shutil.copytree(source, dest)
    db = sqlite3.connect(dest / "corpus.sqlite")
    stored = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
    stored.update(settings)
    db.execute("UPDATE meta SET value=? WHERE key='settings'", (json.dumps(stored),))
    db.commit()
    db.close()
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"] = {
        name: hashlib.sha256((dest / name).read_bytes()).hexdigest()
        for name in manifest["files"]
        if (dest / name).exists()
    }
    (dest / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return dest


def _leaked(srv) -> bool:
    return any(CANARY in h.get("authorization", "") for h in srv.headers)


@pytest.fixture()
def user_env(monkeypatch, tmp_path):
    ws = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv("TRIPLET_LENS_API_BASES", raising=False)
    monkeypatch.delenv("TRIPLET_LENS_API_BASE", raising=False)
    return ws


def _restore(bk: Path, name: str = "shared") -> int:
    return main(["corpus", "restore", "x", "--snapshot", str(bk), "--as", name])


def test_a_crafted_backup_sends_nothing_on_restore_and_is_refused_on_ask(
    source_backup, listener, user_env, tmp_path, capsys
):
    bk = _craft(
        source_backup,
        tmp_path / "evil",
        embedder="litellm:openai/text-embedding-3-small",
        embedder_api_base=listener.base_url,
    )
    assert _restore(bk) == 0
    assert listener.requests == [] and not _leaked(listener)  # restore: no request at all
    capsys.readouterr()
    for method in ("t2rag", "kg2rag", "semantic"):
        assert main(["ask", "shared", QUESTION, "--method", method, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "embedder_api_base" in err and "TRIPLET_LENS_API_BASES" in err, err
    assert listener.requests == [] and not _leaked(listener)
    # a --model flag names the model's endpoint, not the embedder's: still refused
    assert main(["ask", "shared", QUESTION, "--model", "openai/gpt-4o-mini", "--quiet"]) == 2
    assert listener.requests == [] and not _leaked(listener)


def test_control_an_endpoint_the_user_lists_is_reached(source_backup, listener, user_env, tmp_path, monkeypatch):
    bk = _craft(
        source_backup,
        tmp_path / "listed",
        embedder="litellm:openai/text-embedding-3-small",
        embedder_api_base=listener.base_url,
    )
    assert _restore(bk) == 0
    monkeypatch.setenv("TRIPLET_LENS_API_BASES", listener.base_url)
    main(["ask", "shared", QUESTION, "--quiet"])  # its answer does not matter: the request went out
    assert _leaked(listener)


def test_a_stored_milvus_server_is_never_connected_to(source_backup, user_env, tmp_path, capsys):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    try:
        port = server.getsockname()[1]
        bk = _craft(source_backup, tmp_path / "milvus", vectors=f"milvus://127.0.0.1:{port}")
        assert _restore(bk) == 0
        capsys.readouterr()
        assert main(["ask", "shared", QUESTION, "--method", "semantic", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "vectors" in err and "TRIPLET_LENS_API_BASES" in err, err
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody knocked
    finally:
        server.close()


def test_the_app_refuses_a_stored_endpoint_naming_the_field(source_backup, listener, user_env, tmp_path, monkeypatch):
    bk = _craft(
        source_backup,
        tmp_path / "app",
        embedder="litellm:openai/text-embedding-3-small",
        embedder_api_base=listener.base_url,
    )
    assert _restore(bk, "hotpotqa-sample") == 0  # the corpus the app opens first
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()
    switch_to(at, "ask").run()
    at.button(key="ask_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error)
    assert "embedder_api_base" in shown, shown
    assert listener.requests == [] and not _leaked(listener)
