"""T2RAG's pure rules: classification, wh-word stripping, query building, folding a solver reply, and
the proposition walk's budget over a small in-memory corpus."""

from __future__ import annotations

from engine.methods.t2rag.retrieval import build_queries, retrieve
from engine.methods.t2rag.state import State, apply_solve, classify, known_parts_query, strip_wh_words
from engine.methods.t2rag.trace import RetrievalQuery, RoundTiming, StateTriplet, T2RAGSettings
from engine.reasoners.base import SolveResult
from tests._t2rag_helpers import Q, bobby_mcgee_corpus


def test_classification_counts_distinct_placeholders_and_bare_marks():
    state = State.from_decomposition(
        [
            Q("A", "born in", "B"),
            Q("A", "child", "?c"),
            Q("?x", "child", "?x"),
            Q("?", "directed", "?"),
            Q("?p", "spouse", "?q"),
        ]
    )
    assert [t.id for t in state.resolved] == ["t1"]
    assert [t.id for t in state.searchable] == ["t2", "t3"]  # ?x twice is one placeholder
    assert [t.id for t in state.fuzzy] == ["t4", "t5"]  # two bare ? are two unknowns
    assert classify(StateTriplet("x", "?a", "r", "?b")) == "fuzzy"


def test_wh_words_are_removed_as_whole_words_only():
    assert strip_wh_words("Who wrote the show Whatever Happened?") == "wrote the show Whatever Happened?"
    assert strip_wh_words("When and where was Howard born?") == "and was Howard born?"


def test_queries_from_known_parts_plus_stripped_question():
    state = State.from_decomposition([Q("Roger Miller", "child", "?child"), Q("?child", "spouse", "?s")])
    queries = build_queries(state, "Who is the spouse of Roger Miller's child?", T2RAGSettings())
    assert [(q.text, q.kind) for q in queries] == [
        ("Roger Miller child", "triplet"),
        ("is the spouse of Roger Miller's child?", "question_stripped"),
    ]
    off = build_queries(state, "Who?", T2RAGSettings(question_query=False))
    assert [q.text for q in off] == ["Roger Miller child"]
    assert known_parts_query(StateTriplet("t", "?a", "born in", "Paris")) == "born in Paris"


def test_bare_placeholder_filled_from_a_returned_triplet():
    state = State.from_decomposition([Q("Film A", "director", "?"), Q("Film B", "director", "?")])
    out = apply_solve(state, SolveResult(triplets=(Q("Film B", "director", "Bob Jones"),)))
    assert out.newly_resolved == ["t2"] and [t.id for t in state.searchable] == ["t1"]
    # an ambiguous bare binding is refused rather than guessed
    state2 = State.from_decomposition([Q("Film A", "director", "?"), Q("Film B", "director", "?")])
    out2 = apply_solve(state2, SolveResult(bindings={"?": "Bob Jones"}))
    assert "ambiguous" in out2.bindings[0].note and len(state2.searchable) == 2


def test_empty_values_are_not_bound():
    state = State.from_decomposition([Q("Film A", "director", "?d")])
    out = apply_solve(state, SolveResult(bindings={"?d": "Unknown"}, triplets=(Q("Film A", "director", "none"),)))
    assert out.bindings == [] and [t.id for t in state.searchable] == ["t1"]


def test_binding_is_case_insensitive_and_reaches_every_holder():
    state = State.from_decomposition(
        [Q("X", "performer", "?Performer"), Q("?performer", "child", "?c"), Q("?performer", "born", "?b")]
    )
    out = apply_solve(state, SolveResult(bindings={"?PERFORMER": "Kris"}))
    assert out.bindings[0].applied_to == ["t1", "t2", "t3"]
    assert sorted(out.new_searchable) == ["t2", "t3"] and [t.id for t in state.resolved] == ["t1"]


def _walk(corpus, texts, settings, seen=frozenset()):
    queries = [RetrievalQuery(t, "triplet") for t in texts]
    return retrieve(corpus, queries, settings, set(seen), RoundTiming())


def test_walk_stops_at_k_distinct_chunks_and_maps_shared_propositions_to_all():
    corpus = bobby_mcgee_corpus()
    got = _walk(corpus, ["Me and Bobby McGee song by Kris Kristofferson"], T2RAGSettings(k=2))
    top = got.walked[0]
    assert top.text == "Me and Bobby McGee song by Kris Kristofferson"
    assert top.chunk_ids == ["song#0", "kris#0"] and top.new_chunk_ids == ["song#0", "kris#0"]
    assert [c.chunk_id for c in got.chunks] == ["song#0", "kris#0"] and len(got.walked) == 1
    for k in (1, 3, 4):  # 4 chunks state a proposition sharing a word with the query
        got = _walk(corpus, ["Me and Bobby McGee"], T2RAGSettings(k=k))
        assert len(got.chunks) == k == len({c for w in got.walked for c in w.new_chunk_ids})
        scores = [w.score for w in got.walked]
        assert scores == sorted(scores, reverse=True)


def test_global_pool_keeps_each_propositions_best_score_over_queries():
    corpus = bobby_mcgee_corpus()
    got = _walk(corpus, ["Alice Smith born in", "Film B director"], T2RAGSettings(k=2))
    assert corpus.embed_calls == 1 and corpus.search_calls == 1 and corpus.searched_k == [50]
    # the strongest hit of either query wins the budget, whichever query found it
    assert {w.query_index for w in got.walked} == {0, 1}
    assert {c.chunk_id for c in got.chunks} == {"alice#0", "film#1"}
    # both queries' candidates merged, each once; a proposition similar to neither is no candidate
    from tests.doubles import hash_embed

    sims = (
        hash_embed([t.proposition for t in corpus.triplets()])
        @ hash_embed(["Alice Smith born in", "Film B director"]).T
    )
    assert got.pool_size == int((sims.max(axis=1) > 0).sum()) < corpus.counts().triplets


def test_skip_seen_chunks_does_not_count_or_show_them():
    corpus = bobby_mcgee_corpus()
    got = _walk(
        corpus,
        ["Me and Bobby McGee song by Kris Kristofferson"],
        T2RAGSettings(k=2, skip_seen_chunks=True),
        seen={"song#0"},
    )
    assert "song#0" not in [c.chunk_id for c in got.chunks] and len(got.chunks) == 2
    assert got.walked[0].new_chunk_ids == ["kris#0"]
