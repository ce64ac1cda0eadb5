"""Helpers for the app tests: small corpora in a temp workspace, a `streamlit run` server on a free
loopback port, and a headless Chromium driven over the DevTools protocol (websockets, already
installed as a streamlit dependency; no selenium, no websocket-client)."""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_corpora" / "hotpotqa_30.json"
XSS = "<img src=x onerror=alert(1)>"


# --- corpora -----------------------------------------------------------------------------------


def build_small_corpus(root: Path, name: str = "small", questions: int = 2, embedder=None) -> None:
    """A real HotpotQA corpus of `questions` questions (10 paragraphs each), extracted offline."""
    from engine.ingest import load_paths
    from engine.reasoners import make_reasoner
    from engine.store import Workspace
    from engine.triplets.extraction import run_extraction

    ws = Workspace(root, embedder=embedder)
    batch = load_paths([SAMPLE], max_bytes=50 << 20, limit_questions=questions)
    assert batch.documents and batch.questions, batch.errors
    corpus = ws.create(name)
    corpus.add_documents(batch.documents)
    corpus.add_questions(batch.questions)
    run_extraction(corpus, make_reasoner("", embedder=corpus.embedder))
    corpus.refresh_indexes()
    corpus.close()


def build_xss_corpus(root: Path, name: str = "xss", embedder=None) -> None:
    """A corpus whose text, entity, relation and question all carry an HTML payload."""
    from engine.core.types import Document, Question
    from engine.store import Workspace

    ws = Workspace(root, embedder=embedder)
    corpus = ws.create(name)
    docs = [
        Document(
            doc_id="d-xss",
            title=f"Poem {XSS}",
            text=f"{XSS} wrote the poem Evening Star. The poet {XSS} was born in Lisbon.",
            source="xss.txt",
        ),
        Document(doc_id="d-lisbon", title="Lisbon", text="Lisbon is the capital of Portugal.", source="l.txt"),
    ]
    corpus.add_documents(docs)
    chunks = corpus.chunks()
    rows = [(chunks[0].chunk_id, XSS, f"wrote {XSS}", "Evening Star"), (chunks[0].chunk_id, XSS, "born in", "Lisbon")]
    rows += [(c.chunk_id, "Lisbon", "capital of", "Portugal") for c in chunks if c.doc_id == "d-lisbon"]
    corpus.import_triplets(rows)
    corpus.add_questions([Question(qid="qx", question=f"Where was {XSS} born?", answers=("Lisbon",))])
    corpus.close()


