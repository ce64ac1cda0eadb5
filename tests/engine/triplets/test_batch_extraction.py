"""Triplet extraction through the batch API (engine.extraction_batch) against the loopback batch
server (tests/loopback_batch.py): the same prompts and the same stored triplets as the normal
extraction at the batch price; failed, expired and partly answered batches leave exactly their
unanswered chunks pending; a run killed after submitting, after creating a batch whose id it never
stored, and in the middle of an import resumes with 0 chunks lost and 0 billed twice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from engine.core.faults import ENV as FAULT_ENV
from engine.extraction_batch import STATE_FILE, BatchAPI, run_batch_extraction
from engine.ingest import load_paths
from engine.llm.base import LLMError
from engine.store import Workspace
from engine.triplets.extraction import run_extraction
from tests.conftest import REPO
from tests.loopback_batch import BatchLoopbackServer

N_DOCS = 24
MODEL = "openai/gpt-4o-mini"
KEY = "sk-test-batch-key-123456"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, embedder):
    """A corpus of real HotpotQA paragraphs (bundled sample), embedded once, nothing extracted."""
    root = tmp_path_factory.mktemp("batch") / "ws"
    batch = load_paths([REPO / "sample_corpora" / "hotpotqa_30.json"])
    corpus = Workspace(root, embedder=embedder).create("pristine")
    corpus.add_documents(batch.documents[:N_DOCS])
    assert corpus.counts().pending == corpus.counts().chunks >= N_DOCS
    corpus.close()
    return root


def clone(pristine_root: Path, dest: Path, name: str, embedder):
    shutil.copytree(pristine_root / "pristine", dest / name)
    return Workspace(dest, embedder=embedder).open(name)


def scripted(chunks):
    """The provider's reply to an extraction prompt: one grounded triple naming the chunk."""

    def chunk_of(body) -> str:
        content = str(body["messages"][-1]["content"])
        return next(c.chunk_id for c in chunks if f"{c.title}\n{c.text}" in content)

    def reply(messages, body) -> str:
        c = next(c for c in chunks if c.chunk_id == chunk_of(body))
        return json.dumps({"triples": [[c.title, "is described by", " ".join(c.text.split()[:3])]]})

    return reply, chunk_of


def run(corpus, srv, **kw):
    kw.setdefault("poll_seconds", 0)
    return run_batch_extraction(corpus, BatchAPI(MODEL, srv.base_url, KEY), model=MODEL, **kw)


def expected_triples(chunks) -> set[tuple[str, str, str]]:
    """What the scripted replies give after the normal triplet filters, over every chunk."""
    from engine.core.triplet_rules import filter_triplets

    reply, _ = scripted(chunks)
    out = set()
    for c in chunks:
        body = {"messages": [{"content": f"{c.title}\n{c.text}"}]}
        out |= set(filter_triplets(json.loads(reply([], body))["triples"], f"{c.title}\n{c.text}"))
    return out


def triplet_set(corpus):
    return {(t.subject, t.predicate, t.object, t.chunk_ids) for t in corpus.triplets()}


def pending(corpus) -> set[str]:
    return {cid for cid, s in corpus.extraction_statuses().items() if s.status != "done"}


