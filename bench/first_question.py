"""The app's first question after start (issue 28): a server started as `make run` starts it
(scripts/serve.py, which warms the model and the default corpus in the server process), headless
Chromium opening the landing page, and as soon as it shows, a link to the Ask page that asks a
question (T2RAG, offline reasoner) at once; timed from that navigation until the answer is on
screen. Then the same link again in a new session of the same server: the warm time. Target:
first <= 1.5x warm. `--plain` also measures `streamlit run app.py` (warm-up at the first page
view, what `make run` did before) in the same run, alternating with the launcher.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python bench/first_question.py [--rounds 2] [--plain]

Corpus: the first 20 HotpotQA records, built once into bench/out/wait_workspace (as wait_bench.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _data import need  # noqa: E402
from wait_bench import NAME, WS, build  # noqa: E402

from tests._app_helpers import Browser, StreamlitServer, find_chromium  # noqa: E402


def _ask(b: Browser, url: str, question: str, timeout: float = 300) -> float:
    """Seconds from navigating to `url` until its question's answer is on screen."""
    b.eval("window.__tl_old = true")  # the page before the navigation must not count
    t0 = time.monotonic()
    b.navigate(url)
    done = (
        "!window.__tl_old && document.body && document.body.innerText.includes('Question: ' + "
        + json.dumps(question)
        + ") && document.querySelectorAll('.tl-answer').length > 0"
    )
    while not b.eval(done):
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"no answer: {b.text()[:800]!r}")
        b.pump(0.05)
    return time.monotonic() - t0


def one_server(launcher: bool, question: str, chromium: str, tmp: Path) -> tuple[float, float, float]:
    """(landing page shown after start, first question, the same question warm), in seconds."""
    tag = "launcher" if launcher else "plain"
    srv = StreamlitServer(WS, tmp / f"streamlit-{tag}.log", launcher=launcher)
    b = Browser(chromium, tmp / f"profile-{tag}-{time.monotonic_ns()}")
    try:
        srv.wait_healthy(300)
        b.navigate(srv.url)
        b.wait_text(f"Corpus: {NAME}", timeout=300)  # the landing page, with the corpus selected
        landing = time.monotonic() - srv.started
        link = f"{srv.url}/ask?" + urllib.parse.urlencode({"corpus": NAME, "question": question})
        first = _ask(b, link, question)  # asked at once
        warm = _ask(b, link, question)  # a new session of the same server
    finally:
        b.close()
        srv.stop()
    return landing, first, warm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--plain", action="store_true", help="also `streamlit run app.py` (warm-up at first view)")
    args = ap.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("SKIPPED: needs Chromium (apt-get install -y chromium)")
        return
    corpus_file, qa_file = need(
        "hotpotqa_hipporag_train100/hotpotqa_train_corpus.json", "hotpotqa_hipporag_train100/hotpotqa_train.json"
    )
    questions = build(corpus_file, qa_file)
    kinds = [True, False] if args.plain else [True]
    got: dict[bool, list[tuple[float, float, float]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.rounds):  # alternate: a shared machine's load drifts
            for launcher in kinds:
                got[launcher].append(one_server(launcher, questions[i % len(questions)], chromium, Path(d)))
    print(
        f"corpus {NAME}; Ask page (T2RAG, offline) by link right after the landing page; medians of "
        f"{args.rounds} servers\n"
    )
    print("| server | landing page after start | first question | same question warm | first / warm | target |")
    print("|---|---|---|---|---|---|")
    for launcher in kinds:
        land, first, warm = (statistics.median(x) for x in zip(*got[launcher]))
        name = "scripts/serve.py (make run)" if launcher else "streamlit run app.py (warms at first view)"
        print(f"| {name} | {land:.2f} s | {first:.2f} s | {warm:.2f} s | {first / warm:.2f}x | <= 1.5x |")


if __name__ == "__main__":
    main()
