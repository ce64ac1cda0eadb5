"""T2RAG end to end over a scripted reasoner and a small in-memory corpus: the round loop, the
state updates a user sees in the trace, the stop reasons and the failure paths."""

from __future__ import annotations

import pytest

from engine.llm.base import LLMError
from engine.methods import build_method
from engine.methods.base import result_from_json, result_to_json
from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.reasoners.base import SolveResult
from tests._t2rag_helpers import OfflineLikeReasoner, Q, ScriptedReasoner, Unparseable, bobby_mcgee_corpus

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"


def _bridge_reasoner(**kw) -> ScriptedReasoner:
    return ScriptedReasoner(
        decomposition=[Q("Me and Bobby McGee", "performer", "?performer"), Q("?performer", "child", "?child")],
        solves=[
            SolveResult(bindings={"?performer": "Kris Kristofferson"}),
            SolveResult(triplets=(Q("Kris Kristofferson", "child", "Tracy Kristofferson"),)),
        ],
        answers=["Tracy Kristofferson"],
        **kw,
    )


def test_bridge_question_resolves_over_two_rounds():
    reasoner, corpus, steps = _bridge_reasoner(), bobby_mcgee_corpus(), []
    result = T2RAG(reasoner).answer(BRIDGE, corpus, on_step=lambda label, payload: steps.append(label))
    trace = result.trace

    assert result.answer == "Tracy Kristofferson"
    assert result.stop_reason == "complete" and len(trace.rounds) == 2
    # decomposition classified by distinct placeholders
    d = trace.decomposition.state
    assert [t.id for t in d.searchable] == ["t1"] and [t.id for t in d.fuzzy] == ["t2"]
    # round 1 asks with the known parts, plus the question minus its wh-words
    r1, r2 = trace.rounds
    assert [q.text for q in r1.queries] == [
        "Me and Bobby McGee performer",
        "is the child of the performer of Me and Bobby McGee?",
    ]
    # the binding is propagated by the engine: the fuzzy triplet became searchable
    assert r1.new_searchable == ["t2"]
    assert r1.state_after.searchable[0].text() == "(Kris Kristofferson, child, ?child)"
    b = r1.bindings[0]
    assert (b.placeholder, b.value, b.applied_to) == ("?performer", "Kris Kristofferson", ["t1", "t2"])
    assert "Kris Kristofferson" in b.proposition and b.chunk_ids and b.proposition_triplet_id is not None
    # round 2 searches for the new triplet; the rewritten reply resolves it
    assert r2.queries[0].text == "Kris Kristofferson child"
    assert r2.newly_resolved == ["t2"] and r2.bindings[0].placeholder == "?child"
    assert r2.bindings[0].value == "Tracy Kristofferson" and r2.bindings[0].origin == "triplet"
    # synthesis from the resolved facts only
    assert trace.synthesis.mode == "complete"
    assert trace.synthesis.facts == [
        "Me and Bobby McGee | performer | Kris Kristofferson",
        "Kris Kristofferson | child | Tracy Kristofferson",
    ]
    assert reasoner.answer_inputs == [("", trace.synthesis.facts)]
    # one embed and one index search per round, for all queries together
    assert corpus.embed_calls == 2 and corpus.search_calls == 2
    # usage: decompose + 2 solves + answer
    assert result.usage.calls == 4 and result.usage.prompt_tokens > 0
    assert result.evidence_chunk_ids == list(dict.fromkeys(c.chunk_id for r in trace.rounds for c in r.chunks))
    assert steps[0].startswith("decompose") and steps[1].startswith("round 1") and steps[-1].startswith("answer")
    assert len(steps) == 4


