"""Backups are untrusted input (issue 26): a manifest naming `../`, an absolute path or a symlink
is refused with the entry named, and nothing is written outside the workspace. Before, an entry
`"../../PWNED"` with its correct SHA-256 was copied to that path, and symlinks were followed."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from engine.core.types import Document
from engine.integrity.backup import backup, read_snapshot, restore
from engine.store import CorpusError, Workspace
from tests._fake_embedder import HashEmbedder


@pytest.fixture()
def snap(tmp_path):
    ws = Workspace(tmp_path / "inside" / "ws", embedder=HashEmbedder())
    c = ws.create("demo")
    c.add_documents([Document("d1", "Place", "Place is a town where a person was born.", "p.txt")])
    backup(c, tmp_path / "a" / "b" / "given-backup")
    c.close()
    return ws, tmp_path / "a" / "b" / "given-backup"


def _add_entry(folder, name: str, data: bytes) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m["files"][name] = hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(m))


def _files_outside(tmp_path, ws) -> set[str]:
    return {str(p) for p in tmp_path.rglob("*") if ws.root not in p.parents and p != ws.root}


@pytest.mark.parametrize(
    "entry",
    ["../../PWNED", "../../../../../../tmp/PWNED-tl-test", "/tmp/PWNED-tl-abs", "sub/../../PWNED", "..", ".hidden"],
)
def test_a_manifest_naming_a_path_is_refused_with_the_name(snap, tmp_path, entry):
    ws, folder = snap
    payload = b"owned"
    source = (folder / entry).resolve()
    # the file the entry names exists, with the digest the manifest gives (as in the attack)
    if tmp_path in source.parents and not source.exists():
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(payload)
    _add_entry(folder, entry, payload)
    before = _files_outside(tmp_path, ws)
    with pytest.raises(CorpusError, match="not a plain file name") as err:
        restore(ws, read_snapshot(folder), "restored")
    assert repr(entry) in str(err.value)
    assert _files_outside(tmp_path, ws) == before
    assert not (tmp_path / "inside" / "PWNED").exists() and not os.path.exists("/tmp/PWNED-tl-abs")
    assert "restored" not in ws.list()


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_symlink_or_device_in_a_snapshot_is_refused_and_never_followed(snap, tmp_path, kind):
    ws, folder = snap
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"private bytes outside the workspace")
    target = folder / "chunks.index"
    target.unlink(missing_ok=True)
    if kind == "symlink":
        target.symlink_to(secret)
        _add_entry(folder, "chunks.index", secret.read_bytes())  # the digest a follower would find
    else:
        os.mkfifo(target)
        _add_entry(folder, "chunks.index", b"")
    with pytest.raises(CorpusError, match="'chunks.index' is (a symlink|not a regular file)"):
        restore(ws, read_snapshot(folder), "restored")
    assert "restored" not in ws.list()
    assert not any(p.name.startswith(".restored") for p in ws.root.iterdir())


def test_a_symlinked_database_planted_in_a_dropped_corpus_blocks_undo_drop(tmp_path):
    from engine.integrity.backup import find_snapshot, undo_drop

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    c = ws.create("demo")
    c.close()
    ws.drop("demo")
    snap = find_snapshot(ws, "demo")
    (snap.path / "extra").symlink_to(tmp_path)
    with pytest.raises(CorpusError, match="'extra' is a symlink"):
        undo_drop(ws, "demo")
    assert find_snapshot(ws, "demo").path == snap.path  # the snapshot is still there to inspect
