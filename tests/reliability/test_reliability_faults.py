"""Guarantee 3, provider faults: an evaluation against a provider that fails one request in five
(429, 500, timeouts, truncated JSON, empty replies) completes, every fault is accounted for in
the saved traces, and a bad key stops the run after one request with one message.

The corpus is the first 5 HotpotQA questions with their 50 paragraphs, triplets extracted by the
offline rules (free); each question is asked 5 times under distinct ids, so `standard` and
`t2rag` run 25 questions each: 50 question runs against the faulty loopback server.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter

import pytest

from engine.llm.base import LLMCall
from engine.methods import load_result
from engine.reasoners import make_reasoner
from engine.reasoners.offline import OfflineReasoner
from engine.triplets.extraction import run_extraction
from tests._eval_helpers import make_hotpot_corpus
from tests.loopback import LoopbackServer

FAULTS = ("429", "500", "hang", "truncated", "empty")
FAULT_RATE = 0.2
COPIES = 5  # each of the 5 questions asked under 5 ids -> 25 questions per method


def fast_client_opts() -> dict:
    # small backoff so 50 questions with ~40 faults stay within seconds; a hang costs one timeout
    return {"timeout": 0.6, "max_attempts": 4, "backoff": 0.01, "max_backoff": 0.05}


def scripted_provider(messages: list[dict], body: dict) -> str:
    """Plausible replies for each job, told apart by the system prompt."""
    system = str(messages[0].get("content", "")) if messages else ""
    user = str(messages[-1].get("content", ""))
    if system.startswith("Break the question"):
        words = re.findall(r"[A-Z][\w'-]+(?: [A-Z][\w'-]+)*", user.split("<question>")[-1])
        subject = words[0] if words else "it"
        return json.dumps({"triplets": [[subject, "related to", "?x"], ["?x", "answer", "?y"]]})
    if system.startswith("You resolve the unknowns"):
        return json.dumps({"bindings": {"?x": "Arthur", "?y": "Paris"}, "triplets": [["Arthur", "answer", "Paris"]]})
    if system.startswith("Your task is to construct an RDF graph"):
        doc = user.split("<document>")[-1].split("</document>")[0].split()
        return json.dumps({"triples": [[doc[0], "is", " ".join(doc[1:3])]] if len(doc) > 3 else []})
    return "Paris"


def fault_plan(n: int, seed: int = 7) -> list[str]:
    """One entry per request in arrival order: "" for a normal reply, else the fault to inject."""
    rng = random.Random(seed)
    return [rng.choice(FAULTS) if rng.random() < FAULT_RATE else "" for _ in range(n)]


def all_calls(obj) -> list[LLMCall]:
    """Every LLMCall anywhere inside a (loaded) trace, whatever the method's trace type."""
    out: list[LLMCall] = []
    if isinstance(obj, LLMCall):
        return [obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            out += all_calls(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            out += all_calls(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            out += all_calls(v)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder):
    from engine.store import Workspace

    ws = Workspace(tmp_path_factory.mktemp("ws"), embedder=embedder)
    corpus = make_hotpot_corpus(ws, n=5, name="hp5")
    summary = run_extraction(corpus, OfflineReasoner(embedder=embedder), concurrency=1)
    assert summary.ok and summary.triplets > 0
    # cycle the questions under new ids to reach 25 per method
    base = corpus.questions()
    corpus.add_questions([dataclasses.replace(q, qid=f"{q.qid}#{i}") for i in range(1, COPIES) for q in base])
    assert len(corpus.questions()) == 5 * COPIES
    return corpus


def test_eval_of_50_question_runs_completes_under_20pct_faults_and_every_fault_is_in_a_trace(corpus, tmp_path):
    from engine.eval.harness import read_records, run_eval

    with LoopbackServer(hang_seconds=1.5) as srv:
        srv.reply = scripted_provider
        plan = fault_plan(2000)
        srv.faults.extend(plan)
        reasoner = make_reasoner(
            "openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-faults-123456", **fast_client_opts()
        )
        summary = run_eval(corpus, ["standard", "t2rag"], reasoner, out_dir=tmp_path / "run", concurrency=4)
        n_requests = len(srv.chat_requests())
    injected = sum(1 for f in plan[:n_requests] if f)
    kinds = Counter(f for f in plan[:n_requests] if f)

    assert summary.stopped == ""
    assert set(kinds) == set(FAULTS)  # every kind of fault was served at least once
    assert [m.n_done for m in summary.methods] == [25, 25]
    calls: list[LLMCall] = []
    failed_results = 0
    for name in ("standard", "t2rag"):
        records = read_records(tmp_path / "run" / f"{name}.jsonl")
        assert len(records) == 25  # no question lost
        for rec in records.values():
            assert rec.trace, f"{name} {rec.qid} has no saved trace ({rec.error})"
            result = load_result(tmp_path / "run" / rec.trace)
            calls += all_calls(result.trace)
            failed_results += bool(result.error)
            # a failed question says so both in its record and in its trace
            assert bool(rec.error) == bool(result.error)
    # Every provider request is one attempt of a call in some trace: nothing happened off the record.
    assert sum(c.attempts for c in calls) == n_requests
    # Each fault either cost a retry (attempts - 1) or, when retries ran out, left its call with an error.
    absorbed = sum(c.attempts - 1 for c in calls)
    visible = [c for c in calls if c.error]
    assert absorbed + len(visible) == injected
    assert injected >= 20  # the plan really hit the run (about 1 request in 5)
    assert all(c.error for c in calls if c.attempts == 4 and not c.response)
    # and each visible failure says what happened in words a user can act on
    readable = re.compile(r"rate limited|no reply within|provider error|empty reply")
    assert all(readable.search(c.error) for c in visible), [c.error for c in visible]
    print(
        f"\nfaults: {n_requests} requests, {injected} faults injected ({dict(kinds)}), {absorbed} absorbed by retries, "
        f"{len(visible)} calls failed visibly, {failed_results} question results with Result.error, "
        f"0 questions lost of 50"
    )


def test_extraction_under_20pct_faults_stores_or_marks_every_chunk(embedder, tmp_path):
    from engine.store import Workspace

    corpus = make_hotpot_corpus(Workspace(tmp_path / "ws", embedder=embedder), n=2, name="ex")
    n_chunks = len(corpus.chunks())
    with LoopbackServer(hang_seconds=1.5) as srv:
        srv.reply = scripted_provider
        plan = fault_plan(500, seed=3)
        srv.faults.extend(plan)
        # two attempts only, so some chunks do run out of retries and must be marked failed
        opts = {**fast_client_opts(), "max_attempts": 2}
        reasoner = make_reasoner("openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-faults-123456", **opts)
        summary = run_extraction(corpus, reasoner, concurrency=4)
        n_requests = len(srv.chat_requests())
    injected = sum(1 for f in plan[:n_requests] if f)
    statuses = corpus.extraction_statuses()
    done = [s for s in statuses.values() if s.status == "done"]
    failed = [s for s in statuses.values() if s.status == "failed"]
    assert summary.stopped == "" and injected > 0
    assert len(done) + len(failed) == n_chunks == summary.chunks_done + summary.chunks_failed  # none lost
    assert all(s.error for s in failed)  # each failure says why, in the corpus
    assert len(corpus.pending_chunks()) == len(failed)  # failed chunks stay pending for a rerun
    print(
        f"\nextraction: {n_chunks} chunks, {n_requests} requests, {injected} faults, "
        f"{len(done)} done, {len(failed)} marked failed with a reason, 0 lost"
    )


def test_a_bad_key_stops_the_eval_after_one_request_with_one_message(corpus, tmp_path):
    from engine.eval.harness import read_records, run_eval

    with LoopbackServer() as srv:
        srv.fail_after, srv.fail_mode = 0, "401"
        reasoner = make_reasoner(
            "openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-wrong-123456", **fast_client_opts()
        )
        summary = run_eval(corpus, ["standard", "t2rag"], reasoner, out_dir=tmp_path / "run")
        n_requests = len(srv.chat_requests())
    assert n_requests == 1  # not 50 requests, not 4 retries
    assert "authentication failed" in summary.stopped and summary.stopped.count("authentication failed") == 1
    assert [m.n_done for m in summary.methods] == [0, 0]
    # nothing recorded as done: a rerun with the right key redoes every question
    assert read_records(tmp_path / "run" / "standard.jsonl") == {}


def test_a_bad_key_stops_a_concurrent_eval_within_the_requests_in_flight(corpus, tmp_path):
    from engine.eval.harness import run_eval

    with LoopbackServer() as srv:
        srv.fail_after, srv.fail_mode = 0, "401"
        reasoner = make_reasoner(
            "openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-wrong-123456", **fast_client_opts()
        )
        summary = run_eval(corpus, ["t2rag", "standard"], reasoner, out_dir=tmp_path / "run", concurrency=4)
        n_requests = len(srv.chat_requests())
    assert n_requests <= 4  # at most the questions already in flight
    assert "authentication failed" in summary.stopped


def test_a_bad_key_stops_extraction_with_one_message(embedder, tmp_path):
    from engine.store import Workspace

    corpus = make_hotpot_corpus(Workspace(tmp_path / "ws", embedder=embedder), n=2, name="ex")
    with LoopbackServer() as srv:
        srv.fail_after, srv.fail_mode = 0, "401"
        reasoner = make_reasoner(
            "openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-wrong-123456", **fast_client_opts()
        )
        summary = run_extraction(corpus, reasoner, concurrency=4)
        n_requests = len(srv.chat_requests())
    assert n_requests <= 2 * 4  # the bounded window in flight, not one per chunk (20 chunks)
    assert "authentication failed" in summary.stopped
    assert summary.chunks_failed == 0  # a bad key is not the chunks' fault: all stay pending, unmarked
    assert len(corpus.pending_chunks()) == len(corpus.chunks())


def test_a_bad_key_in_the_cli_eval_is_one_message_and_exit_1(corpus, tmp_path, monkeypatch, capsys):
    from engine.cli import main

    with LoopbackServer() as srv:
        srv.fail_after, srv.fail_mode = 0, "401"
        monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(corpus.path.parent))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-wrong-123456")
        code = main(
            [
                "eval",
                corpus.name,
                "--methods",
                "standard,t2rag",
                "--out",
                str(tmp_path / "run"),
                "--model",
                "openai/gpt-4o-mini",
                "--api-base",
                srv.base_url,
            ]
        )
        n_requests = len(srv.chat_requests())
    out = capsys.readouterr()
    assert code == 1 and n_requests == 1
    assert out.err.count("authentication failed") == 1 and "OPENAI_API_KEY" in out.err
    assert "Traceback" not in out.err