def test_solver_sees_propositions_chunks_and_open_triplets():
    reasoner = _bridge_reasoner()
    T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus(), T2RAGSettings(k=2))
    resolved, open_triplets, evidence = reasoner.solve_inputs[0]
    assert resolved == [] and [t.text() for t in open_triplets] == [
        "(Me and Bobby McGee, performer, ?performer)",
        "(?performer, child, ?child)",
    ]
    assert len(evidence.chunks) == 2 and evidence.propositions
    assert any("performed by Kris Kristofferson" in text for _, text in evidence.chunks)
    # round 2 gets the round-1 fact as resolved
    assert [t.text() for t in reasoner.solve_inputs[1][0]] == ["(Me and Bobby McGee, performer, Kris Kristofferson)"]


def test_without_chunk_text_the_solver_sees_propositions_only():
    reasoner = _bridge_reasoner()
    T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus(), T2RAGSettings(include_chunk_text=False))
    evidence = reasoner.solve_inputs[0][2]
    assert evidence.chunks == () and evidence.propositions


def test_comparison_binding_turns_fuzzy_triplets_searchable():
    question = "Were the directors of Film A and Film B born in the same country?"
    reasoner = ScriptedReasoner(
        decomposition=[
            Q("Film A", "director", "?dirA"),
            Q("Film B", "director", "?dirB"),
            Q("?dirA", "born in", "?countryA"),
            Q("?dirB", "born in", "?countryB"),
        ],
        solves=[
            SolveResult(bindings={"?dirA": "Alice Smith", "dirB": "Bob Jones"}),
            SolveResult(bindings={"?countryA": "Canada", "?countryB": "Canada"}),
        ],
        answers=["yes"],
    )
    result = T2RAG(reasoner).answer(question, bobby_mcgee_corpus())
    r1, r2 = result.trace.rounds
    assert [t.id for t in r1.state_before.fuzzy] == ["t3", "t4"]
    assert sorted(r1.new_searchable) == ["t3", "t4"] and r1.state_after.fuzzy == []
    assert [q.text for q in r2.queries if q.kind == "triplet"] == ["Alice Smith born in", "Bob Jones born in"]
    assert {c.chunk_id for c in r2.chunks} >= {"alice#0", "bob#0"}
    assert result.stop_reason == "complete" and result.answer == "yes"
    assert "Alice Smith | born in | Canada" in result.trace.synthesis.facts


def test_empty_decomposition_falls_back_to_the_question_query():
    question = "What did Janis Joplin have a posthumous hit with?"
    reasoner = ScriptedReasoner(decomposition=[], answers=["Me and Bobby McGee"])
    result = T2RAG(reasoner).answer(question, bobby_mcgee_corpus())
    trace = result.trace
    assert trace.decomposition.failure == "the decomposition returned no triplet"
    (rnd,) = trace.rounds
    # one query for the question (minus its wh-words), not the question and its stripped form
    assert [(q.kind, q.text) for q in rnd.queries] == [("question", "did Janis Joplin have a posthumous hit with?")]
    assert rnd.solve_call is None and rnd.solve_skipped
    assert result.stop_reason == "no_open_triplets" and trace.synthesis.mode == "forced"
    # the answer step gets the retrieved chunks
    context, facts = reasoner.answer_inputs[0]
    assert "posthumous hit" in context and facts == []
    assert result.usage.calls == 2 and result.answer == "Me and Bobby McGee"


def test_early_stop_when_nothing_new_and_nothing_fuzzy():
    reasoner = ScriptedReasoner(
        decomposition=[Q("Roger Miller", "child", "?child")], solves=[SolveResult()], answers=["Dean Miller"]
    )
    result = T2RAG(reasoner).answer("Who is Roger Miller's child?", bobby_mcgee_corpus())
    assert result.stop_reason == "early_stop" and len(result.trace.rounds) == 1
    syn = result.trace.synthesis
    assert syn.mode == "forced" and "Still unresolved: Roger Miller | child | ?child" in syn.context
    assert "Dean Miller" in syn.context  # the last retrieved chunks
    assert T2RAG.summarize(result)[-2].startswith("stop: early_stop")


