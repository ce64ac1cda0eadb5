"""The records of an evaluation run on disk: `<method>.jsonl` (one `QuestionRecord` per line,
appended as each question finishes) read back streamed, and `run.json`, the configuration a
resumed run must match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.core import serde
from engine.eval.metrics import QuestionMetrics
from engine.eval.recall_loss import RecallLoss
from engine.methods.base import Usage


@dataclass
class QuestionRecord:
    """One line of `<method>.jsonl`."""

    qid: str
    question: str
    answer: str
    gold: list[str]
    metrics: QuestionMetrics
    usage: Usage
    failure: str = ""  # failure label (failures.LABELS) of a labelled method, "error" when a method raised
    trace: str = ""  # path of the saved Result, relative to out_dir
    error: str = ""
    evidence_chunk_ids: list[str] = field(default_factory=list)
    stop_reason: str = ""
    reasoner: str = ""
    recall_loss: RecallLoss | None = None  # where the gold units went (engine/eval/recall_loss.py)


def iter_records(path: Path, repair: bool = False) -> Iterator[tuple[int, QuestionRecord]]:
    """(byte offset, record) of each good line, streamed (one line in memory at a time). A
    truncated or garbled line is skipped; with `repair`, a broken tail is cut off once the whole
    file was read, so appends start clean."""
    if not path.exists():
        return
    good_end = pos = 0
    with open(path, "rb") as fh:
        for line in fh:
            start, pos = pos, pos + len(line)
            if not line.strip():
                good_end = pos
                continue
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("unterminated line")  # the process died mid-write
                rec = serde.from_dict(QuestionRecord, json.loads(line))
            except (ValueError, TypeError, KeyError):
                continue
            good_end = pos
            yield start, rec
    if repair and good_end < pos:
        # only the tail can be half-written (lines are appended); keep every complete line
        with open(path, "r+b") as fh:
            fh.truncate(good_end)


def _last_offsets(path: Path, repair: bool = False) -> dict[str, int]:
    """qid -> offset of its last good line (a later line for the same qid wins)."""
    return {rec.qid: off for off, rec in iter_records(path, repair)}


def done_qids(path: Path, repair: bool = False) -> set[str]:
    """The questions `path` holds a record for (the records themselves are not kept)."""
    return set(_last_offsets(path, repair))


def iter_last_records(path: Path, qids: set[str] | None = None) -> Iterator[QuestionRecord]:
    """The last record of each question (of `qids`, or all), streamed in file order: two passes
    over the file, holding an offset per question, never the records."""
    last = _last_offsets(path)
    for off, rec in iter_records(path):
        if last.get(rec.qid) == off and (qids is None or rec.qid in qids):
            yield rec


def read_records(path: Path, repair: bool = False) -> dict[str, QuestionRecord]:
    """Records already written, by qid (a later line for the same qid wins), all in memory: for a
    view of one run's records; the harness itself streams them (`iter_last_records`)."""
    out: dict[str, QuestionRecord] = {}
    for _, rec in iter_records(path, repair):
        out[rec.qid] = rec
    return out


def check_run_config(
    out: Path, corpus: Any, reasoner: Any, methods: list[str], settings_by_method: dict[str, Any]
) -> None:
    """Refuse to resume into a folder that holds another run (other corpus, model or settings):
    mixing its records with new ones would average two different experiments."""
    config: dict[str, Any] = {
        "corpus": getattr(corpus, "name", ""),
        "reasoner": getattr(reasoner, "name", "") if reasoner else "",
        "settings": {m: serde.to_dict(settings_by_method.get(m)) for m in methods},
    }
    path = out / "run.json"
    old: dict = {}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    for key in ("corpus", "reasoner"):
        if old.get(key, config[key]) != config[key]:
            raise ValueError(
                f"{out} holds results for {key} {old[key]!r}, not {config[key]!r}; use another output folder"
            )
    old_settings = old.get("settings", {})
    for m in methods:
        if m in old_settings and old_settings[m] != config["settings"][m] and (out / f"{m}.jsonl").exists():
            raise ValueError(f"{out} holds {m} results made with other settings; use another output folder")
    merged = {**config, "settings": {**old_settings, **config["settings"]}}
    serde.atomic_write_text(path, json.dumps(merged, indent=1))
