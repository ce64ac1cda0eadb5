"""Triplet files: HippoRAG/T2RAG OpenIE JSON, KG2RAG per-title JSON, CSV/JSONL; export round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.core.chunking import ChunkingSettings, chunk_document, make_doc_id
from engine.core.triplet_rules import filter_reason
from engine.core.types import Document, Triplet
from engine.triplets.files import (
    TripletRow,
    read_triplet_bytes,
    read_triplet_file,
    triplets_to_text,
    write_triplets,
)
from engine.triplets.resolve import resolve_rows

FIX = Path(__file__).parents[2] / "fixtures" / "ingest"
MB = 1024 * 1024


def _doc(title: str, text: str) -> Document:
    return Document(make_doc_id(title, text), title, text)


HOPPER = _doc("Grace Hopper", "Grace Hopper was an American computer scientist. She helped create COBOL in 1959.")
TURING = _doc(
    "Alan Turing",
    "Alan Turing was born in Maida Vale, London.\n\n"
    + " ".join(f"Turing fact {i} is recorded here." for i in range(40)),
)


def _chunks(mode: str = "paragraph", max_words: int = 60):
    return [c for d in (HOPPER, TURING) for c in chunk_document(d, ChunkingSettings(mode=mode, max_words=max_words))]


def test_openie_file_with_real_world_defects_is_read_and_defects_are_counted():
    tf = read_triplet_file(FIX / "openie_sample.json", MB)  # top level holds bare NaN numbers
    assert tf.error == "" and tf.format == "openie"
    assert [(r.subject, r.predicate, r.object) for r in tf.rows] == [
        ("Grace Hopper", "helped create", "COBOL"),  # the duplicate later in the doc is dropped
        ("COBOL", "created in", "1959"),
        ("Nobody", "is in", "no corpus"),
    ]
    assert all(r.ref_kind == "passage" for r in tf.rows)
    assert tf.skipped == 7
    joined = "\n".join(tf.errors)
    for reason in (
        "2 parts instead of 3",
        "4 parts instead of 3",
        "placeholder object 'unknown'",
        "subject equals object",
        "empty subject",
        "not a list",
        "doc 4: not an object",
    ):
        assert reason in joined


def test_openie_passages_resolve_to_their_chunks_and_unknown_passages_are_counted():
    tf = read_triplet_file(FIX / "openie_sample.json", MB)
    chunks = _chunks()
    resolved, unresolved = resolve_rows(tf.rows, chunks)
    hopper_chunk = next(c.chunk_id for c in chunks if c.title == "Grace Hopper")
    assert resolved == [
        (hopper_chunk, "Grace Hopper", "helped create", "COBOL"),
        (hopper_chunk, "COBOL", "created in", "1959"),
    ]
    assert unresolved == 1  # the "Nobody" passage is not in this corpus
    # sentence-mode chunks lie inside the passage; the triplet goes to the one that states it
    # (it names the object; the subject is "She" there), not to every window naming an entity
    s_chunks = _chunks("sentence")
    resolved, _ = resolve_rows(tf.rows[:1], s_chunks)
    assert [s_chunks_by_id(s_chunks)[cid].text for cid, *_ in resolved] == [
        "Grace Hopper: She helped create COBOL in 1959.",
    ]


def s_chunks_by_id(chunks):
    return {c.chunk_id: c for c in chunks}


def test_kg2rag_directory_resolves_title_and_sentence_index(tmp_path):
    tf = read_triplet_file(FIX / "kg2rag", MB)
    assert tf.format == "kg2rag" and tf.skipped == 1 and "2 parts instead of 3" in tf.errors[0]
    rows = {(r.chunk_ref, r.sent_id, r.object) for r in tf.rows}
    assert ("Grace Hopper", 1, "COBOL") in rows and ("AC_DC", 0, "hard rock") in rows
    acdc = _doc("AC/DC", "AC/DC are an Australian hard rock band. They formed in Sydney.")
    chunks = [c for d in (HOPPER, acdc) for c in chunk_document(d, ChunkingSettings(mode="sentence"))]
    resolved, unresolved = resolve_rows(tf.rows, chunks)
    by_id = s_chunks_by_id(chunks)
    got = {(by_id[cid].title, by_id[cid].sent_start, o) for cid, s, p, o in resolved}
    assert got == {
        ("Grace Hopper", 0, "computer scientist"),
        ("Grace Hopper", 0, "America"),
        ("Grace Hopper", 1, "COBOL"),
        ("AC/DC", 0, "hard rock"),
    }  # "/" was "_" in the file name
    assert unresolved == 0


def test_kg2rag_file_on_a_real_hotpotqa_paragraph(shared_data, tmp_path):
    from engine.ingest import load_paths

    batch = load_paths([shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json"], 10**8, limit_questions=1)
    doc = next(d for d in batch.documents if d.sentences and len(d.sentences) >= 3)
    (tmp_path / f"{doc.title.replace('/', '_')}.json").write_text(
        json.dumps({"2": [[doc.title, "has third sentence", "fact"]]})
    )
    tf = read_triplet_file(tmp_path / f"{doc.title.replace('/', '_')}.json", MB)
    for mode, expected in (("sentence", 2), ("paragraph", 0)):
        chunks = chunk_document(doc, ChunkingSettings(mode=mode))
        resolved, unresolved = resolve_rows(tf.rows, chunks)
        assert unresolved == 0 and len(resolved) == 1
        chunk = s_chunks_by_id(chunks)[resolved[0][0]]
        assert chunk.sent_start == expected and chunk.sent_start <= 2 < chunk.sent_end


def test_csv_by_title_applies_filters_and_picks_chunks_that_name_the_entities():
    tf = read_triplet_file(FIX / "triplets.csv", MB)
    assert tf.format == "csv" and len(tf.rows) == 2 and tf.skipped == 4
    assert any("line 7: no chunk reference" in e for e in tf.errors)
    chunks = _chunks(max_words=60)
    assert sum(c.title == "Alan Turing" for c in chunks) > 1
    resolved, unresolved = resolve_rows(tf.rows, chunks)
    by_id = s_chunks_by_id(chunks)
    turing = [by_id[cid] for cid, s, p, o in resolved if s == "Alan Turing"]
    assert len(turing) == 1 and "Maida Vale" in turing[0].text
    assert unresolved == 0


def test_title_rows_in_a_sentence_corpus_attach_to_the_sentence_that_names_them():
    chunks = _chunks("sentence")
    rows = [TripletRow("Alan Turing", "born in", "Maida Vale", "Alan Turing", "title")]
    resolved, unresolved = resolve_rows(rows, chunks)
    by_id = s_chunks_by_id(chunks)
    assert unresolved == 0
    assert [by_id[cid].text for cid, *_ in resolved] == ["Alan Turing: Alan Turing was born in Maida Vale, London."]


def test_export_then_import_round_trips_in_csv_and_jsonl(tmp_path):
    chunks = _chunks()
    tricky = [
        Triplet("Grace Hopper", "helped create", "COBOL", (chunks[0].chunk_id,)),
        Triplet('He said "hi, there"', "wrote\nacross lines", "Zoë, Ünïcode", (chunks[0].chunk_id, chunks[1].chunk_id)),
        Triplet("Alan Turing", "born in", "Maida Vale", (chunks[1].chunk_id,)),
    ]
    expected = sorted((cid, t.subject, t.predicate, t.object) for t in tricky for cid in t.chunk_ids)
    for ext in ("csv", "jsonl"):
        path = tmp_path / f"export.{ext}"
        assert write_triplets(path, tricky, chunks) == 4
        tf = read_triplet_file(path, MB)
        assert tf.error == "" and tf.skipped == 0 and {r.ref_kind for r in tf.rows} == {"chunk_id"}
        resolved, unresolved = resolve_rows(tf.rows, chunks)
        assert sorted(resolved) == expected and unresolved == 0
    first = json.loads((tmp_path / "export.jsonl").read_text().splitlines()[0])
    assert first == {
        "subject": "Grace Hopper",
        "predicate": "helped create",
        "object": "COBOL",
        "chunk_id": chunks[0].chunk_id,
        "title": "Grace Hopper",
    }
    assert triplets_to_text(tricky, {c.chunk_id: c for c in chunks}, "csv").startswith(
        "subject,predicate,object,chunk_id,title\n"
    )
    with pytest.raises(ValueError, match="name it .jsonl or .csv"):
        write_triplets(tmp_path / "export.txt", tricky, chunks)


def test_headerless_csv_tsv_and_jsonl_lists_are_read():
    cid = _chunks()[0].chunk_id
    tf = read_triplet_bytes(
        "rows.csv", f"Grace Hopper,created,COBOL,{cid}\nCOBOL,year,1959,Grace Hopper\n".encode(), MB
    )
    assert [(r.ref_kind, r.chunk_ref) for r in tf.rows] == [("chunk_id", cid), ("title", "Grace Hopper")]
    tsv = read_triplet_bytes("rows.tsv", b"head\trelation\ttail\ttitle\tsent_id\nA\tb\tC\tT\t3\n", MB)
    assert tsv.rows == [TripletRow("A", "b", "C", "T", "title_sentence", 3)]
    jl = read_triplet_bytes("r.jsonl", b'["A", "b", "C", "T"]\n{"s": "D", "p": "e", "o": 7, "chunk": "T"}\n', MB)
    assert [(r.subject, r.object) for r in jl.rows] == [("A", "C"), ("D", "7")]


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("empty.json", b"", "is empty"),
        ("bad.json", b'{"docs": [\n{"passage": "x"', "line 2, column"),
        ("deep.json", b"[" * 200_000, "nested too deeply"),
        ("other.json", b'{"hello": "world"}', "neither OpenIE output"),
        ("triples.xlsx", b"PK\x03\x04", "unsupported triplet file type"),
        ("bin.csv", b"\x00\x01\x02", "binary"),
        ("big.csv", b"a,b,c,d\n" * 200, "over the"),
        ("nothing.csv", b"subject,predicate,object,chunk_id\n", "holds no triplets"),
    ],
)
def test_bad_triplet_files_give_a_readable_error(name, data, message):
    tf = read_triplet_bytes(f"../up/{name}", data, 1000 if name == "big.csv" else MB)
    assert tf.rows == [] and message in tf.error and tf.error.startswith(name)
    assert tf.errors[0] == tf.error  # callers that only print `errors` still show it


def test_oversize_triplet_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(4 * 1024 * MB)
    assert "over the" in read_triplet_file(path, MB).error


@pytest.mark.parametrize(
    "triple, reason",
    [
        (("A", "is", "B"), None),
        (("A", "born in", "1990"), None),
        (("", "is", "B"), "empty subject"),
        (("A", "  ", "B"), "empty predicate"),
        (("A", "is", "Unknown"), "placeholder object 'Unknown'"),
        (("N/A", "is", "B"), "placeholder subject 'N/A'"),
        (("The Beatles", "are", "beatles"), "subject equals object"),
    ],
)
def test_filter_reason(triple, reason):
    assert filter_reason(*triple) == reason


def test_unknown_chunk_ids_and_titles_are_counted_unresolved():
    rows = [TripletRow("A", "b", "C", "0000000000000000#0", "chunk_id"), TripletRow("A", "b", "C", "Nope", "title")]
    assert resolve_rows(rows, _chunks()) == ([], 2)
