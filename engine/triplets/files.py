"""Import and export of triplet files, so an extraction paid for elsewhere is not paid twice.

Readers (each returns a `TripletFile`; a bad record is skipped and counted, never raised):

* HippoRAG / T2RAG OpenIE output: `{"docs": [{"idx"|"title", "passage": "title\\ntext",
  "extracted_entities": [...], "extracted_triples": [[s, p, o], ...]}], ...}`. Real files hold
  triples of length 2 or 4, documents without triples and bare `NaN` numbers; all are coped with.
* KG2RAG per-title files `{sentence_index: [[h, r, t], ...]}` (title = file stem, with "/"
  written as "_" by the KG2RAG script), one file or a directory of them.
* CSV / JSONL with columns `subject, predicate, object` and a chunk reference (`chunk_id`,
  `title` [+ `sent_id`], `passage`, or `chunk` holding either an id or a title).

A row points at its source with a reference (`ref_kind`); `resolve_rows` (engine/triplets/resolve.py)
maps references onto the corpus's chunk ids. The SPEC section 0 filters that need no chunk text run
while reading: arity 3,
non-empty parts, subject != object, no placeholder part. Exports (`write_triplets`) carry chunk id
and title, and read back unchanged.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, cast

from engine.core.serde import atomic_write_text
from engine.core.triplet_rules import filter_reason
from engine.core.types import Chunk, Triplet
from engine.ingest.decode import (
    IngestError,
    clean_text,
    decode_text,
    looks_like_jsonl,
    parse_json,
    parse_jsonl,
    read_capped,
)

REF_KINDS = ("chunk_id", "title", "title_sentence", "passage")
_CHUNK_ID = re.compile(r"^[0-9a-f]{16}#\d+$")
DEFAULT_MAX_BYTES = 50 * 1024 * 1024  # AppSettings.max_file_mb's default
_MAX_MESSAGES = 50  # keep the first reasons; `skipped` counts them all
#: Records one file may hold. Reading keeps every row in memory (~0.6 KB each) and each new
#: proposition is embedded after the import, so a bigger file is refused whole, with a message,
#: instead of running for many minutes in gigabytes (a million-row CSV took 1.2 GB and ~1 min).
MAX_ROWS = 250_000


class _TooManyRows(Exception):
    pass


@dataclass(frozen=True)
class TripletRow:
    """One imported triplet and where it came from.

    `ref_kind` says what `chunk_ref` holds: a `chunk_id`; a document `title`; a title plus
    `sent_id` (`title_sentence`, KG2RAG); or the `passage` text (HippoRAG, "title\\ntext")."""

    subject: str
    predicate: str
    object: str
    chunk_ref: str
    ref_kind: str
    sent_id: int | None = None


@dataclass
class TripletFile:
    """Rows read from one file (or a KG2RAG directory). `error` is set when the file as a whole
    could not be read; `errors` holds the first reasons for skipped records, `skipped` counts all."""

    source: str
    format: str = ""  # openie | kg2rag | csv | jsonl
    rows: list[TripletRow] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: int = 0
    error: str = ""

    def skip(self, reason: str) -> None:
        self.skipped += 1
        if self.skipped + len(self.rows) > MAX_ROWS:
            raise _TooManyRows
        if len(self.errors) < _MAX_MESSAGES:
            self.errors.append(reason)

    def add(self, s: Any, p: Any, o: Any, ref: str, kind: str, sent_id: int | None, where: str) -> None:
        parts = [_part(x) for x in (s, p, o)]
        reason = filter_reason(*cast(list[str], parts)) if None not in parts else "a part is missing or not text"
        if reason:
            self.skip(f"{where}: {reason}")
        else:
            self.rows.append(TripletRow(parts[0], parts[1], parts[2], ref, kind, sent_id))  # type: ignore[arg-type]
            if self.skipped + len(self.rows) > MAX_ROWS:
                raise _TooManyRows


def _part(x: Any) -> str | None:
    if isinstance(x, str):
        return clean_text(x).strip()  # inner whitespace kept: an export must read back unchanged
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, int) or (isinstance(x, float) and math.isfinite(x)):
        return str(x)
    return None


def _finish(tf: TripletFile) -> TripletFile:
    """Drop duplicate rows; list a whole-file error in `errors` too, for callers that print only those."""
    if tf.error and tf.error not in tf.errors:
        tf.errors.insert(0, tf.error)
    seen: set[TripletRow] = set()
    rows = []
    for r in tf.rows:
        if r not in seen:
            seen.add(r)
            rows.append(r)
    tf.rows = rows
    return tf


# --- readers --------------------------------------------------------------------------------


def _read_openie(value: dict, tf: TripletFile) -> None:
    tf.format = "openie"
    for i, doc in enumerate(value["docs"]):
        if not isinstance(doc, dict):
            tf.skip(f"doc {i}: not an object")
            continue
        raw = doc.get("passage")
        passage = clean_text(raw).strip() if isinstance(raw, str) else ""
        title = _part(doc.get("title"))
        ref, kind = (passage, "passage") if passage else (title, "title")
        triples = doc.get("extracted_triples")
        if not isinstance(triples, list):
            continue  # a document without triples is normal, not an error
        if not ref:
            if triples:
                tf.skip(f"doc {i}: no passage or title to attach its {len(triples)} triples to")
            continue
        for j, t in enumerate(triples):
            if not isinstance(t, (list, tuple)):
                tf.skip(f"doc {i} triple {j}: not a list")
            elif len(t) != 3:
                tf.skip(f"doc {i} triple {j}: {len(t)} parts instead of 3")
            else:
                tf.add(t[0], t[1], t[2], ref, kind, None, f"doc {i} triple {j}")


def _read_kg2rag(value: dict, title: str, tf: TripletFile) -> None:
    tf.format = "kg2rag"
    for key, triples in value.items():
        try:
            sent_id = int(str(key).strip())
        except ValueError:
            tf.skip(f"{title}: key {key!r} is not a sentence index")
            continue
        for j, t in enumerate(triples if isinstance(triples, list) else []):
            if not isinstance(t, (list, tuple)) or len(t) != 3:
                n = len(t) if isinstance(t, (list, tuple)) else "no"
                tf.skip(f"{title} sentence {sent_id} triple {j}: {n} parts instead of 3")
            else:
                tf.add(t[0], t[1], t[2], title, "title_sentence", sent_id, f"{title} sentence {sent_id} triple {j}")


_ALIASES = {
    "subject": ("subject", "head", "s", "h", "subj"),
    "predicate": ("predicate", "relation", "r", "p", "rel"),
    "object": ("object", "tail", "o", "t", "obj"),
    "chunk_id": ("chunk_id", "chunk id", "chunkid"),
    "chunk": ("chunk", "source", "ref", "chunk_ref"),
    "title": ("title", "doc_title", "document"),
    "sent_id": ("sent_id", "sentence", "sentence_index", "sent"),
    "passage": ("passage",),
}


def _canon(key: str) -> str | None:
    k = key.strip().lower()
    return next((name for name, al in _ALIASES.items() if k in al), None)


def _from_mapping(m: Mapping[str, Any], where: str, tf: TripletFile) -> None:
    f = {c: v for k, v in m.items() if (c := _canon(str(k))) is not None}
    chunk_id, chunk = _part(f.get("chunk_id")) or "", _part(f.get("chunk")) or ""
    title, passage = _part(f.get("title")) or "", _part(f.get("passage")) or ""
    sent_id = None
    if f.get("sent_id") not in (None, ""):
        try:
            sent_id = int(str(f["sent_id"]).strip())
        except ValueError:
            sent_id = None
    if chunk_id:
        ref, kind = chunk_id, "chunk_id"
    elif chunk:
        ref, kind = chunk, ("chunk_id" if _CHUNK_ID.match(chunk) else "title")
    elif title:
        ref, kind = title, "title"
    elif passage:
        ref, kind = passage, "passage"
    else:
        tf.skip(f"{where}: no chunk reference (chunk_id, chunk, title or passage)")
        return
    if kind == "title" and sent_id is not None:
        kind = "title_sentence"
    sent = sent_id if kind == "title_sentence" else None
    tf.add(f.get("subject"), f.get("predicate"), f.get("object"), ref, kind, sent, where)


def _from_sequence(seq: list, where: str, tf: TripletFile) -> None:
    """A headerless row `s, p, o, ref[, sent_id]`."""
    if len(seq) < 4:
        tf.skip(f"{where}: {len(seq)} columns; need subject, predicate, object and a chunk reference")
        return
    keys = ["subject", "predicate", "object", "chunk", "sent_id"][: len(seq)]
    _from_mapping(dict(zip(keys, seq)), where, tf)


def _read_csv(text: str, delimiter: str, tf: TripletFile) -> None:
    tf.format = "csv"
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header: list[str | None] | None = None
    try:
        for n, row in enumerate(reader, 1):
            if not any(c.strip() for c in row):
                continue
            if header is None and n == 1:
                canon = [_canon(c) for c in row]
                if {"subject", "predicate", "object"} <= set(canon):
                    header = canon
                    continue
            if header is not None:
                _from_mapping({h: v for h, v in zip(header, row) if h}, f"line {n}", tf)
            else:
                _from_sequence(row, f"line {n}", tf)
    except csv.Error as e:
        tf.skip(f"line {reader.line_num}: unreadable CSV ({e}); the rest of the file was not read")


def _read_records(records: list, tf: TripletFile, label: str = "line") -> None:
    for n, rec in enumerate(records, 1):
        if isinstance(rec, dict):
            _from_mapping(rec, f"{label} {n}", tf)
        elif isinstance(rec, list):
            _from_sequence(rec, f"{label} {n}", tf)
        else:
            tf.skip(f"{label} {n}: not an object or a list")


def _is_kg2rag(value: dict) -> bool:
    keys_ok = all(str(k).strip().isdigit() for k in value)
    return bool(value) and keys_ok and all(isinstance(v, list) for v in value.values())


def read_triplet_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> TripletFile:
    """Read one triplet file given as name + bytes (an upload); only the base name is used."""
    name = str(name).replace("\\", "/").split("/")[-1] or "upload"
    tf = TripletFile(source=name)
    if len(data) > max_bytes:
        tf.error = f"{name} is {len(data):,} bytes, over the {max_bytes:,}-byte limit; not read"
        return _finish(tf)
    if not data:
        tf.error = f"{name} is empty (0 bytes)"
        return _finish(tf)
    ext = PurePosixPath(name.lower()).suffix
    try:
        text = decode_text(data)
        if text.count("\n") > MAX_ROWS + 1 and (ext in (".csv", ".tsv", ".jsonl", ".ndjson") or looks_like_jsonl(text)):
            raise _TooManyRows  # one record a line: refused before parsing, in well under a second
        if ext in (".csv", ".tsv"):
            _read_csv(text, "\t" if ext == ".tsv" else ",", tf)
        elif ext in (".jsonl", ".ndjson") or looks_like_jsonl(text):
            tf.format = "jsonl"
            records, problems = parse_jsonl(text)
            for p in problems:
                tf.skip(p)
            _read_records(records, tf)
        elif ext == ".json" or text.lstrip()[:1] in ("{", "["):
            value = parse_json(text)
            if isinstance(value, dict) and isinstance(value.get("docs"), list):
                _read_openie(value, tf)
            elif isinstance(value, dict) and _is_kg2rag(value):
                _read_kg2rag(value, PurePosixPath(name).stem, tf)
            elif isinstance(value, list):
                tf.format = "json"
                _read_records(value, tf, "record")
            else:
                tf.error = (
                    f'{name} is JSON, but neither OpenIE output ({{"docs": [...]}}) '
                    "nor KG2RAG {sentence_index: triples}"
                )
        else:
            tf.error = f"{name} has an unsupported triplet file type '{ext}' (use .json, .jsonl, .csv or .tsv)"
    except IngestError as e:
        tf.error = f"{name} {e}"
    except RecursionError:
        tf.error = f"{name} is nested too deeply to read"
    except _TooManyRows:
        tf.rows, tf.format = [], tf.format or ext.lstrip(".")
        tf.error = (
            f"{name} holds more than {MAX_ROWS:,} triplet records, the limit of one import; nothing "
            "was imported (split it into smaller files)"
        )
    if not tf.error and not tf.rows and tf.skipped == 0 and tf.format != "openie":
        tf.error = f"{name} holds no triplets"
    return _finish(tf)


def read_triplet_file(path: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> TripletFile:
    """Read a triplet file, or a directory of KG2RAG per-title files (size checked before reading)."""
    p = Path(path)
    if p.is_dir():
        merged = TripletFile(source=p.name, format="kg2rag")
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() == ".json")
        if not files:
            merged.error = f"{p.name} holds no .json files"
        for f in files:
            one = read_triplet_file(f, max_bytes)
            merged.rows.extend(one.rows)
            merged.skipped += one.skipped + (1 if one.error else 0)
            for msg in one.errors:  # a whole-file error is listed first among them
                if len(merged.errors) < _MAX_MESSAGES:
                    merged.errors.append(msg if msg.startswith(f.name) else f"{f.name}: {msg}")
            if len(merged.rows) > MAX_ROWS:
                merged.rows = []
                merged.error = (
                    f"{p.name} holds more than {MAX_ROWS:,} triplet records, the limit of one import; "
                    "nothing was imported (split it into smaller folders)"
                )
                break
        return _finish(merged)
    try:
        size = os.stat(p).st_size
        if size > max_bytes:
            msg = f"{p.name} is {size:,} bytes, over the {max_bytes:,}-byte limit; not read"
            return _finish(TripletFile(source=p.name, error=msg))
        with open(p, "rb") as fh:  # capped: a device or FIFO reports size 0 and never ends
            data = read_capped(fh, size, max_bytes)
    except OSError as e:
        return _finish(TripletFile(source=p.name, error=f"{p.name} cannot be read ({e.strerror or e})"))
    return read_triplet_bytes(p.name, data, max_bytes)


# --- export ---------------------------------------------------------------------------------

EXPORT_COLUMNS = ("subject", "predicate", "object", "chunk_id", "title")


def _export_rows(triplets: Iterable[Triplet], chunks: Iterable[Chunk] | Mapping[str, Chunk]) -> list[tuple[str, ...]]:
    pool = chunks.values() if isinstance(chunks, Mapping) else chunks
    titles = {c.chunk_id: c.title for c in pool}
    rows: list[tuple[str, ...]] = []
    for t in triplets:
        for cid in t.chunk_ids or ("",):
            rows.append((t.subject, t.predicate, t.object, cid, titles.get(cid, "")))
    return rows


def _render(rows: list[tuple[str, ...]], fmt: str) -> str:
    if fmt == "jsonl":
        return "".join(json.dumps(dict(zip(EXPORT_COLUMNS, r)), ensure_ascii=False) + "\n" for r in rows)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(EXPORT_COLUMNS)
        w.writerows(rows)
        return buf.getvalue()
    raise ValueError(f"unknown export format {fmt!r}; use 'jsonl' or 'csv'")


def triplets_to_text(triplets: Iterable[Triplet], chunks: Iterable[Chunk] | Mapping[str, Chunk], fmt: str) -> str:
    """The export as text (for a download button), `fmt` = "jsonl" or "csv": one row per
    (triplet, source chunk), columns subject, predicate, object, chunk_id, title."""
    return _render(_export_rows(triplets, chunks), fmt)


def write_triplets(
    path: str | os.PathLike, triplets: Iterable[Triplet], chunks: Iterable[Chunk] | Mapping[str, Chunk]
) -> int:
    """Write the export to `path` (.jsonl or .csv by extension, atomically); returns rows written."""
    p = Path(path)
    fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}.get(p.suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot tell the export format from {p.name!r}; name it .jsonl or .csv")
    rows = _export_rows(triplets, chunks)
    atomic_write_text(p, _render(rows, fmt))
    return len(rows)
