"""The harness: scores, per-question records, resume after an interruption, errors, summaries."""

from __future__ import annotations

import json

import pytest

from engine.eval.harness import read_records, run_eval
from engine.llm.base import LLMError
from engine.methods import load_result
from tests._eval_helpers import OracleMethod, make_hotpot_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder):
    # read-only in every test here, so one corpus serves the module
    from engine.store import Workspace

    return make_hotpot_corpus(Workspace(tmp_path_factory.mktemp("ws"), embedder=embedder), n=4)


def test_resume_after_interrupt_redoes_no_question(corpus, tmp_path):
    out = tmp_path / "run"
    first = OracleMethod(interrupt_at=3)
    with pytest.raises(KeyboardInterrupt):
        run_eval(corpus, ["oracle"], None, out_dir=out, method_factory=lambda n, r: first)
    assert len(read_records(out / "oracle.jsonl")) == 2
    # the process died mid-write of a third line
    with open(out / "oracle.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"qid": "half-writ')

    second = OracleMethod()
    summary = run_eval(corpus, ["oracle"], None, out_dir=out, method_factory=lambda n, r: second)
    assert second.calls == 2  # only the two questions not yet done
    asked_first = set(first.asked)
    assert asked_first.isdisjoint(second.asked)
    lines = (out / "oracle.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and all(json.loads(line)["qid"] for line in lines)  # the half line is gone
    assert {json.loads(line)["qid"] for line in lines} == {q.qid for q in corpus.questions()}
    m = summary.methods[0]
    assert (m.n_done, m.n_questions, m.n_errors) == (4, 4, 0)
    assert m.answer.em == 1.0 and m.answer.f1 == 1.0
    assert m.answer.retrieval_recall == 1.0  # every gold paragraph given as evidence
    assert m.calls_per_q == 2 and m.cost_total == pytest.approx(0.004)
    for name in ("summary.json", "summary.csv", "summary.md"):
        assert (out / name).is_file()
    md = (out / "summary.md").read_text()
    assert "| oracle | 4/4 | 1.000 | 1.000 |" in md
    assert "| method | bridge (3) | comparison (1) |" in md and "| oracle | 1.000 | 1.000 |" in md
    from engine.eval.report import load_summary

    assert load_summary(out) == summary  # the app can show a past run as it was
    rec = json.loads(lines[0])
    saved = load_result(out / rec["trace"])
    assert saved.answer == rec["answer"] and saved.evidence_chunk_ids == rec["evidence_chunk_ids"]


def test_question_errors_are_recorded_and_count_zero(corpus, tmp_path):
    target = corpus.questions()[1]
    summary = run_eval(
        corpus,
        ["oracle"],
        None,
        questions=3,
        out_dir=tmp_path / "r",
        method_factory=lambda n, r: OracleMethod(fail_on=target.question),
    )
    recs = read_records(tmp_path / "r" / "oracle.jsonl")
    assert len(recs) == 3
    assert recs[target.qid].error == "RuntimeError: boom" and recs[target.qid].failure == "error"
    m = summary.methods[0]
    assert m.n_errors == 1
    assert f"oracle: 1 question(s) failed, e.g. {target.qid}: RuntimeError: boom" in summary.markdown()
    assert m.answer.em == pytest.approx(2 / 3)
    assert m.answer.retrieval_f1 < 1.0


def test_fatal_provider_error_stops_the_whole_run(corpus, tmp_path):
    built = []

    def factory(name, reasoner):
        built.append(name)
        return OracleMethod(exc=LLMError("openai: the API key was rejected", kind="auth"))

    summary = run_eval(corpus, ["oracle", "other"], None, out_dir=tmp_path / "r", method_factory=factory)
    assert built == ["oracle"]  # the second method never started
    assert "API key was rejected" in summary.stopped
    assert read_records(tmp_path / "r" / "oracle.jsonl") == {}
    assert "Stopped early" in (tmp_path / "r" / "summary.md").read_text()


def test_selecting_questions_by_id_and_unknown_ids(corpus, tmp_path):
    qs = corpus.questions()
    summary = run_eval(
        corpus,
        ["oracle"],
        None,
        questions=[qs[3].qid],
        out_dir=tmp_path / "r",
        method_factory=lambda n, r: OracleMethod(),
    )
    assert summary.n_questions == 1 and summary.methods[0].n_done == 1
    with pytest.raises(ValueError, match="not in corpus"):
        run_eval(
            corpus,
            ["oracle"],
            None,
            questions=["nope"],
            out_dir=tmp_path / "r2",
            method_factory=lambda n, r: OracleMethod(),
        )


def test_fatal_error_caught_inside_a_real_method_still_stops_the_run(corpus, tmp_path):
    # the baseline catches the LLMError itself and returns Result.error; the harness must still stop
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    llm = ScriptedLLM([LLMError("openai/gpt-x: the model does not exist", kind="not_found")], repeat_last=True)
    summary = run_eval(corpus, ["standard", "kg2rag"], LLMReasoner(llm), out_dir=tmp_path / "r")
    assert llm.calls == 1
    assert "model does not exist" in summary.stopped and "standard" in summary.stopped
    assert [m.n_done for m in summary.methods] == [0, 0]


def test_real_methods_with_a_scripted_llm_record_usage_and_cost(corpus, tmp_path):
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    llm = ScriptedLLM(lambda messages: "Paris", cost_per_call=0.01)
    summary = run_eval(corpus, ["standard"], LLMReasoner(llm), questions=2, out_dir=tmp_path / "r")
    m = summary.methods[0]
    assert m.n_done == 2 and m.n_errors == 0
    assert m.calls_per_q == 1 and m.prompt_tokens_per_q > 0
    assert m.cost_total == pytest.approx(0.02)
    assert m.answer.retrieval_recall > 0  # standard RAG found some gold paragraphs


def test_concurrent_run_records_every_question_once(corpus, tmp_path):
    method = OracleMethod()
    summary = run_eval(
        corpus, ["oracle"], None, out_dir=tmp_path / "r", concurrency=3, method_factory=lambda n, r: method
    )
    lines = (tmp_path / "r" / "oracle.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["qid"] for line in lines) == sorted(q.qid for q in corpus.questions())
    assert summary.methods[0].answer.em == 1.0 and method.calls == 4


def test_resuming_into_a_folder_of_another_run_is_refused(corpus, tmp_path):
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    out = tmp_path / "r"
    run_eval(corpus, ["standard"], LLMReasoner(ScriptedLLM(lambda m: "x", model="model-a")), questions=1, out_dir=out)
    with pytest.raises(ValueError, match="reasoner 'model-a'"):
        run_eval(
            corpus, ["standard"], LLMReasoner(ScriptedLLM(lambda m: "x", model="model-b")), questions=1, out_dir=out
        )


class GoldSentenceMethod:
    """Returns exactly the chunks holding the gold supporting sentences (a perfect retriever)."""

    def __init__(self, reasoner=None):
        pass

    def answer(self, question, corpus, settings=None, on_step=None):
        from engine.methods.base import Result, Usage

        q = next(q for q in corpus.questions() if q.question == question)
        gold = set(q.supporting_facts)
        ids = [c.chunk_id for c in corpus.chunks() if (c.title, c.sent_start) in gold]
        return Result("gold", question, q.answer, Usage(), ids)


def test_sentence_chunked_corpus_scores_gold_sentences_perfectly(workspace, tmp_path):
    # real chunker, real HotpotQA sentence numbering: chunk (title, sent_start) must be the gold sent_id
    corpus = make_hotpot_corpus(workspace, n=2, name="hs", mode="sentence")
    summary = run_eval(corpus, ["gold"], None, out_dir=tmp_path / "r", method_factory=lambda n, r: GoldSentenceMethod())
    m = summary.methods[0]
    assert m.retrieval_unit == "sentence"
    a = m.by_unit["sentence"]
    assert (a.retrieval_precision, a.retrieval_recall, a.retrieval_f1) == (1.0, 1.0, 1.0)
    n_facts = sum(len(q.supporting_facts) for q in corpus.questions())
    assert a.avg_evidence_chunks == n_facts / 2


def test_each_record_carries_where_its_gold_went_and_the_summary_adds_them_up(corpus, tmp_path):
    from engine.eval.recall_loss import NOT_RETRIEVED, RecallLoss
    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    summary = run_eval(
        corpus,
        ["standard"],
        LLMReasoner(ScriptedLLM(lambda messages: "Paris")),
        questions=3,
        out_dir=tmp_path / "r",
        k=2,
        settings_by_method={"standard": _standard_k(2)},
    )
    recs = read_records(tmp_path / "r" / "standard.jsonl")
    assert all(isinstance(r.recall_loss, RecallLoss) for r in recs.values())  # typed after the round trip
    for r in recs.values():
        assert r.recall_loss.found + sum(r.recall_loss.lost.values()) == r.recall_loss.n_gold == 2
        assert set(r.recall_loss.lost) <= {NOT_RETRIEVED}
    loss = summary.methods[0].recall_loss
    assert loss.n_questions == 3 and loss.n_gold == 6
    assert loss.found == sum(r.recall_loss.found for r in recs.values())
    assert loss.lost_units.get(NOT_RETRIEVED, 0) == 6 - loss.found
    assert ("| standard | found in the context | %d of 6 | 3 |" % loss.found) in summary.markdown()


def _standard_k(k):
    from engine.methods.baselines import StandardRAGSettings

    return StandardRAGSettings(k=k)


def test_an_errored_question_loses_its_gold_to_the_error(corpus, tmp_path):
    from engine.eval.recall_loss import METHOD_ERROR

    summary = run_eval(
        corpus,
        ["oracle"],
        None,
        questions=2,
        out_dir=tmp_path / "r",
        method_factory=lambda n, r: OracleMethod(exc=RuntimeError("boom")),
    )
    loss = summary.methods[0].recall_loss
    assert loss.found == 0 and loss.lost_units == {METHOD_ERROR: 4} and loss.lost_questions == {METHOD_ERROR: 2}


class _RetrievedThenFailed(OracleMethod):
    """Retrieves the gold paragraphs, then its answer step fails (as T2RAG's did with the offline
    reasoner: "the answer step failed: no evidence")."""

    def answer(self, question, corpus, settings=None, on_step=None):
        import dataclasses

        r = super().answer(question, corpus, settings, on_step)
        return dataclasses.replace(r, answer="", error="the answer step failed: no evidence")


def test_a_method_that_retrieved_and_then_failed_keeps_its_recall(corpus, tmp_path):
    """Issue 40: an error after retrieval zeroes the answer, not what was retrieved."""
    summary = run_eval(
        corpus,
        ["oracle"],
        None,
        questions=2,
        out_dir=tmp_path / "r",
        method_factory=lambda n, r: _RetrievedThenFailed(),
    )
    recs = read_records(tmp_path / "r" / "oracle.jsonl")
    assert all(r.failure == "error" and "answer step failed" in r.error for r in recs.values())
    m = summary.methods[0]
    assert m.n_errors == 2 and m.answer.em == 0.0 and m.answer.f1 == 0.0
    assert m.answer.retrieval_recall == 1.0  # every gold paragraph was retrieved before the failure
    assert m.recall_loss.found == 4