# --- streamlit server --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """`streamlit run app.py` on a free loopback port with the given workspace."""

    def __init__(self, workspace: Path, log_path: Path, extra_env: dict | None = None, launcher: bool = False):
        """`launcher`: start it as `make run` does, through scripts/serve.py (warms at server start)."""
        self.port = free_port()
        env = dict(os.environ, TRIPLET_LENS_WORKSPACE=str(workspace), PYTHONPATH=str(REPO), **(extra_env or {}))
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.started = time.monotonic()
        start = [str(REPO / "scripts" / "serve.py")] if launcher else ["-m", "streamlit", "run", str(REPO / "app.py")]
        self.proc = subprocess.Popen(
            [
                sys.executable,
                *start,
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=REPO,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_healthy(self, timeout: float = 90) -> float:
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return time.monotonic() - self.started
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("streamlit did not become healthy")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


# --- headless chromium over CDP ----------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


#: Set by .ci/run: a missing Chromium fails the browser tests there instead of skipping them.
REQUIRE_BROWSER_ENV = "TRIPLET_LENS_REQUIRE_BROWSER"
NO_CHROMIUM = "Chromium is not installed (Debian: apt-get install -y chromium; `make test` does it as root)"


def needs_chromium():
    """A module mark for the real-browser tests: skipped with the reason when Chromium is missing
    (a fresh machine where `make test` could not install it), so no corpus is built and no server
    started for nothing; under TRIPLET_LENS_REQUIRE_BROWSER (CI) they run and fail instead."""
    return pytest.mark.skipif(find_chromium() is None and not os.environ.get(REQUIRE_BROWSER_ENV), reason=NO_CHROMIUM)


def require_chromium() -> str:
    """Chromium's path, or the test fails (it only gets here when CI requires the browser)."""
    path = find_chromium()
    if path is None:
        pytest.fail(f"{NO_CHROMIUM}; {REQUIRE_BROWSER_ENV} is set, so the browser tests must run")
    return path


def sample_server(tmp_path_factory, embedder, extra=None):
    """Build the sample corpus (and what `extra(root)` adds) in a fresh workspace, start the app on it,
    yield the server, stop it: the body of each module's `server` fixture."""
    root = tmp_path_factory.mktemp("browser_ws")
    build_small_corpus(root, "hotpotqa-sample", questions=1, embedder=embedder)
    if extra is not None:
        extra(root)
    srv = StreamlitServer(root, tmp_path_factory.mktemp("logs") / "streamlit.log")
    srv.wait_healthy()
    yield srv
    srv.stop()


def click_in_section(b: Browser, section: str, label: str, timeout: float = 90) -> None:
    """Click the button `label` inside the expander whose title ends with `section`."""
    b.wait_js(
        "(() => { const d = [...document.querySelectorAll('details')].find(x => x.querySelector('summary')"
        ".innerText.trim().endsWith(" + json.dumps(section) + ")); if (!d) return false; const btn = "
        "[...d.querySelectorAll('button')].find(x => x.innerText.trim() === " + json.dumps(label) + ");"
        " if (!btn || btn.disabled) return false; btn.click(); return true; })()",
        timeout=timeout,
        what=f"button {label!r} in {section!r}",
    )


def open_browser(binary: str, profile_dir: Path, width: int = 1400, height: int = 2200) -> Browser:
    """Headless Chromium on a fresh profile, its viewport `width` x `height` CSS pixels."""
    b = Browser(binary, profile_dir)
    b.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    return b


def _discard(stream) -> None:
    for _ in iter(stream.readline, b""):
        pass


class Browser:
    """One headless Chromium with one page; records console errors, exceptions and dialogs."""

    def __init__(self, binary: str, profile_dir: Path):
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile_dir}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        ws_url = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and ws_url is None:
            assert self.proc.stderr is not None  # started with stderr=PIPE
            line = self.proc.stderr.readline().decode("utf-8", "replace")
            if not line and self.proc.poll() is not None:
                raise RuntimeError("chromium exited before it listened")
            if "DevTools listening on " in line:
                ws_url = line.split("DevTools listening on ", 1)[1].strip()
        if ws_url is None:
            raise RuntimeError("chromium did not print its DevTools address")
        # keep reading stderr so a chatty Chromium never blocks on a full pipe
        threading.Thread(target=_discard, args=(self.proc.stderr,), daemon=True).start()
        self._conn = connect(ws_url, max_size=64 << 20, open_timeout=20)
        self.ws = self._conn.__enter__()
        self._ids = itertools.count(1)
        self.events: list[dict] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.send(domain, session=True)

    def send(self, method: str, params: dict | None = None, session: bool = False, timeout: float = 60) -> dict:
        msg_id = next(self._ids)
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        while True:
            raw = self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))
            data = json.loads(raw)
            if data.get("id") == msg_id:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data.get("result", {})
            if "method" in data:
                self._event(data)

    def _event(self, data: dict) -> None:
        self.events.append(data)
        if data["method"] == "Page.javascriptDialogOpening":
            # a dialog means a script ran (e.g. alert(1)); dismiss it so the page keeps going
            self.ws.send(
                json.dumps(
                    {
                        "id": next(self._ids),
                        "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": True},
                        "sessionId": self.session,
                    }
                )
            )

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                raw = self.ws.recv(timeout=max(0.05, end - time.monotonic()))
            except TimeoutError:
                return
            data = json.loads(raw)
            if "method" in data:
                self._event(data)

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url}, session=True)

    def eval(self, expression: str):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        return res.get("result", {}).get("value")

    def text(self) -> str:
        return self.eval("document.body ? document.body.innerText : ''") or ""

    def wait_text(self, needle: str, timeout: float = 90) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if needle in self.text():
                return time.monotonic() - t0
            self.pump(0.3)
        raise AssertionError(f"{needle!r} did not appear; page text: {self.text()[:1500]!r}")

    def wait_js(self, expression: str, timeout: float = 90, what: str = ""):
        """The value of `expression` once it is truthy (a rerun lands late on a busy machine); an
        AssertionError naming `what`, the last value and the page's text when it never is."""
        end = time.monotonic() + timeout
        value = None
        while time.monotonic() < end:
            value = self.eval(expression)
            if value:
                return value
            self.pump(0.3)
        raise AssertionError(
            f"{what or expression[:80]} never held; last value {value!r}; page: {self.text()[:1200]!r}"
        )

    def click_link(self, label: str) -> bool:
        """Click the first link whose text ends with `label` (the sidebar's page links)."""
        return bool(
            self.eval(
                "(() => { const a = [...document.querySelectorAll('a')].find(x => x.innerText.trim().endsWith("
                + json.dumps(label)
                + ")); if (!a) return false; a.click(); return true; })()"
            )
        )

    def click_button(self, label: str) -> bool:
        return bool(
            self.eval(
                "(() => { const b = [...document.querySelectorAll('button')].find(x => x.innerText.trim() === "
                + json.dumps(label)
                + "); if (!b || b.disabled) return false; b.click(); return true; })()"
            )
        )

    def click_tab(self, label: str) -> bool:
        return bool(
            self.eval(
                "(() => { const t = [...document.querySelectorAll('[role=tab]')].find(x => x.innerText.trim() === "
                + json.dumps(label)
                + "); if (!t) return false; t.click(); return true; })()"
            )
        )

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False}, session=True)
        path.write_bytes(base64.b64decode(data["data"]))

    def console_errors(self) -> list[str]:
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
        return out

    def dialogs(self) -> list[str]:
        return [e["params"].get("message", "") for e in self.events if e["method"] == "Page.javascriptDialogOpening"]

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self._conn.__exit__(None, None, None)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
