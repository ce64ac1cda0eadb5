"""Where a benchmark finds its data: the shared sets beside the clone, else their copies in
tests/fixtures/qa (committed with attribution, so `bench/run_all.py` runs from a fresh clone).
A script whose data is in neither place says which it needs and exits 0 (skipped, not failed)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACES = (ROOT.parent / "shared" / "data", ROOT / "tests" / "fixtures" / "qa")


def data_file(rel: str | Path) -> Path | None:
    """`rel` (e.g. `hotpotqa_hipporag_train100/hotpotqa_train.json`) in the first place that has it."""
    return next((base / rel for base in PLACES if (base / rel).is_file()), None)


def need(*rels: str | Path) -> list[Path]:
    """Every file of `rels`, or a SKIPPED line naming the missing ones and exit 0."""
    found = [data_file(r) for r in rels]
    missing = [str(r) for r, f in zip(rels, found) if f is None]
    if missing:
        print(f"SKIPPED: this benchmark needs {', '.join(missing)} under ../shared/data or tests/fixtures/qa")
        sys.exit(0)
    return [f for f in found if f is not None]
