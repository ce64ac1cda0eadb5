"""`eval` over thousands of questions in bounded memory: resume reads only the ids already done,
the summary is accumulated from the records streamed off the jsonl (at most one record alive at a
time), and the streamed averages equal metrics.average_metrics over the whole list."""

from __future__ import annotations

import random
import weakref

import pytest

from engine.core.types import Document, Question
from engine.eval import harness
from engine.eval.metrics import PARAGRAPH, SENTENCE, QuestionMetrics, RetrievalScore, average_metrics
from engine.eval.report import summarize_method, summarize_stream
from engine.methods.base import Result, Usage
from engine.store import Workspace
from tests._fake_embedder import HashEmbedder


class Echo:
    """Answers 'Paris' to every question, citing the one chunk, at no cost."""

    name = "echo"

    def __init__(self, interrupt_at: int = 0):
        self.calls = 0
        self.interrupt_at = interrupt_at

    def answer(self, question, corpus, settings=None, on_step=None) -> Result:
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        cid = corpus._db.execute("SELECT chunk_id FROM chunks LIMIT 1").fetchone()[0]
        return Result(
            "echo",
            question,
            "Paris",
            Usage(calls=1, prompt_tokens=3, engine_time=0.001),
            [cid],
            "complete",
            reasoner="fake",
        )


def _corpus(tmp_path, n):
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder(), keep_snapshots=0).create("qs")
    c.add_documents([Document("d0", "France", "Paris is the capital of France.", "t")])
    c.add_questions(
        [
            Question(
                f"q{i:05d}",
                f"Capital number {i}?",
                ("Paris" if i % 3 else "Lyon",),
                qtype="bridge" if i % 2 else "comparison",
                supporting_titles=("France",),
            )
            for i in range(n)
        ]
    )
    return c


def _watch(monkeypatch):
    """Records streamed to the summary: the most alive at once."""
    alive, most = [0], [0]
    real = harness.iter_last_records

    def gone():
        alive[0] -= 1

    def watched(path, qids=None):
        for rec in real(path, qids):
            alive[0] += 1
            weakref.finalize(rec, gone)
            most[0] = max(most[0], alive[0])
            yield rec

    monkeypatch.setattr(harness, "iter_last_records", watched)
    monkeypatch.setattr(harness, "read_records", lambda *a, **k: pytest.fail("every record was loaded"))
    return most


def test_eval_of_thousands_of_questions_streams_its_records_and_resumes(tmp_path, monkeypatch):
    n = 2500
    c = _corpus(tmp_path, n)
    most = _watch(monkeypatch)
    first = Echo(interrupt_at=1201)
    with pytest.raises(KeyboardInterrupt):
        harness.run_eval(c, ["echo"], None, out_dir=tmp_path / "run", method_factory=lambda name, r: first)
    assert len(harness.done_qids(tmp_path / "run" / "echo.jsonl")) == 1200
    second = Echo()
    summary = harness.run_eval(c, ["echo"], None, out_dir=tmp_path / "run", method_factory=lambda name, r: second)
    assert second.calls == n - 1200  # resumed: the done ones were not asked again
    m = summary.methods[0]
    assert m.n_done == n and m.n_questions == n
    assert m.answer.em == pytest.approx(sum(1 for i in range(n) if i % 3) / n)
    assert m.calls_per_q == 1.0 and set(m.by_qtype) == {"bridge", "comparison"}
    assert most[0] <= 2  # one record at a time (plus the one being replaced)


def _random_metrics(rng):
    def score():
        return RetrievalScore(*(rng.random() for _ in range(4)), n_retrieved=3, n_gold=2, em=float(rng.random() < 0.3))

    return QuestionMetrics(
        em=float(rng.random() < 0.5),
        f1=rng.random(),
        precision=rng.random(),
        recall=rng.random(),
        paragraph=score() if rng.random() < 0.8 else None,
        sentence=score() if rng.random() < 0.5 else None,
        n_evidence_chunks=rng.randrange(6),
        scored=rng.random() < 0.9,
    )


class _Rec:
    def __init__(self, qid, metrics, rng):
        self.qid, self.metrics = qid, metrics
        self.usage = Usage(calls=rng.randrange(4), prompt_tokens=rng.randrange(100), cost=rng.random())
        self.failure, self.error, self.recall_loss = "", "", None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streamed_averages_equal_the_whole_list_averages(seed):
    rng = random.Random(seed)
    qs = [Question(f"q{i}", "?", ("a",), qtype=rng.choice(["bridge", "comparison", "2hop"])) for i in range(300)]
    records = {q.qid: _Rec(q.qid, _random_metrics(rng), rng) for q in qs if rng.random() < 0.85}
    order = list(records.values())
    rng.shuffle(order)  # the jsonl order (concurrent runs finish out of order)
    by_qid = {q.qid: q for q in qs}
    streamed = summarize_stream("kg2rag", ((by_qid[r.qid], r) for r in order), qs, PARAGRAPH, 5)
    whole = [records[q.qid].metrics if q.qid in records else None for q in qs]
    for unit in (PARAGRAPH, SENTENCE):
        want, got = average_metrics(whole, unit), streamed.by_unit[unit]
        for field in want.__dataclass_fields__:
            a, b = getattr(want, field), getattr(got, field)
            assert a == b if a is None or isinstance(a, str) else a == pytest.approx(b, rel=1e-12, abs=1e-15), field
    for t in ("bridge", "comparison", "2hop"):
        want = average_metrics([m for q, m in zip(qs, whole) if q.qtype == t], PARAGRAPH)
        assert streamed.by_qtype[t].f1 == pytest.approx(want.f1) and streamed.by_qtype[t].n == want.n
    assert streamed.n_done == len(records)
    assert streamed.cost_total == pytest.approx(sum(r.usage.cost for r in records.values()))
    assert summarize_method("kg2rag", records, qs, PARAGRAPH, 5).answer.f1 == pytest.approx(streamed.answer.f1)
