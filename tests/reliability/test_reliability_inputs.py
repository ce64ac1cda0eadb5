"""Hostile inputs through the corpus and the CLI (`corpus add`, `triplets import`): each rejected
file gets a clear message naming it, the stored rows are byte-for-byte unchanged afterwards, memory
stays bounded (a 200 MB file is refused before it is read) and nothing runs unbounded (a million
triplet rows are refused in well under a second). Reader-level cases live in test_ingest.py; this
file checks what a user of a real corpus sees."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest

from engine.cli import main
from engine.ingest import load_bytes, load_paths
from engine.store import Workspace
from engine.triplets.files import MAX_ROWS
from tests._fake_embedder import HashEmbedder

FIX = Path(__file__).parents[1] / "fixtures" / "ingest"
MB = 1024 * 1024
_TABLES = ("documents", "chunks", "triplets", "triplet_sources", "extraction", "questions")


def stored_checksum(corpus_dir: Path) -> tuple[dict[str, int], str]:
    """Row counts and one sha256 over every stored row (vectors included) of the data tables."""
    db = sqlite3.connect(f"file:{corpus_dir / 'corpus.sqlite'}?mode=ro", uri=True)
    try:
        digest, counts = hashlib.sha256(), {}
        for table in _TABLES:
            rows = db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            counts[table] = len(rows)
            for row in rows:
                digest.update(repr(row).encode())
        return counts, digest.hexdigest()
    finally:
        db.close()


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def base(tmp_path, monkeypatch, capsys, embedder):
    """A CLI workspace holding corpus `base`: two documents and a few imported triplets."""
    root = tmp_path / "ws"
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    code, _, err = cli(capsys, "corpus", "create", "base", "--from", str(FIX / "turing.txt"), str(FIX / "notes.md"))
    assert code == 0, err
    corpus = Workspace(root, embedder=embedder).open("base")
    first = corpus.chunks()[0]
    (tmp_path / "good.csv").write_text(
        f"chunk_id,subject,predicate,object\n{first.chunk_id},Alan Turing,born in,"
        f"London\n{first.chunk_id},Alan Turing,studied at,Cambridge\n"
    )
    code, out, err = cli(capsys, "triplets", "import", "base", str(tmp_path / "good.csv"))
    assert code == 0 and "imported 2 triplet links" in out, out + err
    corpus.close()
    return root / "base", first


def hostile_documents(d: Path) -> dict[str, str]:
    """File name -> what its message must say."""
    (d / "empty.txt").write_bytes(b"")
    (d / "binary.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40)
    with open(d / "huge.txt", "wb") as fh:  # sparse: 200 MB on paper, no disk used
        fh.truncate(200 * MB)
    (d / "bad_utf8.txt").write_bytes("Caf\u00e9 ".encode() + b"\xc3\x28 broken" * 10)
    shutil.copy(FIX / "scanned.pdf", d / "scanned.pdf")
    (d / "deep.json").write_bytes(b"[" * 10_000 + b"]" * 10_000)
    (d / "bare_nan.json").write_bytes(b"NaN")
    (d / "archive.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    return {
        "empty.txt": "is empty",
        "binary.txt": "binary",
        "huge.txt": "over the 50.0 MB limit; not read",
        "bad_utf8.txt": "not valid UTF-8",
        "scanned.pdf": "no text layer",
        "deep.json": "nested too deeply",
        "bare_nan.json": "NaN",
        "archive.zip": "unsupported file type '.zip'",
    }


def test_rejected_documents_are_named_and_leave_the_corpus_unchanged(base, tmp_path, capsys):
    corpus_dir, _ = base
    before = stored_checksum(corpus_dir)
    bad = tmp_path / "bad"
    bad.mkdir()
    expected = hostile_documents(bad)
    for name, says in expected.items():
        tracemalloc.start()
        t0 = time.perf_counter()
        code, out, err = cli(capsys, "corpus", "add", "base", str(bad / name))
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert code == 2, (name, out, err)
        assert f"skipped {bad / name}: " in err and name in err.split(": ", 1)[1] and says in err, err
        assert "+0 documents" in out and "1 file(s) rejected" in out
        assert stored_checksum(corpus_dir) == before, f"{name} changed the stored rows"
        assert peak < 50 * MB, f"{name}: {peak / MB:.0f} MB allocated while rejecting it"
        if name == "huge.txt":
            assert seconds < 2 and peak < 5 * MB, "the 200 MB file was read before being refused"
    assert cli(capsys, "corpus", "check", "base")[0] == 0


def test_html_scripts_and_styles_never_reach_the_corpus(base, tmp_path, capsys, embedder):
    corpus_dir, _ = base
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Lighthouses</title><style>body{color:red} .STYLE_MARK{}</style>"
        "<script>var SCRIPT_MARK = fetch('x');</script></head><body><p>The Bell Rock Lighthouse "
        "stands off the coast of Angus.</p><script src='a.js'>SCRIPT_TWO</script>"
        "<noscript>Enable scripts</noscript></body></html>"
    )
    code, out, err = cli(capsys, "corpus", "add", "base", str(page))
    assert code == 0 and "+1 documents" in out, out + err
    corpus = Workspace(corpus_dir.parent, embedder=embedder).open("base")
    doc = next(d for d in corpus.documents() if d.source == "page.html")
    stored = corpus.get_document(doc.doc_id).text + " ".join(c.text for c in corpus.chunks(doc.doc_id))
    assert "Bell Rock Lighthouse" in stored
    for mark in ("SCRIPT_MARK", "SCRIPT_TWO", "STYLE_MARK", "color:red", "fetch("):
        assert mark not in stored


def test_hostile_triplet_files_are_refused_or_skipped_without_touching_stored_rows(base, tmp_path, capsys):
    corpus_dir, first = base
    before = stored_checksum(corpus_dir)
    passage = first.title + "\n" + first.text

    # wrong arities in every format: HippoRAG OpenIE triples of 2 and 4, short CSV / JSONL rows
    (tmp_path / "arity_openie.json").write_text(
        json.dumps(
            {
                "docs": [
                    {
                        "idx": 0,
                        "passage": passage,
                        "extracted_triples": [
                            ["Alan Turing", "born in"],
                            ["Alan Turing", "born in", "London", "1912"],
                            [],
                        ],
                    }
                ]
            }
        )
    )
    (tmp_path / "arity.jsonl").write_text(
        f'["Alan Turing", "worked at"]\n["Bletchley Park"]\n'
        f'{{"subject": "Alan Turing", "chunk_id": "{first.chunk_id}"}}\n'
    )
    (tmp_path / "arity.csv").write_text("Alan Turing,worked at\nBletchley,Park\n")
    # NaN where a part should be (bare NaN is valid in Python's JSON, and in real OpenIE files)
    (tmp_path / "nan.json").write_text(
        '{"docs": [{"idx": 0, "passage": '
        + json.dumps(passage)
        + ', "extracted_triples": [["Alan Turing", NaN, "London"], '
        '[NaN, "born in", "London"], ["nan", "born in", "London"]]}]}'
    )
    for name in ("arity_openie.json", "arity.jsonl", "arity.csv", "nan.json"):
        code, out, err = cli(capsys, "triplets", "import", "base", str(tmp_path / name))
        assert "imported 0 triplet links" in out and str(tmp_path / name) in out, (name, out, err)
        assert "malformed records skipped" in out and "skipped: " in err, (name, err)
        assert stored_checksum(corpus_dir) == before, f"{name} changed the stored rows"

    # a million rows: refused whole before parsing, in bounded time and memory
    million = tmp_path / "million.csv"
    with open(million, "w") as fh:
        fh.write("chunk_id,subject,predicate,object\n")
        fh.writelines(f"{first.chunk_id},Entity {i},is in,Thing {i % 977}\n" for i in range(1_000_000))
    size = million.stat().st_size
    # a 200 MB triplet file: refused by its size before a byte is read
    with open(tmp_path / "huge.jsonl", "wb") as fh:
        fh.truncate(200 * MB)
    for name, says, budget in (
        ("million.csv", f"holds more than {MAX_ROWS:,} triplet records", 2.5 * size),
        ("huge.jsonl", "is 209,715,200 bytes, over the 52,428,800-byte limit; not read", 1 * MB),
    ):
        tracemalloc.start()
        t0 = time.perf_counter()
        code, out, err = cli(capsys, "triplets", "import", "base", str(tmp_path / name))
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert code == 2 and f"error: {tmp_path / name}: {name} {says}" in err, err
        assert seconds < 5, f"{name} took {seconds:.1f} s to refuse"
        assert peak < budget, f"{name}: {peak / MB:.0f} MB allocated while refusing it"
        assert stored_checksum(corpus_dir) == before
    assert cli(capsys, "corpus", "check", "base")[0] == 0


def test_ten_megabyte_single_line_is_stored_in_bounded_time(tmp_path):
    line = tmp_path / "one_line.txt"
    line.write_bytes(b" ".join(b"word%d" % (i % 5000) for i in range(1_700_000)))  # ~10 MB, no newline
    assert line.stat().st_size > 10 * MB
    corpus = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("long")
    t0 = time.perf_counter()
    batch = load_paths([line])
    report = corpus.add_documents(batch.documents)
    assert time.perf_counter() - t0 < 30
    assert batch.errors == [] and report.documents_added == 1 and report.chunks_added > 5000
    assert corpus.check() == []


def test_archive_upload_is_refused_as_unsupported():
    batch = load_bytes("corpus.zip", b"PK\x03\x04" + b"\x00" * 100)
    assert batch.documents == [] and len(batch.errors) == 1
    name, msg = batch.errors[0]
    assert name == "corpus.zip" and msg.startswith("corpus.zip has an unsupported file type '.zip'")


def test_a_file_that_never_ends_is_cut_at_the_size_limit(base, capsys):
    # /dev/zero reports size 0 and never ends: reading it "whole" used to run out of memory
    corpus_dir, _ = base
    before = stored_checksum(corpus_dir)
    for argv, says in (
        (("triplets", "import", "base", "/dev/zero"), "over the 52,428,800-byte limit; not read"),
        (("corpus", "add", "base", "/dev/zero"), "over the 50.0 MB limit; not read"),
    ):
        tracemalloc.start()
        t0 = time.perf_counter()
        code, out, err = cli(capsys, *argv)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert code == 2 and "/dev/zero" in err and says in err, err
        assert seconds < 10 and peak < 3 * 50 * MB
        assert stored_checksum(corpus_dir) == before
