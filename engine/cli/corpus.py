"""`corpus ...`, `triplets ...` and `sample ...` commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.core.config import AppSettings
from engine.core.progress import TerminalProgress
from engine.core.terminal import shown


def _workspace():
    from engine.store import open_workspace

    ws = open_workspace(AppSettings.from_env())
    ws.on_wait = lambda message: print(shown(message), file=sys.stderr)  # a busy corpus: say we wait
    return ws


def _print_errors(errors) -> None:
    for path, msg in errors:
        print(f"skipped {shown(path)}: {shown(msg)}", file=sys.stderr)


def _load(paths: list[str], limit: int | None):
    from engine.ingest import load_paths

    batch = load_paths([Path(p) for p in paths], max_bytes=AppSettings.from_env().max_file_bytes, limit_questions=limit)
    _print_errors(batch.errors)
    return batch


def _report(name: str, report, added_q: int, n_errors: int) -> None:
    print(
        f"{shown(name)}: +{report.documents_added} documents ({report.documents_skipped} already present), "
        f"+{report.chunks_added} chunks, +{added_q} questions; {n_errors} file(s) rejected"
    )


def _ingest(corpus, paths: list[str], limit: int | None) -> int:
    batch = _load(paths, limit)
    bar = TerminalProgress()
    report = corpus.add_documents(batch.documents, on_progress=bar)
    bar.close()
    added_q = corpus.add_questions(batch.questions) if batch.questions else 0
    _report(corpus.name, report, added_q, len(batch.errors))
    if not batch.documents and batch.errors:
        return 2
    return 0


def cmd_create(args) -> int:
    from engine.core.chunking import ChunkingSettings
    from engine.store import CorpusSettings

    ws = _workspace()
    settings = CorpusSettings(
        ChunkingSettings(mode=args.chunking, max_words=args.max_words),
        embedder=args.embedder,
        index_kind=args.index,
        embedder_api_base=args.embedder_api_base,
        vectors=args.vectors,
    )
    if not args.paths:
        corpus = ws.create(args.name, settings)
        print(f"created corpus {args.name!r} at {shown(corpus.path)}")
        return 0
    ws.path_of(args.name)  # a bad name is refused before any file is read
    if ws.exists(args.name):
        print(
            f"error: corpus {args.name!r} already exists in {shown(ws.root)}; add files with: "
            f"python -m engine corpus add {shown(args.name)} PATH",
            file=sys.stderr,
        )
        return 2
    batch = _load(args.paths, args.limit_questions)
    if not batch.documents:
        print(
            f"error: no document could be read from {shown(', '.join(args.paths))}; corpus {args.name!r} "
            "was not created",
            file=sys.stderr,
        )
        return 2
    bar = TerminalProgress()
    try:  # built aside and renamed into place: a failure leaves nothing behind
        corpus, report, added_q = ws.create_from(args.name, batch.documents, batch.questions, settings, on_progress=bar)
    finally:
        bar.close()
    _report(corpus.name, report, added_q, len(batch.errors))
    print(f"created corpus {args.name!r} at {shown(corpus.path)}")
    return 0


def cmd_add(args) -> int:
    return _ingest(_workspace().open(args.name), args.paths, args.limit_questions)


def cmd_list(args) -> int:
    ws = _workspace()
    names = ws.list()
    if not names:
        print(f"no corpora in {shown(ws.root)}; create one with: python -m engine corpus create NAME --from PATH")
    for name in names:
        c = ws.open(name).counts()
        print(
            f"{shown(name):30s} {c.documents:6d} docs {c.chunks:7d} chunks {c.triplets:8d} triplets "
            f"{c.questions:5d} questions"
        )
    return 0


def cmd_show(args) -> int:
    corpus = _workspace().open(args.name)
    info = corpus.info()
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    c = corpus.counts()
    done = c.extracted / c.chunks * 100 if c.chunks else 0.0
    s = corpus.settings
    print(f"corpus {shown(corpus.name)}  ({shown(corpus.path)})")
    print(f"  documents {c.documents}, chunks {c.chunks}, triplets {c.triplets}, questions {c.questions}")
    print(f"  extraction: {c.extracted} done, {c.pending} pending, {c.failed} failed ({done:.0f}%)")
    print(
        f"  chunking {s.chunking.mode} (max {s.chunking.max_words} words), embedder {shown(s.embedder)}, "
        f"index {shown(s.index_kind)}"
    )
    kinds = corpus.index_kinds(on_progress=TerminalProgress())  # a stale index is rebuilt here: minutes at 1M
    print(
        "  vector search: "
        + ", ".join(
            f"{w} {shown(kind)}" + ("" if recall is None else f" (recall@10 vs exact {recall:.3f})")
            for w, (kind, recall) in kinds.items()
        )
        + " - recall measured now, 50 of the index's own vectors as queries (docs/scaling.md)"
    )
    if args.documents:
        for d in corpus.documents():
            print(f"  {shown(d.doc_id)}  {d.n_chunks:3d} chunks  {shown(d.kind):9s} {shown(d.title[:70])}")
    return 0


def cmd_delete_doc(args) -> int:
    corpus = _workspace().open(args.name)
    corpus.delete_document(args.doc_id)
    name = shown(args.name)
    print(f"deleted document {shown(args.doc_id)} from {name} (snapshot taken first: corpus snapshots {name})")
    return 0


def cmd_drop(args) -> int:
    ws = _workspace()
    ws.drop(args.name)
    way_back = f"; bring it back with: corpus undo-drop {shown(args.name)}" if ws.keep_snapshots > 0 else ""
    print(f"dropped corpus {shown(args.name)}{way_back}")
    return 0


def cmd_check(args) -> int:
    from engine.integrity import inspect, repair
    from engine.integrity.interrupted import finish_index_writes
    from engine.store import CorpusError

    ws = _workspace()
    for done in ws.recovered:  # interrupted drops, restores, backups finished or rolled back on opening
        print(f"recovered: {shown(done)}")
    path = ws.path_of(args.name)
    if not path.is_dir():
        raise CorpusError(f"no corpus named {args.name!r} in {ws.root}")
    for done in finish_index_writes(ws, args.name):  # what a writer killed after its commit left behind
        print(f"recovered: corpus {args.name!r}: {shown(done)}")
    findings = inspect(path)
    for f in findings:
        print(f"damaged: {shown(f)}" + ("" if f.derived else "  [database]"))
    if not args.repair:
        if findings:
            print(
                f"repair with: corpus check {shown(args.name)} --repair  "
                f"(or restore a snapshot: corpus snapshots {shown(args.name)})"
            )
            return 1
        print(f"{shown(args.name)}: ok")
        return 0
    report = repair(ws, args.name, into=args.into)
    for a in report.actions:
        print(f"repaired: {shown(a)}")
    for lost in report.lost:
        print(f"lost: {shown(lost)}")
    if report.recovered_into:
        print(
            f"recovered into corpus {report.recovered_into!r}; the damaged {args.name!r} is unchanged "
            f"(drop it once you have checked the recovered one)"
        )
    for f in report.remaining:
        print(f"still damaged: {shown(f)}")
    if not report.remaining:
        print(f"{shown(report.recovered_into or args.name)}: ok")
    return 1 if report.remaining else 0


def cmd_backup(args) -> int:
    from engine.integrity.backup import backup, snapshot_before

    ws = _workspace()
    corpus = ws.open(args.name)
    info = backup(corpus, Path(args.to)) if args.to else snapshot_before(ws, corpus, "manual")
    print(f"backed up {shown(args.name)} to {shown(info.path)} ({len(info.files)} files, checksums in manifest.json)")
    return 0


def cmd_snapshots(args) -> int:
    from engine.integrity.backup import list_snapshots

    ws = _workspace()
    snaps = list_snapshots(ws, args.name)
    if not snaps:
        print("no snapshots" + (f" of {shown(args.name)}" if args.name else ""))
    for s in snaps:
        print(f"{shown(s.corpus):20s} {shown(s.describe())}")
    return 0


def cmd_restore(args) -> int:
    from engine.integrity.backup import find_snapshot, restore

    ws = _workspace()
    info = find_snapshot(ws, args.name, args.snapshot)
    corpus = restore(ws, info, args.as_name, force=args.force)
    c = corpus.counts()
    print(
        f"restored {shown(corpus.name)} from {shown(info.path)} "
        f"({c.documents} docs, {c.chunks} chunks, {c.triplets} triplets)"
    )
    return 0


def cmd_undo_drop(args) -> int:
    from engine.integrity.backup import undo_drop

    corpus = undo_drop(_workspace(), args.name, args.as_name)
    print(f"brought back corpus {shown(corpus.name)} ({corpus.counts().chunks} chunks)")
    return 0


def cmd_triplets_import(args) -> int:
    from engine.triplets.files import read_triplet_file
    from engine.triplets.resolve import resolve_rows

    corpus = _workspace().open(args.name)
    tf = read_triplet_file(Path(args.file), max_bytes=AppSettings.from_env().max_file_bytes)
    if tf.error:
        raise ValueError(f"{args.file}: {tf.error}")
    for e in tf.errors[:20]:
        print(f"skipped: {shown(e)}", file=sys.stderr)
    if tf.skipped > 20:
        print(f"... and {tf.skipped - 20} more skipped records", file=sys.stderr)
    rows, unresolved = resolve_rows(tf.rows, corpus.chunks())
    bar = TerminalProgress()
    added = corpus.import_triplets(rows, on_progress=bar)
    bar.close()
    print(
        f"imported {added} triplet links from {shown(args.file)} ({unresolved} rows named no chunk of this corpus, "
        f"{tf.skipped} malformed records skipped)"
    )
    return 0 if rows or not tf.rows else 2


def cmd_triplets_export(args) -> int:
    from engine.triplets.files import write_triplets

    corpus = _workspace().open(args.name)
    triplets = corpus.triplets()
    write_triplets(Path(args.file), triplets, corpus.chunks())
    print(f"wrote {len(triplets)} triplets to {shown(args.file)}")
    return 0


def cmd_sample_ensure(args) -> int:
    from engine.session.samples import ensure_sample_corpora, start_background_build

    if args.background:
        print(shown(start_background_build(_workspace())))
        return 0
    for line in ensure_sample_corpora(_workspace(), on_progress=TerminalProgress()):
        print(shown(line))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    corpus = sub.add_parser("corpus", help="create, inspect and edit corpora").add_subparsers(
        dest="corpus_cmd", metavar="ACTION"
    )
    corpus.required = True

    p = corpus.add_parser("create", help="create a corpus from files or a QA dataset")
    p.add_argument("name")
    p.add_argument(
        "--from",
        dest="paths",
        nargs="+",
        default=[],
        metavar="PATH",
        help="files: .txt .md .pdf .html, or dataset JSON/JSONL (HotpotQA, MuSiQue, 2Wiki, corpus.json)",
    )
    p.add_argument("--chunking", choices=["paragraph", "sentence"], default="paragraph")
    p.add_argument("--max-words", type=int, default=200, help="paragraph window size in words")
    p.add_argument("--embedder", default="bundled", help="bundled | st:/local/model/path | litellm:<model>")
    p.add_argument("--embedder-api-base", default="", help="OpenAI-compatible endpoint for a litellm: embedder")
    p.add_argument(
        "--index",
        choices=["auto", "flat", "hnsw", "ivf"],
        default="auto",
        help="auto = exact below 20k vectors, HNSW above; flat = always exact; hnsw, ivf = always approximate",
    )
    p.add_argument(
        "--vectors",
        default="",
        metavar="BACKEND",
        help="'' = FAISS files (default); milvus-lite = embedded Milvus; milvus://host:19530 = a server",
    )
    p.add_argument("--limit-questions", type=int, default=None, help="take the first N questions of a dataset")
    p.set_defaults(func=cmd_create)

    p = corpus.add_parser("add", help="add documents to a corpus")
    p.add_argument("name")
    p.add_argument("paths", nargs="+")
    p.add_argument("--limit-questions", type=int, default=None)
    p.set_defaults(func=cmd_add)

    corpus.add_parser("list", help="list corpora").set_defaults(func=cmd_list)

    p = corpus.add_parser("show", help="counts and extraction progress")
    p.add_argument("name")
    p.add_argument("--documents", action="store_true", help="also list documents with their ids")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    _register_safety(corpus)
    _register_triplets_and_samples(sub)


def _register_safety(corpus) -> None:
    """The commands that delete, check, back up and restore (each destructive one snapshots first)."""
    p = corpus.add_parser("delete-doc", help="delete one document (chunks, triplets and vectors go with it)")
    p.add_argument("name")
    p.add_argument("doc_id")
    p.set_defaults(func=cmd_delete_doc)

    p = corpus.add_parser("drop", help="remove a whole corpus (kept as a snapshot: corpus undo-drop brings it back)")
    p.add_argument("name")
    p.set_defaults(func=cmd_drop)

    p = corpus.add_parser("check", help="integrity check of the database and every index file")
    p.add_argument("name")
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild damaged index files; salvage a damaged database into a new corpus",
    )
    p.add_argument("--into", default=None, help="name of the recovered corpus (default NAME-recovered)")
    p.set_defaults(func=cmd_check)

    p = corpus.add_parser("backup", help="consistent snapshot while readers run (with checksums)")
    p.add_argument("name")
    p.add_argument(
        "--to",
        default=None,
        metavar="DIR",
        help="new folder for the snapshot (default: the workspace's .snapshots/NAME/)",
    )
    p.set_defaults(func=cmd_backup)

    p = corpus.add_parser("snapshots", help="list snapshots (backups, and those taken before drop/delete-doc)")
    p.add_argument("name", nargs="?", default=None)
    p.set_defaults(func=cmd_snapshots)

    p = corpus.add_parser("restore", help="restore a snapshot (the newest of NAME unless --snapshot)")
    p.add_argument("name")
    p.add_argument("--snapshot", default=None, help="snapshot id (from corpus snapshots) or folder path")
    p.add_argument("--as", dest="as_name", default=None, help="restore under another name")
    p.add_argument("--force", action="store_true", help="replace an existing corpus (snapshotted first)")
    p.set_defaults(func=cmd_restore)

    p = corpus.add_parser("undo-drop", help="bring back the most recently dropped corpus NAME")
    p.add_argument("name")
    p.add_argument("--as", dest="as_name", default=None)
    p.set_defaults(func=cmd_undo_drop)


def _register_triplets_and_samples(sub) -> None:
    trip = sub.add_parser("triplets", help="import or export triplet files").add_subparsers(
        dest="triplets_cmd", metavar="ACTION"
    )
    trip.required = True
    p = trip.add_parser("import", help="HippoRAG/T2RAG OpenIE JSON, KG2RAG per-title JSON, CSV or JSONL")
    p.add_argument("name")
    p.add_argument("file")
    p.set_defaults(func=cmd_triplets_import)
    p = trip.add_parser("export", help="write all triplets with their chunk ids (.jsonl or .csv)")
    p.add_argument("name")
    p.add_argument("file")
    p.set_defaults(func=cmd_triplets_export)

    sample = sub.add_parser("sample", help="bundled sample corpora").add_subparsers(dest="sample_cmd", metavar="ACTION")
    sample.required = True
    ensure = sample.add_parser("ensure", help="build the bundled sample corpora if missing (offline, no key)")
    ensure.add_argument(
        "--background",
        action="store_true",
        help="start the build in its own process and return at once (the app shows its progress)",
    )
    ensure.set_defaults(func=cmd_sample_ensure)