def test_round_cap_is_recorded():
    reasoner = ScriptedReasoner(
        decomposition=[Q("?film", "directed by", "?director")], solves=[SolveResult(), SolveResult()]
    )
    result = T2RAG(reasoner).answer(
        "Which film was directed by whom?", bobby_mcgee_corpus(), T2RAGSettings(rounds=2, k=1)
    )  # k=1: round 2 has an unseen chunk left
    assert result.stop_reason == "round_cap" and len(result.trace.rounds) == 2
    # no searchable triplet: every round asks with the question itself
    assert all(r.queries[0].kind == "question" for r in result.trace.rounds)
    assert len(reasoner.solve_inputs) == 2


def test_forced_synthesis_reads_every_rounds_chunks_once():
    # round 2 repeats round 1's query and shows the chunk ranked next: the forced answer step reads
    # both rounds' passages (tuned), not only the last round's; the paper's reads the clues only
    def run(forced_context):
        reasoner = ScriptedReasoner(
            decomposition=[Q("?film", "directed by", "?director")],
            solves=[SolveResult(), SolveResult()],
            answers=["Alice Smith"],
        )
        settings = T2RAGSettings(rounds=2, k=1, forced_context=forced_context)
        result = T2RAG(reasoner).answer("Which film was directed by whom?", bobby_mcgee_corpus(), settings)
        return result.trace, reasoner.answer_inputs[0][0]

    trace, context = run("tuned")
    r1, r2 = trace.rounds
    assert r1.chunks[0].chunk_id != r2.chunks[0].chunk_id and trace.synthesis.mode == "forced"
    for chunk in r1.chunks + r2.chunks:
        assert context.count(chunk.text) == 1
    assert context.index(r1.chunks[0].text) < context.index(r2.chunks[0].text)  # in the order shown
    assert run("paper")[1] == ""


def test_a_triplet_the_solver_omits_stays_queued():
    reasoner = ScriptedReasoner(
        decomposition=[Q("Film A", "director", "?dirA"), Q("Film B", "director", "?dirB"), Q("?dirA", "born in", "?c")],
        solves=[
            SolveResult(triplets=(Q("Film A", "directed by", "Alice Smith"),)),  # reworded predicate
            SolveResult(),
        ],
        answers=["Alice Smith"],
    )
    result = T2RAG(reasoner).answer("Who directed Film A and Film B?", bobby_mcgee_corpus())
    r1, r2 = result.trace.rounds
    assert r1.newly_resolved == ["t1"]
    assert [t.id for t in r1.state_after.searchable] == ["t2", "t3"]
    # round 2 asks only what is new: t2's query was asked in round 1 already
    assert [q.state_triplet_id for q in r2.queries if q.kind == "triplet"] == ["t3"]
    # the fact keeps the decomposition's predicate; the value comes from the reply
    assert result.trace.synthesis.facts == ["Film A | director | Alice Smith"]


def test_resolved_facts_only_accumulate():
    reasoner = ScriptedReasoner(
        decomposition=[Q("Film A", "director", "?d"), Q("?d", "born in", "?c")],
        solves=[
            SolveResult(bindings={"?d": "Alice Smith"}),
            # tries to rebind ?d and to rewrite a resolved fact: both ignored
            SolveResult(bindings={"?d": "Bob Jones"}, triplets=(Q("Film A", "director", "Bob Jones"),)),
        ],
        answers=["x"],
    )
    result = T2RAG(reasoner).answer("Where was the director of Film A born?", bobby_mcgee_corpus())
    r2 = result.trace.rounds[1]
    assert [t.text() for t in r2.state_after.resolved] == ["(Film A, director, Alice Smith)"]
    assert r2.unmatched == ["(Film A, director, Bob Jones)"]
    assert "already bound" in r2.bindings[0].note


