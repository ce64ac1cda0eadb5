"""Time to the first page of a first `make run` (issue 24): an empty workspace, then the two commands
`make run` runs, `python -m engine sample ensure --background` and `streamlit run app.py`, with
headless Chromium loading the page until the landing page (the Corpora page with the build's
progress) is on screen; then until the sample corpus has landed and the page shows it.

The baseline in the same run is the old order: `python -m engine sample ensure` (the whole build)
before streamlit starts (`--old` measures it too; it takes minutes on a busy machine).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/first_page.py [--old]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests._app_helpers import Browser, StreamlitServer, find_chromium  # noqa: E402


def _stop_builder(root: Path) -> None:
    """The background build this run started (its own session) still builds the second sample:
    stop it before its workspace is deleted."""
    import signal

    from engine.session.samples import STATUS_FILE, build_status

    if build_status(root).running:
        pid = json.loads((root / STATUS_FILE).read_text())["pid"]
        os.killpg(pid, signal.SIGTERM)


def _first_page(root: Path, background: bool, chromium: str, tmp: Path) -> dict[str, float]:
    env = dict(os.environ, TRIPLET_LENS_WORKSPACE=str(root), PYTHONPATH=str(REPO))
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "engine", "sample", "ensure"] + (["--background"] if background else [])
    subprocess.run(cmd, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t_ensure = time.monotonic() - t0
    srv = StreamlitServer(root, tmp / f"streamlit-{background}.log")
    b = Browser(chromium, tmp / f"profile-{background}")
    try:
        srv.wait_healthy(300)
        t_health = time.monotonic() - t0
        b.navigate(srv.url)
        # the landing page's own content: the build's progress (or the corpus, if it was quicker)
        while "Building the sample corpus" not in b.text() and "Corpus: hotpotqa-sample" not in b.text():
            if time.monotonic() - t0 > 300:
                raise TimeoutError(f"no landing page: {b.text()[:500]!r}")
            b.pump(0.1)
        shown = b.text()
        t_page = time.monotonic() - t0
        b.wait_text("Corpus: hotpotqa-sample", timeout=900)
        t_sample = time.monotonic() - t0
    finally:
        b.close()
        srv.stop()
        _stop_builder(root)
    return {
        "ensure returns": t_ensure,
        "server healthy": t_health,
        "first page": t_page,
        "sample corpus shown": t_sample,
        "progress on first page": float("Building the sample" in shown),
    }


def main() -> None:
    chromium = find_chromium()
    if chromium is None:
        sys.exit("needs Chromium (apt-get install -y chromium)")
    runs = [True] + ([False] if "--old" in sys.argv else [])
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        out = {}
        for background in runs:
            out[background] = _first_page(tmp / f"ws-{background}", background, chromium, tmp)
    for background, r in out.items():
        name = "background build (make run now)" if background else "build first (make run before)"
        print(
            f"{name}: " + ", ".join(f"{k} {v:.1f}s" if "progress" not in k else f"{k}: {bool(v)}" for k, v in r.items())
        )
    if len(out) == 2:
        print(f"first page, new/old: {out[True]['first page'] / out[False]['first page']:.2f}")


if __name__ == "__main__":
    main()
