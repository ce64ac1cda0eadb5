"""Runs: one question with one or more method results, as the app shows them and saves them.

A run is saved as one result (a trace file, the same JSON the CLI writes with --trace-out) or one
comparison (several results for one question), under `<corpus>/runs/`:

    run = Run(question, [result], gold=["..."], corpus=corpus.name)
    path = save_run(corpus, run)            # Session.save_run refuses this in demo mode
    run = load_run(path)                    # the same dataclasses back, no LLM needed

A saved run reopens with the full step-through: everything the views draw is in the trace.
Results are (de)serialized by engine.methods.base; this module names files and wraps a
comparison's results in one JSON object.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from engine.core import serde
from engine.core.textnorm import shorten
from engine.methods.base import Result, result_from_json, result_to_json

COMPARISON_KIND = "triplet-lens-comparison"


@dataclass
class Run:
    """What a page shows: one question, one or more method results, and the gold answer if known."""

    question: str
    results: list[Result] = field(default_factory=list)
    gold: list[str] = field(default_factory=list)
    qid: str = ""
    corpus: str = ""
    created: float = 0.0

    @property
    def kind(self) -> str:
        return "comparison" if len(self.results) > 1 else "result"

    def by_method(self, method: str) -> Result | None:
        return next((r for r in self.results if r.method == method), None)


def runs_dir(corpus) -> Path:
    return Path(corpus.path) / "runs"


def _slug(text: str, n: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:n].lower() or "run"


def run_to_json(run: Run) -> str:
    """A single result saves as the plain trace JSON; a comparison as a wrapper object."""
    if len(run.results) == 1 and not run.gold and not run.qid:
        return result_to_json(run.results[0])
    return json.dumps(
        {
            "kind": COMPARISON_KIND,
            "schema_version": 1,
            "question": run.question,
            "gold": list(run.gold),
            "qid": run.qid,
            "corpus": run.corpus,
            "created": run.created,
            "results": [serde.to_dict(r) for r in run.results],
        },
        ensure_ascii=False,
        indent=1,
        allow_nan=False,
    )


def run_from_json(text: str) -> Run:
    """Parse a saved run; raises ValueError with a readable message for anything else."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON file ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict) and data.get("kind") == COMPARISON_KIND:
        results = [result_from_json(json.dumps(r)) for r in data.get("results") or []]
        if not results:
            raise ValueError("the comparison file holds no results")
        return Run(
            question=str(data.get("question") or results[0].question),
            results=results,
            gold=[str(g) for g in data.get("gold") or []],
            qid=str(data.get("qid") or ""),
            corpus=str(data.get("corpus") or ""),
            created=float(data.get("created") or 0.0),
        )
    result = result_from_json(text)
    return Run(question=result.question, results=[result])


def save_run(corpus, run: Run) -> Path:
    """Write the run under `<corpus>/runs/` and return its path."""
    run.created = run.created or time.time()
    # names come from results that may have been uploaded: only slugs reach the file name
    methods = "+".join(_slug(r.method) for r in run.results)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(run.created))
    path = runs_dir(corpus) / f"{stamp}_{methods}_{_slug(run.question)}.json"
    serde.atomic_write_text(path, run_to_json(run))
    return path


def list_runs(corpus) -> list[Path]:
    """Saved run files, newest first (evaluation folders are listed by the Evaluate page)."""
    d = runs_dir(corpus)
    if not d.is_dir():
        return []
    # no symlinks: a link dropped into runs/ must not make the app read files elsewhere
    return sorted(
        (p for p in d.glob("*.json") if p.is_file() and not p.is_symlink()), key=lambda p: p.name, reverse=True
    )


def load_run(path: Path) -> Run:
    return run_from_json(Path(path).read_text(encoding="utf-8"))


def describe_run(path: Path) -> str:
    """A saved run as a reader knows it: "question · methods · date time" (the file name when the
    file cannot be read)."""
    p = Path(path)
    try:
        return _describe(str(p), p.stat().st_mtime)
    except (OSError, ValueError, TypeError, AttributeError):
        return p.name


@lru_cache(maxsize=512)
def _describe(path: str, mtime: float) -> str:  # mtime: a changed file is described again
    from engine.methods.registry import title

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    results = data.get("results") if data.get("kind") == COMPARISON_KIND else [data]
    methods = " vs ".join(title(str(r.get("method", "?"))) for r in results)
    question = str(data.get("question") or (results[0].get("question") if results else "") or "?")
    question = shorten(question, 70)
    created = float(data.get("created") or mtime)
    return f"{question} · {methods} · {time.strftime('%Y-%m-%d %H:%M', time.localtime(created))}"
