"""SIGKILL an extraction run again and again: after every kill the corpus opens, passes
`corpus.check()` and `python -m engine corpus check` (exit 0), and the next run never pays again for
a chunk the killed run had already stored. The finished corpus equals an uninterrupted extraction.

Each kill lands at a named fault point (engine/core/faults.py, `TRIPLET_LENS_FAULT=point@n`): before a
chunk is sent, after its reply arrived but before it is stored, inside the store's transaction,
right after a store, between two pages of the pending list. No sleep decides where a kill lands.

Billing is counted by the worker's reasoner, which appends one line per extract call to a log
before answering (what a provider would bill), from a separate process that the test kills.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from engine.core.faults import ENV as FAULT_ENV
from engine.core.triplet_rules import filter_triplets
from engine.ingest import load_paths
from engine.reasoners.offline import OfflineReasoner
from engine.store import Workspace
from engine.triplets.extraction import run_extraction
from tests.conftest import REPO

N_DOCS = 48
CONCURRENCY = 4
PAGE = 8  # pending chunks read per page in the worker, so a run reads several pages
#: per extract call in the two-process test, so both workers are extracting at the same time; the
#: kill test needs no delay (its kills land at named points) and the loopback provider's latency
#: keeps requests in flight when a kill lands
CALL_SECONDS = 0.15

#: (fault point, n): each run of the kill test is killed the n-th time it reaches the point, in
#: this order; the runs share one corpus, so each starts on what the previous ones left pending
KILLS = [
    ("extract.before_call", 3),  # among the first calls: the third chunk is never sent
    ("extract.after_reply", 6),  # a reply arrived (paid) and died with the process before its store
    ("write.before_commit", 4),  # inside a store's transaction: rolled back, the chunk stays pending
    ("extract.after_store", 10),  # just after the 10th store committed
    ("pending.next_page", 2),  # about to read the third page of the pending list
]

#: One extraction process. `go` (optional) is a file to wait for, so two workers can start together.
WORKER = textwrap.dedent("""
    import hashlib, os, sys, time
    sys.path.insert(0, {repo!r})
    from engine.triplets.extraction import run_extraction
    from engine.llm.base import OFFLINE_MODEL
    from engine.reasoners.offline import OfflineReasoner
    from engine.store import Workspace

    class BilledReasoner:
        # logs each call before answering: a call that was sent is a call that was paid for
        name = OFFLINE_MODEL
        def __init__(self):
            self.inner = OfflineReasoner()
        def extract(self, title, text):
            key = hashlib.sha1((title + "\\n" + text).encode()).hexdigest()[:16]
            fd = os.open({log!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, f"{{os.getpid()}} {{key}}\\n".encode())
            os.close(fd)
            if {call_seconds}:
                time.sleep({call_seconds})
            return self.inner.extract(title, text)

    corpus = Workspace({root!r}).open({name!r})  # no embedder: extraction never embeds
    print("ready", flush=True)
    go = {go!r}
    while go and not os.path.exists(go):
        time.sleep(0.01)
    summary = run_extraction(corpus, BilledReasoner(), concurrency={concurrency}, page={page})
    print(f"done {{summary.chunks_done}} failed {{summary.chunks_failed}}", flush=True)
""")


def chunk_key(chunk) -> str:
    return hashlib.sha1((chunk.title + "\n" + chunk.text).encode()).hexdigest()[:16]


def start_worker(
    root: Path, name: str, log: Path, go: Path | None = None, fault: str = "", call_seconds: float = 0.0
) -> subprocess.Popen:
    """An extraction process, started and ready (its corpus open). `fault` ("point@n") kills it at
    that named point (engine/core/faults.py)."""
    script = WORKER.format(
        repo=str(REPO),
        root=str(root),
        name=name,
        log=str(log),
        go=str(go) if go else "",
        call_seconds=call_seconds,
        concurrency=CONCURRENCY,
        page=PAGE,
    )
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None  # both piped
    line = proc.stdout.readline().strip()
    assert line == "ready", proc.stderr.read()
    return proc


def read_log(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    rows = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [(row[0], row[1]) for row in rows if len(row) == 2]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, embedder):
    """A corpus of real HotpotQA paragraphs, embedded once, with nothing extracted yet."""
    root = tmp_path_factory.mktemp("kill") / "ws"
    batch = load_paths([REPO / "sample_corpora" / "hotpotqa_30.json"])
    corpus = Workspace(root, embedder=embedder).create("pristine")
    corpus.add_documents(batch.documents[:N_DOCS])
    assert corpus.counts().pending == corpus.counts().chunks >= N_DOCS
    corpus.close()
    return root


def clone(pristine_root: Path, dest: Path, name: str, embedder) -> Workspace:
    shutil.copytree(pristine_root / "pristine", dest / name)
    return Workspace(dest, embedder=embedder)


def cli_check(root: Path, name: str, monkeypatch, capsys) -> tuple[int, str]:
    # `python -m engine corpus check NAME`, run in-process so the bundled model loaded by this
    # session serves it (a fresh process would spend ~10 s loading the model)
    from engine.cli import main

    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(root))
    code = main(["corpus", "check", name])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_sigkill_during_extraction_then_resume_never_rebills_a_stored_chunk(
    pristine, tmp_path, embedder, monkeypatch, capsys
):
    root = tmp_path / "ws"
    ws = clone(pristine, root, "killed", embedder)
    key_to_chunk = {chunk_key(c): c.chunk_id for c in ws.open("killed").chunks()}
    log = tmp_path / "billed.log"

    stored_before_run: set[str] = set()
    calls_per_run: list[list[str]] = []
    for point, nth in KILLS:
        seen = len(read_log(log))
        proc = start_worker(root, "killed", log, fault=f"{point}@{nth}")
        try:
            proc.wait(timeout=120)
        finally:
            proc.kill()
        assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr.read()[-2000:])
        billed = [key_to_chunk[k] for _, k in read_log(log)[seen:]]
        calls_per_run.append(billed)
        # the killed run sent nothing for a chunk that an earlier run had stored
        assert not set(billed) & stored_before_run, "a stored chunk was sent to the LLM again"

        corpus = Workspace(root, embedder=embedder).open("killed")
        assert corpus.check() == []
        code, out = cli_check(root, "killed", monkeypatch, capsys)
        assert code == 0 and "killed: ok" in out, out
        statuses = corpus.extraction_statuses()
        stored = {cid for cid, s in statuses.items() if s.status == "done"}
        assert stored_before_run <= stored  # nothing already stored was lost
        assert stored <= stored_before_run | set(billed)  # nothing marked done that was not extracted
        new = stored - stored_before_run
        if point == "extract.before_call":  # killed by the nth chunk's thread before it sent anything
            assert len(billed) <= nth - 1
        if point == "extract.after_reply":  # the nth reply was paid and not stored
            assert len(billed) >= nth and len(new) == nth - 1
        if point == "extract.after_store":  # the kill came right after the nth commit
            assert len(new) == nth
        stored_before_run = stored
        corpus.close()

    assert 0 < len(stored_before_run) < len(key_to_chunk), "the kills should leave a part-finished corpus"

    # resume in this process with an uninterrupted run; count its calls the same way
    corpus = Workspace(root, embedder=embedder).open("killed")
    inner = OfflineReasoner()
    resumed: list[str] = []

    class Counting:
        name = inner.name

        def extract(self, title, text):
            resumed.append(key_to_chunk[hashlib.sha1((title + "\n" + text).encode()).hexdigest()[:16]])
            return inner.extract(title, text)

    summary = run_extraction(corpus, Counting(), concurrency=CONCURRENCY)
    assert summary.ok and corpus.counts().pending == 0 and corpus.counts().failed == 0
    assert not set(resumed) & stored_before_run
    assert sorted(resumed) == sorted(set(key_to_chunk.values()) - stored_before_run)
    corpus.refresh_indexes()
    assert corpus.check() == []

    # every chunk paid at most once, except calls that were in flight at a kill (bounded by the
    # runner's window of 2 x concurrency per kill)
    all_calls = Counter(c for run in calls_per_run for c in run) + Counter(resumed)
    repeated = sum(n - 1 for n in all_calls.values())
    assert set(all_calls) == set(key_to_chunk.values())
    assert repeated <= 2 * CONCURRENCY * len(KILLS)

    # nothing lost or half-stored: the result equals one uninterrupted extraction
    reference = clone(pristine, tmp_path / "ref", "reference", embedder).open("reference")
    run_extraction(reference, OfflineReasoner(), concurrency=CONCURRENCY)
    as_set = lambda c: {(t.subject, t.predicate, t.object, t.chunk_ids) for t in c.triplets()}  # noqa: E731
    assert as_set(corpus) == as_set(reference) and len(as_set(corpus)) > 0
    print(
        f"kills survived {len(KILLS)}; chunks {len(key_to_chunk)}; stored before resume "
        f"{len(stored_before_run)}; in-flight calls repeated {repeated}; stored chunks re-billed 0"
    )


def test_two_processes_extracting_one_corpus_never_bill_a_chunk_twice(pristine, tmp_path, embedder):
    root = tmp_path / "ws"
    ws = clone(pristine, root, "shared", embedder)
    keys = {chunk_key(c) for c in ws.open("shared").chunks()}
    log, go = tmp_path / "billed.log", tmp_path / "go"
    procs = [start_worker(root, "shared", log, go, call_seconds=CALL_SECONDS) for _ in range(2)]
    go.touch()  # both workers opened the corpus and start extracting at the same moment
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        outs.append(out)
    calls = Counter(k for _, k in read_log(log))
    assert set(calls) == keys
    twice = [k for k, n in calls.items() if n > 1]
    assert not twice, f"{len(twice)} chunks were extracted (billed) by both processes"
    corpus = Workspace(root, embedder=embedder).open("shared")
    assert corpus.counts().pending == 0 and corpus.check() == []
    # the lock serialized them: one did all the work, the other found nothing left
    done = sorted(int(o.split()[1]) for o in outs)
    assert done == [0, len(keys)], outs


# --- the same through a real LLM client against the loopback provider -------------------------

LLM_WORKER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.triplets.extraction import run_extraction
    from engine.reasoners import make_reasoner
    from engine.store import Workspace

    reasoner = make_reasoner("openai/gpt-4o-mini", api_base={base!r}, api_key="sk-test", cache_path={cache!r})
    corpus = Workspace({root!r}).open({name!r})
    print("ready", flush=True)
    run_extraction(corpus, reasoner, concurrency={concurrency})
    print("done", flush=True)
""")