def test_every_round_shows_new_evidence_and_no_solve_prompt_repeats():
    def run(skip):
        reasoner = ScriptedReasoner(
            decomposition=[Q("?film", "directed by", "?director")], solves=[SolveResult(), SolveResult()]
        )
        return (
            T2RAG(reasoner)
            .answer(
                "Which film was directed by whom?",
                bobby_mcgee_corpus(),
                T2RAGSettings(k=2, rounds=2, skip_seen_chunks=skip),
            )
            .trace.rounds
        )

    for skip in (False, True):  # a repeated query no longer shows the same chunks again
        rounds = run(skip)
        first = {c.chunk_id for c in rounds[0].chunks}
        assert len(rounds[1].chunks) == 2 and first.isdisjoint(c.chunk_id for c in rounds[1].chunks)
        prompts = [str(r.solve_call.messages) for r in rounds if r.solve_call is not None]
        assert len(prompts) == len(set(prompts))


def test_a_round_with_nothing_new_to_show_stops_instead_of_asking_again():
    reasoner = ScriptedReasoner(decomposition=[Q("?film", "directed by", "?director")], solves=[SolveResult()] * 10)
    result = T2RAG(reasoner).answer(
        "Which film was directed by whom?", bobby_mcgee_corpus(), T2RAGSettings(k=50, rounds=5)
    )
    rounds = result.trace.rounds  # round 1 showed every chunk: round 2 has nothing new
    assert len(rounds) == 2 and rounds[1].solve_call is None and rounds[1].solve_skipped
    assert result.trace.stop_reason == "no_new_evidence"


@pytest.mark.parametrize("step", ["decompose", "solve", "answer"])
def test_unparseable_output_at_each_step_is_recorded(step):
    reasoner = _bridge_reasoner()
    if step == "decompose":
        reasoner.decomposition = Unparseable("I think the answer is 42")
    elif step == "solve":
        reasoner.solves = [Unparseable("{broken json"), SolveResult()]
    else:
        reasoner.answers = [Unparseable("...")]
    result = T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    trace = result.trace
    if step == "decompose":
        assert trace.decomposition.call.error and "could not parse" in trace.decomposition.failure
        assert trace.rounds[0].queries[0].kind == "question" and result.answer == "Tracy Kristofferson"
    elif step == "solve":
        assert trace.rounds[0].solve_call.error and trace.rounds[0].bindings == []
        # nothing was lost: both triplets are still queued after the failed round
        assert trace.rounds[0].state_after.counts() == "0 resolved / 1 searchable / 1 fuzzy"
        assert result.answer == "Tracy Kristofferson"
    else:
        assert trace.synthesis.call.error and result.answer == ""
        assert "answer step failed" in result.error
    assert any(c.error for c in trace.calls())


def test_a_reasoner_exception_is_recorded_and_the_question_continues():
    reasoner = _bridge_reasoner()
    reasoner.solves = [ValueError("reply had no JSON object"), SolveResult()]
    result = T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    assert "ValueError: reply had no JSON object" in result.trace.rounds[0].solve_call.error
    assert result.answer == "Tracy Kristofferson" and not result.error


def test_a_provider_failure_ends_the_question_with_an_error():
    reasoner = _bridge_reasoner()
    reasoner.solves = [LLMError("openai rejected the API key; check OPENAI_API_KEY", kind="auth")]
    result = T2RAG(reasoner).answer(BRIDGE, bobby_mcgee_corpus())
    assert result.stop_reason == "llm_error" and "rejected the API key" in result.error
    assert result.answer == "" and result.trace.rounds[0].solve_call.error.startswith("auth:")
    assert len(result.trace.rounds) == 1 and result.trace.synthesis is None


def test_trace_round_trips_through_json_and_holds_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-leak-123")
    result = T2RAG(_bridge_reasoner()).answer(BRIDGE, bobby_mcgee_corpus(), T2RAGSettings(k=3, rounds=2))
    text = result_to_json(result)
    back = result_from_json(text)
    assert back == result
    assert back.trace.settings == T2RAGSettings(k=3, rounds=2)
    assert "sk-test-do-not-leak-123" not in text


