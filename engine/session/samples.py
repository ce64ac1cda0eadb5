"""The bundled sample corpora, built on first use with the offline reasoner (no network, no key).

Building them takes about a minute of embedding and extraction on a laptop (more on a busy
machine), and the first `make run` used to wait for it before the app started. Now
`sample ensure --background` starts the build in its own process and returns at once; the app
serves its first page meanwhile and follows the build through `build_status`. Each corpus is
built in a hidden staging workspace and renamed into place only when complete, so the app never
opens a half-built sample, and a killed build leaves nothing behind. One builder runs at a time: it
holds a lock file that the OS releases when the builder exits or dies.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.core.config import PROJECT_ROOT
from engine.core.progress import ProgressCallback, Throttle, no_progress

SAMPLE_DIR = PROJECT_ROOT / "sample_corpora"
#: corpus name -> bundled dataset file; the first one is the app's default corpus
SAMPLES: dict[str, str] = {
    "hotpotqa-sample": "hotpotqa_30.json",
    "musique-sample": "musique_10.json",
}
DEFAULT_SAMPLE = "hotpotqa-sample"
#: In the workspace: the running build's progress (JSON), the builders' lock, the background log.
STATUS_FILE = ".sample-build.json"
LOCK_FILE = ".sample-build.lock"
LOG_FILE = ".sample-build.log"


@dataclass(frozen=True)
class BuildStatus:
    """What a sample build is doing, as the app shows it."""

    running: bool
    name: str = ""  # the corpus being built
    position: int = 0  # which of `count` corpora (1-based)
    count: int = 0
    done: int = 0
    total: int = 0
    label: str = ""  # the current step, e.g. "embedding chunks"
    error: str = ""  # why the last build stopped, when it failed

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_status(root: Path, **fields) -> None:
    tmp = root / f"{STATUS_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"pid": os.getpid(), "updated": time.time(), **fields}), encoding="utf-8")
    os.replace(tmp, root / STATUS_FILE)  # a reader sees the old status or the new one, never half


def build_status(root: Path | str) -> BuildStatus:
    """The sample build's status in workspace `root`: running only while its builder is alive."""
    try:
        data = json.loads((Path(root) / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return BuildStatus(running=False)
    alive = bool(data.get("running")) and _pid_alive(int(data.get("pid") or 0))
    fields = {k: data[k] for k in ("name", "position", "count", "done", "total", "label", "error") if k in data}
    if data.get("running") and not alive and not fields.get("error"):
        fields["error"] = "the build stopped before it finished (its process is gone)"
    return BuildStatus(running=alive, **fields)


class _StatusWriter:
    """A progress callback that also records the build's progress for the app (a few times a second)."""

    def __init__(self, root: Path, name: str, position: int, count: int, on_progress: ProgressCallback):
        self.root, self.name, self.position, self.count = root, name, position, count
        self.on_progress = on_progress
        self.throttle = Throttle(0.5)

    def __call__(self, done: int, total: int, label: str = "") -> None:
        self.on_progress(done, total, label)
        if self.throttle.due(done, total):
            self.write(done, total, label)

    def write(self, done: int, total: int, label: str) -> None:
        _write_status(
            self.root,
            running=True,
            name=self.name,
            position=self.position,
            count=self.count,
            done=done,
            total=total,
            label=label,
        )


@contextmanager
def _builder_lock(root: Path) -> Iterator[None]:
    """Held while building; a second builder waits here, then finds the corpora ready."""
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _clear_stale_staging(root: Path) -> None:
    for stale in root.glob(".sample-staging-*"):  # left by a killed build
        pid = stale.name.removeprefix(".sample-staging-").split("-")[0]
        if not (pid.isdigit() and _pid_alive(int(pid))):
            shutil.rmtree(stale, ignore_errors=True)


def build_sample(workspace, name: str, on_progress: ProgressCallback = no_progress) -> str:
    """Create corpus `name` from its bundled file and extract its triplets offline, aside; it
    appears in `workspace` complete or not at all. An unfinished copy left there by an older
    version is kept aside as `.{name}.unfinished-<time>`, not deleted."""
    from engine.ingest import load_paths
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace
    from engine.triplets.extraction import run_extraction

    batch = load_paths([SAMPLE_DIR / SAMPLES[name]])
    if batch.errors:
        raise RuntimeError(f"bundled sample {SAMPLES[name]} did not load: {batch.errors[0][1]}")
    stage_root = workspace.root / f".sample-staging-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        # the caller's embedder (a test's, or the app's already loaded one) serves the staging too
        stage = Workspace(stage_root, embedder=getattr(workspace, "_embedder", None), keep_snapshots=0)
        corpus = stage.create(name)
        try:
            corpus.add_documents(batch.documents, on_progress=on_progress)
            corpus.add_questions(batch.questions)
            run_extraction(corpus, OfflineReasoner(corpus.embedder), on_progress=on_progress)
            corpus.refresh_indexes(on_progress)
            c = corpus.counts()
        finally:
            corpus.close()
        target = workspace.path_of(name)
        if target.exists():
            os.replace(target, target.with_name(f".{name}.unfinished-{time.strftime('%Y%m%dT%H%M%S')}"))
        os.rename(stage.path_of(name), target)
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
    return f"{name}: {c.documents} documents, {c.chunks} chunks, {c.triplets} triplets, {c.questions} questions"


def _ready_line(workspace, name: str) -> str:
    """'name: ready (...)' when the corpus exists and is fully extracted, else ''."""
    if not workspace.exists(name):
        return ""
    corpus = workspace.open(name)
    try:
        c = corpus.counts()
    finally:
        corpus.close()
    if c.chunks and not c.pending and not c.failed:
        return f"{name}: ready ({c.chunks} chunks, {c.triplets} triplets, {c.questions} questions)"
    return ""


def missing_samples(workspace, names: list[str] | None = None) -> list[str]:
    """The sample corpora not (completely) built yet."""
    return [n for n in names or list(SAMPLES) if not _ready_line(workspace, n)]


def ensure_sample_corpora(
    workspace, on_progress: ProgressCallback = no_progress, names: list[str] | None = None
) -> Iterator[str]:
    """Build each sample corpus that is missing or unfinished; report one line per corpus. Waits
    for a build already running (then finds its corpora ready)."""
    root = workspace.root
    wanted = names or list(SAMPLES)
    with _builder_lock(root):
        _clear_stale_staging(root)
        todo = missing_samples(workspace, wanted)
        for name in wanted:
            if name not in todo:
                yield _ready_line(workspace, name)
                continue
            writer = _StatusWriter(root, name, todo.index(name) + 1, len(todo), on_progress)
            writer.write(0, 0, "loading the bundled file")
            try:
                line = "built " + build_sample(workspace, name, writer)
            except BaseException as e:
                _write_status(root, running=False, name=name, error=f"{type(e).__name__}: {e}")
                raise
            _write_status(root, running=len(todo) > todo.index(name) + 1, name=name, done=1, total=1)
            yield line


def start_background_build(workspace) -> str:
    """Start `python -m engine sample ensure` in its own process when a sample is missing and no
    build runs yet; return at once with a line saying what happens. Its output goes to
    `<workspace>/.sample-build.log`, its progress to `build_status`."""
    root = workspace.root
    if build_status(root).running:
        return "the sample corpora are already being built in the background"
    todo = missing_samples(workspace)
    if not todo:
        return "sample corpora ready: " + ", ".join(SAMPLES)
    log = open(root / LOG_FILE, "ab")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine", "sample", "ensure"],
            cwd=PROJECT_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C on `make run` stops the app, not a build half-way
            env=dict(os.environ, TRIPLET_LENS_WORKSPACE=str(root)),
        )
    finally:
        log.close()
    # the app may look before the builder writes its first progress: say "running" for it now
    with open(root / f"{STATUS_FILE}.{proc.pid}.tmp", "w", encoding="utf-8") as f:
        json.dump(
            {"pid": proc.pid, "running": True, "name": todo[0], "position": 1, "count": len(todo), "label": "starting"},
            f,
        )
    os.replace(root / f"{STATUS_FILE}.{proc.pid}.tmp", root / STATUS_FILE)
    return (
        f"building {', '.join(todo)} in the background (process {proc.pid}); the app shows the progress, "
        f"the log is {root / LOG_FILE}"
    )


def sample_path(name: str) -> Path:
    return SAMPLE_DIR / SAMPLES[name]
