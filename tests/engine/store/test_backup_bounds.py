"""A backup holds only the files a backup writes, each within a size limit (issue 38, break 3).
Before, a manifest could list any extra file name (a 2 GiB file with its correct digest was
restored into the workspace), and a file's size was found out by hashing all of it (8 GiB, 26 s)
before a wrong digest was refused. Now the entry is refused by name, or by size before a byte of
it is read: the limit comes from the manifest's counts (engine/integrity/bounds.py), or from
TRIPLET_LENS_BACKUP_MAX_MB. The caps are made small here instead of writing gigabytes."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.core.types import Document
from engine.integrity import untrusted
from engine.integrity.backup import backup, list_snapshots, read_snapshot, restore, undo_drop
from engine.integrity.bounds import BACKUP_FILES
from engine.store import CorpusError, Workspace
from tests._fake_embedder import HashEmbedder


def _snap(tmp_path, embedder):
    ws = Workspace(tmp_path / "ws", embedder=embedder)
    c = ws.create("demo")
    c.add_documents([Document("d1", "Place", "Place is a town where a person was born.", "p.txt")])
    backup(c, tmp_path / "given-backup")
    c.close()
    return ws, tmp_path / "given-backup"


@pytest.fixture()
def snap(tmp_path):
    return _snap(tmp_path, HashEmbedder())


class _Hashed:
    """Counts the bytes the snapshot reader hashes (it hashes every byte it reads)."""

    def __init__(self):
        self.bytes = 0

    def sha256(self):
        real, spy = hashlib.sha256(), self

        class Counting:
            def update(self, data):
                spy.bytes += len(data)
                real.update(data)

            def hexdigest(self):
                return real.hexdigest()

        return Counting()


@pytest.fixture()
def hashed(monkeypatch) -> _Hashed:
    spy = _Hashed()
    monkeypatch.setattr(untrusted, "hashlib", spy)
    return spy


def _list(folder, name: str, data: bytes, digest: str | None = None) -> None:
    (folder / name).write_bytes(data)
    m = json.loads((folder / "manifest.json").read_text())
    m["files"][name] = digest or hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(m))


def test_a_file_a_backup_never_writes_is_refused_by_name(snap, hashed):
    ws, folder = snap
    _list(folder, "payload.bin", b"x" * 100_000)  # its correct digest, as in the attack
    with pytest.raises(CorpusError, match="'payload.bin' is not a file a backup writes"):
        restore(ws, read_snapshot(folder), "restored")
    assert hashed.bytes < 100_000 and "restored" not in ws.list()
    assert not any("payload" in p.name for p in ws.root.rglob("*"))


@pytest.mark.parametrize("digest", ["right", "wrong"])
def test_a_file_larger_than_the_counts_allow_is_refused_before_it_is_read(snap, hashed, digest):
    ws, folder = snap
    info = read_snapshot(folder)
    limit = BACKUP_FILES["chunks.index"].limit(info.counts)  # 1 chunk: 4 MiB and one vector's allowance
    big = b"\0" * (limit + 1)
    _list(folder, "chunks.index", big, None if digest == "right" else "0" * 64)
    why = r"chunks.index holds [\d,]+ bytes, more than a corpus of 1 documents, 1 chunks"
    with pytest.raises(CorpusError, match=why):
        restore(ws, read_snapshot(folder), "restored")
    assert hashed.bytes < len(big)  # refused from its size alone: not hashed
    assert "restored" not in ws.list() and not any(p.name.startswith(".restored") for p in ws.root.iterdir())


def test_the_configured_cap_holds_on_the_command_line(tmp_path, monkeypatch, capsys, hashed, embedder):
    from engine.cli import main

    ws, folder = _snap(tmp_path, embedder)  # the command line's own embedder
    db_size = (folder / "corpus.sqlite").stat().st_size
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(ws.root))
    monkeypatch.setenv("TRIPLET_LENS_BACKUP_MAX_MB", str((db_size - 1) / 1024 / 1024))
    code = main(["corpus", "restore", "demo", "--snapshot", str(folder), "--as", "restored"])
    err = capsys.readouterr().err
    assert code == 2 and "corpus.sqlite holds" in err and "TRIPLET_LENS_BACKUP_MAX_MB" in err, err
    assert hashed.bytes == 0 and "restored" not in ws.list()
    monkeypatch.setenv("TRIPLET_LENS_BACKUP_MAX_MB", "64")  # a cap it fits: restored
    assert main(["corpus", "restore", "demo", "--snapshot", str(folder), "--as", "restored"]) == 0


def test_a_backup_copies_only_the_listed_files_and_restores_whole(snap, tmp_path):
    ws, folder = snap
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["files"]) <= set(BACKUP_FILES) and "corpus.sqlite" in manifest["files"]
    assert restore(ws, read_snapshot(folder), "copy").counts().chunks == 1


def test_a_drop_of_an_earlier_build_listing_derived_records_still_comes_back(tmp_path):
    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    c = ws.create("demo")
    c.add_documents([Document("d1", "Place", "Place is a town where a person was born.", "p.txt")])
    c.close()
    ws.drop("demo")
    (dropped,) = list_snapshots(ws, "demo")
    _list(dropped.path, "chunks.index.verified", b'{"size": 1}')  # earlier drops hashed every file
    _list(dropped.path, "extraction_batches.sqlite", b"state")
    assert undo_drop(ws, "demo").counts().chunks == 1
    assert (ws.path_of("demo") / "extraction_batches.sqlite").read_bytes() == b"state"  # moved along