#: the kills of the LLM run: a reply cached by the client but not stored (its chunk comes back
#: from the response cache, free), then right after a store
LLM_KILLS = [("extract.after_reply", 5), ("extract.after_store", 8)]


def _wait_until(condition, timeout: float = 30.0) -> None:
    """Poll `condition` (a state the test waits for, not a guess at how long something takes)."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.01)


def test_sigkill_during_llm_extraction_never_rebills_a_stored_chunk(pristine, tmp_path, embedder, monkeypatch, capsys):
    from engine.reasoners import make_reasoner
    from tests.loopback import LoopbackServer

    root = tmp_path / "ws"
    ws = clone(pristine, root, "llm", embedder)
    chunks = ws.open("llm").chunks()
    cache = tmp_path / "llm_cache.sqlite"

    def chunk_of(body) -> str:
        content = str(body["messages"][-1]["content"])
        return next(c.chunk_id for c in chunks if f"{c.title}\n{c.text}" in content)

    def reply(messages, body) -> str:
        if "messages" not in body:  # a body cut short by the kill (the client died sending it): no call
            return ""
        c = next(c for c in chunks if c.chunk_id == chunk_of(body))
        return json.dumps({"triples": [[c.title, "is described by", " ".join(c.text.split()[:3])]]})

    with LoopbackServer(latency=CALL_SECONDS) as srv:
        srv.reply = reply
        stored: set[str] = set()
        for point, nth in LLM_KILLS:
            seen = len(srv.answered)
            script = LLM_WORKER.format(
                repo=str(REPO), base=srv.base_url, cache=str(cache), root=str(root), name="llm", concurrency=CONCURRENCY
            )
            env = {**os.environ, FAULT_ENV: f"{point}@{nth}"}
            proc = subprocess.Popen(
                [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
            try:
                assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
                proc.wait(timeout=120)
            finally:
                proc.kill()
            assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr.read()[-2000:])
            # requests of the dead client still in the server finish before this run's bill is read
            # (a request the kill cut off mid-body never parsed: it holds no messages and is no call)
            _wait_until(lambda: len(srv.answered) == len(srv.chat_requests()))
            billed = [chunk_of(b) for b in srv.answered[seen:]]
            assert not set(billed) & stored, "the provider billed again for a chunk already stored"
            corpus = Workspace(root, embedder=embedder).open("llm")
            assert corpus.check() == []
            code, out = cli_check(root, "llm", monkeypatch, capsys)
            assert code == 0, out
            now = {cid for cid, s in corpus.extraction_statuses().items() if s.status == "done"}
            assert stored <= now
            if point == "extract.after_store":
                assert len(now - stored) == nth
            stored = now
            corpus.close()
        assert 0 < len(stored) < len(chunks)

        seen = len(srv.answered)
        corpus = Workspace(root, embedder=embedder).open("llm")
        reasoner = make_reasoner("openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test", cache_path=cache)
        summary = run_extraction(corpus, reasoner, concurrency=CONCURRENCY)
        resumed = [chunk_of(b) for b in srv.answered[seen:]]
    assert summary.ok and corpus.counts().pending == 0
    assert not set(resumed) & stored
    # chunks answered before a kill but not stored come back from the response cache, free
    assert summary.calls == len(chunks) - len(stored) == summary.cache_hits + len(resumed)
    corpus.refresh_indexes()
    assert corpus.check() == []
    per_chunk = Counter(chunk_of(b) for b in srv.answered)
    assert set(per_chunk) == {c.chunk_id for c in chunks}
    repeated = sum(n - 1 for n in per_chunk.values())
    assert repeated <= 2 * CONCURRENCY * len(LLM_KILLS)
    # every chunk's grounded triple is there, none lost (the same triple from two chunks is one row)
    expected = {
        t
        for c in chunks
        for t in filter_triplets(
            [json.loads(reply([], {"messages": [{"content": f"{c.title}\n{c.text}"}]}))["triples"][0]],
            f"{c.title}\n{c.text}",
        )
    }
    assert {(t.subject, t.predicate, t.object) for t in corpus.triplets()} == expected and expected
    print(
        f"LLM kills survived {len(LLM_KILLS)}; provider requests {len(srv.answered)} for {len(chunks)} chunks; "
        f"repeated {repeated}; cache hits on resume {summary.cache_hits}"
    )