def test_batch_extraction_sends_the_normal_prompts_and_stores_the_same_triplets_at_the_batch_price(
    pristine, tmp_path, embedder
):
    from engine.reasoners import make_reasoner

    normal = clone(pristine, tmp_path, "normal", embedder)
    batched = clone(pristine, tmp_path, "batched", embedder)
    chunks = normal.chunks()
    with BatchLoopbackServer() as srv:
        srv.reply, chunk_of = scripted(chunks)
        srv.polls_before_done = 2  # each batch is polled in progress twice before it finishes
        reasoner = make_reasoner(MODEL, api_base=srv.base_url, api_key=KEY)
        ref = run_extraction(normal, reasoner, concurrency=4)
        chat_bodies = {chunk_of(b): b for b in srv.answered}
        summary = run(batched, srv, batch_size=7)
        every = [json.loads(x) for data in srv.files.values() for x in data.decode().splitlines() if x.strip()]
        lines = [x for x in every if "url" in x]  # the uploaded request lines (output lines have none)
    assert ref.ok and summary.ok and summary.chunks_done == len(chunks) and pending(batched) == set()
    assert summary.batches_submitted == len(srv.batches) == -(-len(chunks) // 7)
    assert srv.billed == Counter({f"{c.chunk_id}#extract": 1 for c in chunks})
    # every request is the chat request the normal extraction sent (the model without its prefix)
    for line in lines:
        sent = chat_bodies[line["custom_id"].rpartition("#")[0]]
        for key in ("messages", "temperature", "max_tokens", "response_format"):
            assert line["body"][key] == sent[key], key
        assert line["body"]["model"] == "gpt-4o-mini" and line["url"] == "/v1/chat/completions"
    assert len(lines) == len(chunks)
    assert triplet_set(batched) == triplet_set(normal) and triplet_set(batched)
    # the same tokens, at litellm's batch price for gpt-4o-mini: half the normal bill
    assert summary.prompt_tokens == ref.prompt_tokens and summary.completion_tokens == ref.completion_tokens
    assert ref.cost and summary.cost == pytest.approx(ref.cost / 2)
    assert KEY not in (batched.path / STATE_FILE).read_bytes().decode("latin-1")


def test_failed_expired_and_partial_batches_leave_exactly_their_unanswered_chunks_pending(pristine, tmp_path, embedder):
    corpus = clone(pristine, tmp_path, "modes", embedder)
    chunks = corpus.chunks()
    size = -(-len(chunks) // 4)
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.batch_modes.extend(["completed", "failed", "expired", "partial"])
        srv.error_text = f"upstream rejected the request with header Authorization: Bearer {KEY}"
        first = run(corpus, srv, batch_size=size)
        assert KEY not in repr(first.failures) and any("Bearer ***" in e for _, e in first.failures)
        groups = [[cid.rpartition("#")[0] for cid in b] for b in srv.batches]
        assert len(groups) == 4
        expected = (
            set(groups[1]) | set(groups[2][len(groups[2]) // 2 :]) | {c for i, c in enumerate(groups[3]) if i % 3 == 1}
        )
        assert pending(corpus) == expected and expected
        assert first.chunks_requeued == len(expected) and first.chunks_failed == 0 and not first.ok
        assert [s for _, s in first.closed] == ["completed", "failed", "expired", "completed"]
        assert first.chunks_done == len(chunks) - len(expected)
        assert any("batch_expired" in e or "could not be executed" in e for _, e in first.failures)
        # the next run sends only those chunks, in one batch, and finishes the corpus
        second = run(corpus, srv, batch_size=len(chunks))
        assert {c.rpartition("#")[0] for c in srv.batches[-1]} == expected and len(srv.batches) == 5
    assert second.ok and second.chunks_done == len(expected) and pending(corpus) == set()
    assert set(srv.billed.values()) == {1} and len(srv.billed) == len(chunks)


def test_a_rerun_while_batches_run_polls_them_and_never_resubmits(pristine, tmp_path, embedder):
    corpus = clone(pristine, tmp_path, "nowait", embedder)
    chunks = corpus.chunks()
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.polls_before_done = 3
        one = run(corpus, srv, batch_size=10, wait=False)
        assert one.batches_open == one.batches_submitted == len(srv.batches) > 1 and one.chunks_done == 0
        # the normal extraction (CLI without --batch, the app) leaves chunks in an open batch alone
        from engine.reasoners.offline import OfflineReasoner

        asked: list[str] = []

        class Counting(OfflineReasoner):
            def extract(self, title, text):
                asked.append(title)
                return super().extract(title, text)

        normal = run_extraction(corpus, Counting(), concurrency=2)
        assert asked == [] and normal.chunks_done == 0 and normal.chunks_skipped == len(chunks)
        with BatchLoopbackServer() as other:  # open batches live at one endpoint: another one is refused
            with pytest.raises(ValueError, match="rerun with --api-base"):
                run(corpus, other, batch_size=10)
            assert other.files == {} and other.batches == []
        two = run(corpus, srv, batch_size=10, wait=False)
        assert two.batches_submitted == 0 and two.chunks_held == len(chunks) and two.batches_resumed == len(srv.batches)
        three = run(corpus, srv, batch_size=10)
    assert three.batches_submitted == 0 and three.batches_open == 0 and three.chunks_done == len(chunks)
    assert len(srv.batches) == one.batches_submitted and set(srv.billed.values()) == {1}


def test_an_endpoint_the_operator_did_not_configure_gets_no_environment_key(tmp_path, monkeypatch):
    from engine.llm.litellm_call import EndpointPolicy, set_policy

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with BatchLoopbackServer() as srv:
        previous = set_policy(EndpointPolicy.strict())
        try:
            with pytest.raises(LLMError) as err:
                BatchAPI(MODEL, srv.base_url).upload(b"{}\n")
            assert err.value.kind == "auth" and KEY not in str(err.value)
            assert srv.headers == [] and srv.files == {}  # refused before anything was sent
            BatchAPI(MODEL, srv.base_url, "sk-typed-by-the-user").upload(b"{}\n")  # a key of its own may go
        finally:
            set_policy(previous)
        assert [h["authorization"] for h in srv.headers] == ["Bearer sk-typed-by-the-user"]
        assert len(srv.files) == 1


# --- killed and resumed -----------------------------------------------------------------------

WORKER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from engine.extraction_batch import BatchAPI, run_batch_extraction
    from engine.store import Workspace

    corpus = Workspace({root!r}).open({name!r})  # no embedder: extraction never embeds
    api = BatchAPI({model!r}, {base!r}, {key!r})
    s = run_batch_extraction(corpus, api, model={model!r}, batch_size={size}, poll_seconds=0.01)
    print("done", s.chunks_done, flush=True)
""")

#: each run is killed the n-th time it reaches the point; the runs share one corpus and one server
KILLS = [
    ("batch.after_create", 2),  # the 2nd batch exists at the provider, its id not stored
    ("batch.after_submit", 2),  # two more batch ids stored (the found 2nd batch is not made again)
    ("batch.after_import", 4),  # four chunks of a finished batch stored, the rest of it not
]


def test_killed_after_submit_and_mid_import_then_resumed_loses_and_double_bills_nothing(
    pristine, tmp_path, embedder, monkeypatch, capsys
):
    corpus = clone(pristine, tmp_path, "killed", embedder)
    chunks = corpus.chunks()
    corpus.close()
    size = -(-len(chunks) // 4)
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.polls_before_done = 1
        done_before: set[str] = set()
        for point, nth in KILLS:
            script = WORKER.format(
                repo=str(REPO), root=str(tmp_path), name="killed", model=MODEL, base=srv.base_url, key=KEY, size=size
            )
            env = {**os.environ, FAULT_ENV: f"{point}@{nth}"}
            proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
            assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr[-2000:])
            c = Workspace(tmp_path, embedder=embedder).open("killed")
            assert c.check() == []
            done = set(c.extraction_statuses()) - pending(c)
            assert done_before <= done
            if point == "batch.after_import":
                assert len(done - done_before) == nth
            done_before = done
            c.close()
        assert len(srv.batches) == 4  # the batch whose id was lost was found again, not made twice
        assert 0 < len(done_before) < len(chunks)
        corpus = Workspace(tmp_path, embedder=embedder).open("killed")
        last = run(corpus, srv, batch_size=size)
    assert last.ok and last.batches_submitted == 0 and pending(corpus) == set()
    sent = Counter(cid for b in srv.batches for cid in b)
    assert set(sent.values()) == {1} and len(sent) == len(chunks)  # every chunk in exactly one batch
    assert srv.billed == Counter({f"{c.chunk_id}#extract": 1 for c in chunks})  # 0 billed twice, 0 lost
    assert corpus.check() == []
    assert {(t.subject, t.predicate, t.object) for t in corpus.triplets()} == expected_triples(chunks)
    print(
        f"kills survived {len(KILLS)}; chunks {len(chunks)}; batches {len(srv.batches)}; "
        f"requests billed {sum(srv.billed.values())}; billed twice 0"
    )


def test_cli_estimate_shows_both_prices_and_extract_batch_runs_end_to_end(
    pristine, tmp_path, embedder, monkeypatch, capsys
):
    from engine.cli import main

    corpus = clone(pristine, tmp_path, "cli", embedder)
    chunks = corpus.chunks()
    corpus.close()
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert main(["extract", "cli", "--model", MODEL, "--estimate"]) == 0
    out = capsys.readouterr().out
    normal, batch = (float(x) for x in re.findall(r"\$([0-9.]+)", out))
    assert (
        "through the batch API" in out
        and "litellm's batch price" in out
        and batch == pytest.approx(normal / 2, abs=2e-4)
    )
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.batch_modes.append("failed")
        args = [
            "extract",
            "cli",
            "--model",
            MODEL,
            "--api-base",
            srv.base_url,
            "--batch",
            "--batch-size",
            "10",
            "--poll-seconds",
            "0",
        ]
        assert main(args) == 1  # the first batch failed: its chunks are pending, the command says so
        out = capsys.readouterr()
        assert "were not answered" in out.out and "rerun the same command" in out.err and KEY not in out.out + out.err
        assert main(args) == 0
        out = capsys.readouterr().out
    assert "0 still running" in out and KEY not in out
    corpus = Workspace(tmp_path, embedder=embedder).open("cli")
    assert pending(corpus) == set() and set(srv.billed.values()) == {1} and len(srv.billed) == len(chunks)
    assert corpus.check() == []


def test_a_batch_the_endpoint_no_longer_knows_puts_its_chunks_back_to_pending(pristine, tmp_path, embedder):
    corpus = clone(pristine, tmp_path, "missing", embedder)
    chunks = corpus.chunks()
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.polls_before_done = 1
        first = run(corpus, srv, batch_size=len(chunks), wait=False)
        assert first.batches_open == 1 and pending(corpus) == {c.chunk_id for c in chunks}
        srv.batch_objects.clear()  # deleted at the provider (or past its retention) before it ran
        second = run(corpus, srv, batch_size=len(chunks), wait=False)
        assert second.batches_submitted == 0 and second.closed == [(srv.batch_order[0], "missing")]
        assert second.chunks_requeued == len(chunks) and not second.ok
        assert any("no batch" in e for _, e in second.failures)
        third = run(corpus, srv, batch_size=len(chunks))  # sent again, once, and collected
    assert third.ok and third.batches_submitted == 1 and pending(corpus) == set()
    assert srv.billed == Counter({f"{c.chunk_id}#extract": 1 for c in chunks})


def test_a_batch_created_but_answered_with_an_error_is_found_again_not_made_twice(pristine, tmp_path, embedder):
    corpus = clone(pristine, tmp_path, "lostreply", embedder)
    chunks = corpus.chunks()
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted(chunks)
        srv.faults.extend(["created_500", "503"])  # 1st batch made but its reply lost; 2nd refused once
        summary = run(corpus, srv, batch_size=-(-len(chunks) // 2))
    assert summary.ok and summary.batches_submitted == 2 and len(srv.batches) == 2
    assert pending(corpus) == set()
    assert srv.billed == Counter({f"{c.chunk_id}#extract": 1 for c in chunks})


# --- json+ner: two phases -----------------------------------------------------------------------


def scripted_ner(chunks):
    """Phase 1 (the named-entity prompt) names the chunk's title; phase 2 (the triple prompt) gives a
    triple only when its prompt lists that entity, so a stored triple proves the NER reply reached it."""
    from engine.reasoners import prompts

    def chunk_of(body) -> str:
        content = str(body["messages"][-1]["content"])
        return next(c.chunk_id for c in chunks if f"{c.title}\n{c.text}" in content)

    def reply(messages, body) -> str:
        c = next(c for c in chunks if c.chunk_id == chunk_of(body))
        if body["messages"][0]["content"] == prompts.NER.system:
            return json.dumps({"named_entities": [c.title]})
        listed = json.dumps({"named_entities": [c.title]}, ensure_ascii=False) in body["messages"][-1]["content"]
        return json.dumps({"triples": [[c.title, "is described by", " ".join(c.text.split()[:3])]] if listed else []})

    return reply, chunk_of


def billed_both_phases_once(srv, chunks) -> bool:
    return srv.billed == Counter({f"{c.chunk_id}#{step}": 1 for c in chunks for step in ("ner", "extract")})


def test_json_ner_batches_send_both_normal_prompts_and_store_the_same_triplets_at_the_batch_price(
    pristine, tmp_path, embedder
):
    from engine.reasoners import make_reasoner, prompts

    normal = clone(pristine, tmp_path, "nernormal", embedder)
    batched = clone(pristine, tmp_path, "nerbatched", embedder)
    chunks = normal.chunks()
    with BatchLoopbackServer() as srv:
        srv.reply, chunk_of = scripted_ner(chunks)
        srv.polls_before_done = 1
        reasoner = make_reasoner(MODEL, api_base=srv.base_url, api_key=KEY, extraction_style="json+ner")
        ref = run_extraction(normal, reasoner, concurrency=4)
        chat_bodies = {(chunk_of(b), b["messages"][0]["content"]): b for b in srv.answered}
        srv.billed.clear()
        summary = run(batched, srv, batch_size=10, style="json+ner")
        lines = [json.loads(x) for data in srv.files.values() for x in data.decode().splitlines() if x.strip()]
        lines = [x for x in lines if "url" in x]
    assert ref.ok and summary.ok and summary.chunks_done == len(chunks) and pending(batched) == set()
    # three NER batches, then three triple batches (one run waits through both phases)
    assert summary.batches_submitted == len(srv.batches) == 2 * -(-len(chunks) // 10)
    assert billed_both_phases_once(srv, chunks)
    for line in lines:  # each request is the chat request the normal json+ner extraction sent
        cid, step = line["custom_id"].rpartition("#")[::2]
        sent = chat_bodies[(cid, line["body"]["messages"][0]["content"])]
        assert (
            line["body"]["messages"] == sent["messages"] and line["body"]["response_format"] == sent["response_format"]
        )
        assert step == ("ner" if sent["messages"][0]["content"] == prompts.NER.system else "extract")
    assert len(lines) == 2 * len(chunks)
    assert triplet_set(batched) == triplet_set(normal) and triplet_set(batched)
    assert summary.calls == ref.calls == 2 * len(chunks)
    assert summary.prompt_tokens == ref.prompt_tokens and summary.completion_tokens == ref.completion_tokens
    assert ref.cost and summary.cost == pytest.approx(ref.cost / 2)


def test_json_ner_unanswered_requests_are_asked_again_only_in_their_own_phase(pristine, tmp_path, embedder):
    corpus = clone(pristine, tmp_path, "nermodes", embedder)
    chunks = corpus.chunks()
    half = -(-len(chunks) // 2)
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted_ner(chunks)
        # NER: the first batch fails, the second completes; its triple batch then fails
        srv.batch_modes.extend(["failed", "completed", "failed"])
        first = run(corpus, srv, batch_size=half, style="json+ner")
        assert [s for _, s in first.closed] == ["failed", "completed", "failed"] and not first.ok
        assert pending(corpus) == {c.chunk_id for c in chunks} and first.chunks_done == 0
        second = run(corpus, srv, batch_size=len(chunks), style="json+ner")
    assert second.ok and pending(corpus) == set()
    assert billed_both_phases_once(srv, chunks)  # the answered NER half was not asked again
    assert {(t.subject, t.predicate, t.object) for t in corpus.triplets()} == expected_triples(chunks)


WORKER_NER = WORKER.replace("batch_size={size},", "batch_size={size}, style='json+ner',")

#: json+ner runs killed in each phase, in turn; one corpus, one server
KILLS_NER = [
    ("batch.after_submit", 2),  # phase 1: two NER batch ids stored
    ("batch.ner_before_commit", 1),  # phase 1: a finished NER batch's replies half-written
    ("batch.after_ner_import", 2),  # phase 1: two NER batches' replies stored, no triple batch yet
    ("batch.after_create", 1),  # phase 2: a triple batch made, its id not stored
    ("batch.after_import", 3),  # phase 2: three chunks of a finished triple batch stored
]


def test_json_ner_killed_in_each_phase_then_resumed_loses_and_double_bills_nothing(pristine, tmp_path, embedder):
    from engine.triplets.batch_state import BatchState

    corpus = clone(pristine, tmp_path, "nerkilled", embedder)
    chunks = corpus.chunks()
    corpus.close()
    size = -(-len(chunks) // 4)
    with BatchLoopbackServer() as srv:
        srv.reply, _ = scripted_ner(chunks)
        srv.polls_before_done = 1
        done_before: set[str] = set()
        for point, nth in KILLS_NER:
            script = WORKER_NER.format(
                repo=str(REPO), root=str(tmp_path), name="nerkilled", model=MODEL, base=srv.base_url, key=KEY, size=size
            )
            env = {**os.environ, FAULT_ENV: f"{point}@{nth}"}
            proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
            assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr[-2000:])
            c = Workspace(tmp_path, embedder=embedder).open("nerkilled")
            assert c.check() == []
            done = set(c.extraction_statuses()) - pending(c)
            assert done_before <= done
            if point == "batch.after_import":
                assert len(done - done_before) == nth
            elif point != "batch.after_create":
                assert done == set()  # phase 1: nothing stored in the corpus yet
            done_before = done
            c.close()
        corpus = Workspace(tmp_path, embedder=embedder).open("nerkilled")
        last = run(corpus, srv, batch_size=size, style="json+ner")
    assert last.ok and pending(corpus) == set()
    ner = [b for b in srv.batches if b[0].endswith("#ner")]
    triple = [b for b in srv.batches if b[0].endswith("#extract")]
    assert len(ner) == 4 and len(triple) == 4  # the batch whose id was lost was found again, not made twice
    assert billed_both_phases_once(srv, chunks)  # 0 chunks lost, 0 billed twice, in either phase
    assert corpus.check() == []
    assert {(t.subject, t.predicate, t.object) for t in corpus.triplets()} == expected_triples(chunks)
    state = BatchState(corpus.path / STATE_FILE)
    assert state.ner_replies() == {} and state.held_chunk_ids() == set()  # nothing left behind
    state.close()
