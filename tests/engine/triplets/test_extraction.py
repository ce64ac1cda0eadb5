"""Triplet extraction: the SPEC filters, the concurrent resumable runner (fake and real corpora,
scripted LLM and the loopback server through litellm), the estimate and the `extract` command."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from engine.core.triplet_rules import filter_triplets
from engine.core.types import Chunk, Document, ExtractionStatus
from engine.llm.base import LLMError
from engine.llm.scripted import ScriptedLLM
from engine.reasoners.llm_reasoner import LLMReasoner
from engine.triplets.extraction import estimate_extraction, run_extraction

# --- filters --------------------------------------------------------------------------------------

TEXT = "Alien is a 1979 science fiction film directed by Ridley Scott. It stars Sigourney Weaver."


def test_filters_of_spec_section_0():
    raw = [
        ("Alien", "directed by", "Ridley Scott"),
        ("alien", "Directed  by", "ridley scott"),  # duplicate up to case and spaces
        ("Alien", "stars", "Sigourney Weaver", "extra"),  # arity 4
        ("Alien", "budget"),  # arity 2
        ("Alien", "", "Ridley Scott"),  # empty part
        ("Alien", "director", "Unknown"),  # placeholder
        ("N/A", "stars", "Sigourney Weaver"),  # placeholder
        ("Alien", "is", "alien"),  # subject == object
        ("Alien", "won", "Academy Award"),  # neither predicate nor object in the text
        ("Alien", "released in", "1979"),  # object grounded, predicate paraphrased
        ("Alien", "stars", "Tom Skerritt"),  # predicate grounded, object not: kept
        ("Alien", "genre", "science fiction film"),
        "not a triple",
    ]
    assert filter_triplets(raw, TEXT) == [
        ("Alien", "directed by", "Ridley Scott"),
        ("Alien", "released in", "1979"),
        ("Alien", "stars", "Tom Skerritt"),
        ("Alien", "genre", "science fiction film"),
    ]


def test_grounding_is_token_level_and_case_insensitive():
    text = "Ridley Scott was born on 30 November 1937 in South Shields."
    assert filter_triplets([("Ridley Scott", "born in", "SOUTH SHIELDS")], text)
    assert filter_triplets([("Ridley Scott", "the born of", "England")], text)  # "born" occurs
    assert not filter_triplets([("Ridley Scott", "nationality", "English")], text)


# --- the runner over a fake corpus ----------------------------------------------------------------


class FakeCorpus:
    """The part of the Corpus API extraction uses, in memory, checking writes come one at a time."""

    def __init__(self, n: int):
        self.chunks = [Chunk(f"c{i}", f"d{i}", 0, f"Person{i}", f"Person{i} was born in City{i}.") for i in range(n)]
        self.status = {c.chunk_id: ExtractionStatus(c.chunk_id, "pending") for c in self.chunks}
        self.triplets: dict[str, list] = {}
        self._writing = threading.Lock()
        self.overlapping_writes = 0

    def pending_chunks(self):
        return [c for c in self.chunks if self.status[c.chunk_id].status != "done"]

    def extraction_statuses(self):
        return dict(self.status)

    def _write(self, fn):
        if not self._writing.acquire(blocking=False):
            self.overlapping_writes += 1
            self._writing.acquire()
        try:
            time.sleep(0.001)
            fn()
        finally:
            self._writing.release()

    def store_extraction(self, chunk_id, triplets, status):
        self._write(
            lambda: (self.triplets.__setitem__(chunk_id, list(triplets)), self.status.__setitem__(chunk_id, status))
        )

    def mark_extraction_failed(self, chunk_id, error, model=""):
        self._write(lambda: self.status.__setitem__(chunk_id, ExtractionStatus(chunk_id, "failed", model, error)))


def person_reply(messages) -> str:
    m = re.search(r"Person(\d+) was born", messages[-1]["content"])
    assert m is not None, messages[-1]["content"]
    i = m.group(1)
    return json.dumps({"triples": [[f"Person{i}", "born in", f"City{i}"]]})


def test_runner_stores_every_chunk_with_its_usage_and_reports_progress():
    corpus = FakeCorpus(20)
    seen = []
    summary = run_extraction(
        corpus,
        LLMReasoner(ScriptedLLM(person_reply, cost_per_call=0.001)),
        concurrency=4,
        on_progress=lambda d, t, label: seen.append((d, t)),
    )
    assert summary.chunks_done == 20 and summary.chunks_failed == 0 and summary.triplets == 20 and summary.ok
    assert corpus.triplets["c7"] == [("Person7", "born in", "City7")]
    st = corpus.status["c7"]
    assert st.status == "done" and st.calls == 1 and st.prompt_tokens > 0 and st.cost == pytest.approx(0.001)
    assert summary.calls == 20 and summary.cost == pytest.approx(0.02)
    assert corpus.overlapping_writes == 0
    assert seen[0] == (0, 20) and seen[-1] == (20, 20)


def test_bad_replies_mark_chunks_failed_and_a_rerun_retries_only_those():
    corpus = FakeCorpus(6)
    flaky = lambda m: "sorry" if re.search(r"Person[24] was", m[-1]["content"]) else person_reply(m)  # noqa: E731
    first = run_extraction(corpus, LLMReasoner(ScriptedLLM(flaky)), concurrency=3)
    assert (first.chunks_done, first.chunks_failed) == (4, 2)
    assert corpus.status["c2"].status == "failed" and "parse" in corpus.status["c2"].error
    skipped = run_extraction(corpus, LLMReasoner(ScriptedLLM(person_reply)), retry_failed=False)
    assert skipped.chunks_skipped == 2 and skipped.calls == 0
    llm = ScriptedLLM(person_reply)
    again = run_extraction(corpus, LLMReasoner(llm), concurrency=3)
    assert again.chunks_done == 2 and llm.calls == 2
    assert all(s.status == "done" for s in corpus.status.values())


def test_auth_failure_stops_early_with_one_message_and_leaves_chunks_pending():
    corpus = FakeCorpus(50)
    script = [person_reply] * 3

    def reply(messages):
        if script:
            return script.pop()(messages)
        raise LLMError("openai model 'openai/gpt-4o-mini': authentication failed. Check the API key", kind="auth")

    llm = ScriptedLLM(reply)
    summary = run_extraction(corpus, LLMReasoner(llm), concurrency=4)
    assert "authentication failed" in summary.stopped and not summary.ok
    assert summary.chunks_done == 3 and summary.chunks_failed == 0
    assert llm.calls <= 3 + 2 * 4  # nothing more is sent once the error is seen
    assert sum(s.status == "failed" for s in corpus.status.values()) == 0
    assert len(corpus.pending_chunks()) == 47


# --- the runner over a real corpus and the real client --------------------------------------------


def people_corpus(workspace, n: int, name: str = "people"):
    corpus = workspace.create(name)
    corpus.add_documents(
        [Document(f"doc{i}", f"Person{i}", f"Person{i} was born in City{i}.", "t.txt") for i in range(n)]
    )
    return corpus


def served_persons(srv) -> list[str]:
    found = [re.search(r"Person(\d+) was born", r["messages"][-1]["content"]) for r in srv.answered]
    return [m.group(1) for m in found if m is not None]


def test_resume_after_the_server_fails_midway_bills_each_chunk_once(workspace, loopback_llm):
    from engine.reasoners import make_reasoner

    n = 8
    corpus = people_corpus(workspace, n)
    assert len(corpus.pending_chunks()) == n
    loopback_llm.reply = lambda m, b: person_reply(m)
    loopback_llm.fail_after, loopback_llm.fail_mode = 3, "500"  # the provider breaks after 3 requests
    reasoner = make_reasoner(
        "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-loopback-0000", backoff=0.01, max_attempts=2
    )  # no cache: the server count is the bill
    first = run_extraction(corpus, reasoner, concurrency=4)
    assert first.chunks_done == 3 and first.chunks_failed == n - 3
    assert "provider error after 2 attempts" in first.failures[0][1]
    assert corpus.counts().failed == n - 3

    loopback_llm.fail_after = None  # the provider is back
    second = run_extraction(corpus, reasoner, concurrency=4)
    assert second.chunks_done == n - 3 and second.chunks_failed == 0
    third = run_extraction(corpus, reasoner, concurrency=4)
    assert third.chunks_total == 0 and third.calls == 0

    served = served_persons(loopback_llm)
    assert sorted(served, key=int) == [str(i) for i in range(n)]  # each chunk answered exactly once
    assert {(t.subject, t.object) for t in corpus.triplets()} == {(f"Person{i}", f"City{i}") for i in range(n)}
    statuses = corpus.extraction_statuses()
    assert all(s.status == "done" and s.model == "openai/gpt-4o-mini" and s.cost > 0 for s in statuses.values())
    assert first.cost + second.cost == pytest.approx(sum(s.cost for s in statuses.values()))


def test_cached_replies_rebuild_a_corpus_for_free(workspace, loopback_llm, tmp_path):
    from engine.reasoners import make_reasoner

    loopback_llm.reply = lambda m, b: person_reply(m)
    cache = tmp_path / "llm_cache.sqlite"

    def make():
        return make_reasoner(
            "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-loopback-0000", cache_path=cache
        )

    one = run_extraction(people_corpus(workspace, 4, "one"), make())
    two = run_extraction(people_corpus(workspace, 4, "two"), make())
    assert one.cache_hits == 0 and one.cost > 0
    assert two.cache_hits == 4 and two.cost == 0.0 and two.prompt_tokens == 0
    assert len(loopback_llm.answered) == 4


# --- estimate -------------------------------------------------------------------------------------

CHUNKS = [Chunk(f"c{i}", "d", i, "Alien", TEXT) for i in range(10)]


def test_estimate_prices_known_models_and_admits_unknown_ones():
    est = estimate_extraction(CHUNKS, "openai/gpt-4o-mini", "json")
    assert est.calls == 10 and est.prompt_tokens > 10 * 20 and est.completion_tokens > 10 * 10
    assert est.token_counter == "litellm" and est.cost is not None and 0 < est.cost < 0.01
    ner = estimate_extraction(CHUNKS, "openai/gpt-4o-mini", "json+ner")
    assert ner.calls == 20 and ner.prompt_tokens > est.prompt_tokens and ner.cost > est.cost
    unknown = estimate_extraction(CHUNKS, "hosted_vllm/my-model", "kg2rag")
    assert unknown.cost is None and "no price" in unknown.note and unknown.prompt_tokens > 0
    offline = estimate_extraction(CHUNKS, "", "json")
    assert offline.calls == 0 and offline.cost == 0.0
    with pytest.raises(ValueError):
        estimate_extraction(CHUNKS, "openai/gpt-4o-mini", "xml")


# --- the command ----------------------------------------------------------------------------------


def test_extract_command_estimates_runs_and_fails_clearly(workspace, loopback_llm, monkeypatch, capsys):
    from engine.cli import main

    people_corpus(workspace, 3)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace.root))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-77777777")
    loopback_llm.reply = lambda m, b: person_reply(m)
    args = ["extract", "people", "--model", "openai/gpt-4o-mini", "--api-base", loopback_llm.base_url]

    assert main(args + ["--estimate"]) == 0
    out = capsys.readouterr().out
    assert "estimate for 3 pending chunks" in out and "$" in out
    assert loopback_llm.requests == []

    loopback_llm.fail_after, loopback_llm.fail_mode = 0, "401"
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "authentication failed" in captured.err and "sk-env-key" not in captured.err + captured.out
    assert captured.err.count("authentication failed") == 1
    loopback_llm.fail_after = None

    assert main(args + ["--concurrency", "2"]) == 0
    out = capsys.readouterr().out
    assert "extracted 3 chunks (3 triplets), 0 failed" in out and "3 LLM calls (0 from cache)" in out
    assert main(args) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_extract_command_without_a_model_runs_the_offline_rules(workspace, monkeypatch, capsys):
    from engine.cli import main

    people_corpus(workspace, 3)
    monkeypatch.setenv("TRIPLET_LENS_WORKSPACE", str(workspace.root))
    monkeypatch.delenv("TRIPLET_LENS_MODEL", raising=False)
    assert main(["extract", "people"]) == 0
    out = capsys.readouterr().out
    assert "offline rules reasoner (free)" in out and "extracted 3 chunks" in out and "0 LLM calls" in out
    corpus = workspace.open("people")
    assert corpus.counts().pending == 0
    assert all(s.model == "offline-rules" for s in corpus.extraction_statuses().values())