def test_registry_and_summary():
    method = build_method("t2rag", _bridge_reasoner())
    assert isinstance(method, T2RAG) and method.settings_cls is T2RAGSettings
    result = method.answer(BRIDGE, bobby_mcgee_corpus())
    lines = T2RAG.summarize(result)
    assert lines[0].startswith("decompose: 0 resolved / 1 searchable / 1 fuzzy")
    assert lines[1].startswith("round 1: 0 resolved / 1 searchable / 1 fuzzy -> 1 resolved / 1 searchable / 0 fuzzy")
    assert "?performer=Kris Kristofferson" in lines[1]
    assert lines[-2] == "stop: complete (every query triplet resolved)"
    assert "Tracy Kristofferson" in lines[-1]


def test_settings_reject_nonsense():
    with pytest.raises(ValueError, match="k must be at least 1"):
        T2RAGSettings(k=0)


def test_through_llm_reasoner_and_scripted_llm():
    import json

    from engine.llm.scripted import ScriptedLLM
    from engine.reasoners.llm_reasoner import LLMReasoner

    replies = [
        json.dumps(
            {"triplets": [["Me and Bobby McGee", "performer", "?performer"], ["?performer", "child", "?child"]]}
        ),
        json.dumps(
            {
                "bindings": {"?performer": "Kris Kristofferson"},
                "triplets": [
                    ["Me and Bobby McGee", "performer", "Kris Kristofferson"],
                    ["Kris Kristofferson", "child", "?child"],
                ],
            }
        ),
        "this is not JSON",  # round 2's solver reply cannot be parsed
        "Tracy Kristofferson",
    ]
    llm = ScriptedLLM(replies)
    result = T2RAG(LLMReasoner(llm)).answer(BRIDGE, bobby_mcgee_corpus())
    trace = result.trace
    assert [bool(r.solve_call.error) for r in trace.rounds] == [False, True]
    # nothing new came from round 2 and nothing is fuzzy: early stop, forced synthesis with the chunks
    assert result.stop_reason == "early_stop" and trace.synthesis.mode == "forced"
    assert "Still unresolved: Kris Kristofferson | child | ?child" in trace.synthesis.context
    assert "His child is Tracy Kristofferson" in trace.synthesis.context
    assert result.answer == "Tracy Kristofferson"
    # the solver prompt carries the retrieved chunk text
    assert "performed by Kris Kristofferson" in llm.prompts[1][-1]["content"]
    assert result.usage.calls == llm.calls == 4
    assert result.usage.prompt_tokens == sum(len(m["content"].split()) for p in llm.prompts for m in p)
    assert result_from_json(result_to_json(result)) == result


def test_forced_synthesis_context_for_the_offline_rules_holds_passages_only():
    # the offline rules read the context as prose: the "Still unresolved" lines are for an LLM only
    reasoner = OfflineLikeReasoner(
        decomposition=[Q("Roger Miller", "child", "?child")], solves=[SolveResult()], answers=["Dean Miller"]
    )
    result = T2RAG(reasoner).answer("Who is Roger Miller's child?", bobby_mcgee_corpus())
    syn = result.trace.synthesis
    assert result.stop_reason == "early_stop" and "Still unresolved" not in syn.context
    assert "His child is Dean Miller" in syn.context


def test_a_corpus_without_triplets_is_refused_before_any_llm_call():
    from engine.methods.t2rag import NO_TRIPLETS
    from tests.doubles import HashEmbedder, MemoryCorpus

    unextracted = MemoryCorpus(HashEmbedder(), bobby_mcgee_corpus().chunks(), [])  # chunks, no triplet yet
    assert unextracted.counts().triplets == 0
    reasoner = _bridge_reasoner()
    result = T2RAG(reasoner).answer(BRIDGE, unextracted)
    assert result.error == NO_TRIPLETS and result.stop_reason == "no_triplets"
    assert result.usage.calls == 0 and reasoner.solve_inputs == [] and result.answer == ""
