"""Files and uploads -> Documents and Questions, with one readable error per bad input.

`load_paths` reads files from disk (size checked with `os.stat` before a byte is read);
`load_bytes` reads an upload the app received as name + bytes. Both return an `IngestBatch`
and never raise for one bad file: the file lands in `errors` and the rest of the batch loads.

Formats, chosen by extension and checked by sniffing the content: .txt (and .text, .rst, no
extension), .md/.markdown, .html/.htm, .pdf (text layer only) and .json/.jsonl datasets (see
`engine.ingest.datasets`). An upload's name is reduced to its base name: a path inside an upload
("../../etc/passwd") is never trusted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from engine.core.types import Document, Question
from engine.ingest.datasets import DATASET_ATTRIBUTION, DatasetFile, read_dataset
from engine.ingest.decode import IngestError, decode_text, read_capped
from engine.ingest.documents import read_html, read_markdown, read_pdf, read_text

__all__ = [
    "DATASET_ATTRIBUTION",
    "DEFAULT_MAX_BYTES",
    "IngestBatch",
    "IngestError",
    "SUPPORTED_EXTENSIONS",
    "load_bytes",
    "load_paths",
    "load_uploads",
    "safe_name",
]

_TEXT = (".txt", ".text", ".rst")
_MARKDOWN = (".md", ".markdown")
_HTML = (".html", ".htm", ".xhtml")
_JSON = (".json", ".jsonl", ".ndjson")
#: Size limit when the caller gives none (AppSettings.max_file_mb's default, 50 MB).
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
#: Extensions offered in the app's file picker.
SUPPORTED_EXTENSIONS = (
    "txt",
    "text",
    "rst",
    "md",
    "markdown",
    "html",
    "htm",
    "xhtml",
    "pdf",
    "json",
    "jsonl",
    "ndjson",
)


@dataclass
class IngestBatch:
    """What a batch of inputs held: documents (deduplicated by doc_id, first one kept),
    questions (deduplicated by qid) and one `(name, message)` per input that failed or was
    only partly read."""

    documents: list[Document] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def datasets(self) -> list[str]:
        """Dataset names of the questions, for attribution (see DATASET_ATTRIBUTION)."""
        return sorted({q.dataset for q in self.questions if q.dataset})


@dataclass
class _FileResult:
    documents: list[Document]
    questions: list[Question]
    warnings: list[str]
    corpus_only: bool
    question_titles: set[str]
    title_only: set[str] = field(default_factory=set)


def safe_name(name: str) -> str:
    """The base name of an upload, without directories or control characters."""
    base = str(name).replace("\\", "/").rstrip("/").split("/")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    return base if base not in ("", ".", "..") else "upload"


def _human(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _sniff(data: bytes) -> str:
    """ "pdf" | "json" | "html" | "" from the first bytes."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    head = data[:2048].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head[:1] in (b"{", b"["):
        return "json"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "html"
    return ""


def _read(name: str, data: bytes, limit: int | None) -> _FileResult:
    if not data:
        raise IngestError("is empty (0 bytes)")
    ext = PurePosixPath(name.lower()).suffix
    kind = _sniff(data)
    if ext == ".pdf" or kind == "pdf":
        docs = [read_pdf(name, data)]
    elif ext in _JSON or (ext in ("",) + _TEXT and kind == "json"):
        ds: DatasetFile = read_dataset(name, decode_text(data), limit)
        return _FileResult(ds.documents, ds.questions, ds.warnings, ds.corpus_only, ds.question_titles, ds.title_only)
    elif ext in _HTML or (ext in ("",) + _TEXT and kind == "html"):
        docs = [read_html(name, data)]
    elif ext in _MARKDOWN:
        docs = [read_markdown(name, data)]
    elif ext in ("",) + _TEXT:
        docs = [read_text(name, data)]
    elif kind == "json":
        return _read(name + ".json", data, limit)
    elif kind == "html":
        docs = [read_html(name, data)]
    else:
        supported = ", ".join("." + e for e in SUPPORTED_EXTENSIONS)
        raise IngestError(f"has an unsupported file type '{ext}' (supported: {supported})")
    return _FileResult(docs, [], [], False, set())


def _collect(results: Iterable[tuple[str, _FileResult | str]], limit: int | None) -> IngestBatch:
    batch = IngestBatch()
    kept: list[tuple[_FileResult, str]] = []
    for name, res in results:
        if isinstance(res, str):
            batch.errors.append((name, f"{name} {res}"))
            continue
        kept.append((res, name))
        for w in res.warnings:
            batch.errors.append((name, f"{name}: {w}"))
    # With limit_questions, a corpus-only file (corpus.json) contributes only the passages the
    # kept questions mention, so "first N questions" really is a small corpus.
    wanted: set[str] | None = None
    if limit is not None and any(r.questions for r, _ in kept):
        # questions that name no paragraph at all (NQ/PopQA style) cannot select any: keep everything
        wanted = set().union(*(r.question_titles for r, _ in kept)) or None
    seen_docs: set[str] = set()
    seen_q: set[str] = set()
    for res, _ in kept:
        for d in res.documents:
            if d.doc_id in seen_docs:
                continue
            if wanted is not None and res.corpus_only and d.title not in wanted:
                continue
            seen_docs.add(d.doc_id)
            batch.documents.append(d)
        for q in res.questions:
            if q.qid not in seen_q:
                seen_q.add(q.qid)
                batch.questions.append(q)
    _check_title_only(kept, batch)
    return batch


def _check_title_only(kept: list[tuple[_FileResult, str]], batch: IngestBatch) -> None:
    """Titles named by a title-only `context` must match a passage loaded with them (a corpus
    file), or their gold cannot be retrieved: say how many do not."""
    loaded = {d.title for d in batch.documents}
    for res, name in kept:
        missing = sorted(res.title_only - loaded)
        if missing:
            more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
            batch.errors.append(
                (
                    name,
                    f"{name}: {len(missing)} of {len(res.title_only)} title-only context "
                    f"title(s) match no passage loaded with it, e.g. "
                    f"{', '.join(repr(t) for t in missing[:3])}{more}; add the corpus file "
                    "holding their text",
                )
            )


def _guarded(name: str, data: bytes, limit: int | None) -> _FileResult | str:
    try:
        return _read(name, data, limit)
    except IngestError as e:
        return str(e)
    except RecursionError:
        return "is nested too deeply to read"
    except MemoryError:
        return "is too large to read in memory"
    except Exception as e:  # a reader bug must not sink the batch; say what happened
        return f"could not be read ({type(e).__name__}: {str(e)[:200]})"


def _expand(paths: Iterable[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")))
        else:
            out.append(p)
    return out


def load_paths(
    paths: Iterable[str | os.PathLike], max_bytes: int = DEFAULT_MAX_BYTES, limit_questions: int | None = None
) -> IngestBatch:
    """Read files (directories are walked). `limit_questions` keeps the first N questions of
    each dataset file, with only their paragraphs."""
    results: list[tuple[str, _FileResult | str]] = []
    for path in _expand(paths):
        label = str(path)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            results.append((label, "was not found"))
            continue
        except OSError as e:
            results.append((label, f"cannot be read ({e.strerror or e})"))
            continue
        if size > max_bytes:
            results.append((label, f"is {_human(size)}, over the {_human(max_bytes)} limit; not read"))
            continue
        try:
            with open(path, "rb") as fh:
                data = read_capped(fh, size, max_bytes)  # the file may have grown since stat
        except OSError as e:
            results.append((label, f"cannot be read ({e.strerror or e})"))
            continue
        if len(data) > max_bytes:
            results.append((label, f"is over the {_human(max_bytes)} limit; not read"))
            continue
        results.append((label, _guarded(path.name, data, limit_questions)))
    return _collect(results, limit_questions)


def load_bytes(
    name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES, limit_questions: int | None = None
) -> IngestBatch:
    """Read one upload. Only the base name of `name` is used, as title fallback and source."""
    return load_uploads([(name, data)], max_bytes, limit_questions)


def load_uploads(
    files: Iterable[tuple[str, bytes]], max_bytes: int = DEFAULT_MAX_BYTES, limit_questions: int | None = None
) -> IngestBatch:
    """Several uploads at once (name, bytes), so corpus.json + questions dedupe and limit together."""
    results: list[tuple[str, _FileResult | str]] = []
    for name, data in files:
        safe = safe_name(name)
        if len(data) > max_bytes:
            results.append((safe, f"is {_human(len(data))}, over the {_human(max_bytes)} limit; not read"))
        else:
            results.append((safe, _guarded(safe, bytes(data), limit_questions)))
    return _collect(results, limit_questions)
