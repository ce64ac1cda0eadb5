"""Honest evidence (issue 25, item 4): what the screen says about an answer's evidence is what the
engine verified.

- A T2RAG binding's link is drawn with its source kind: cited (the solver named it and it states
  the value), guessed (no source named; the engine found the value in a walked proposition),
  unverified (the named source does not state it).
- A binding the state ignored (its placeholder was already bound) is not in the answer's chain.
- A fallback round asks the question once (not the question and its wh-stripped form) and shows
  only chunks no earlier round showed.
- KG2RAG's read cap (`max_entity_reads`: an entity's first edges by triplet id) never cuts a seed
  chunk's own triplets, and the cap record carries the entity's true degree.
"""

from __future__ import annotations

import re

import pytest

from components.widgets.evidence_chain import chain_for, chain_html
from engine.core.types import Document
from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.reasoners.base import SolveResult
from engine.store import Workspace
from tests._t2rag_helpers import Q, ScriptedReasoner, bobby_mcgee_corpus
from tests.doubles import HashEmbedder

BRIDGE = "Who is the child of the performer of Me and Bobby McGee?"
DECOMPOSITION = [Q("Me and Bobby McGee", "performer", "?performer"), Q("?performer", "child", "?child")]


def _run(solves, settings=None, decomposition=DECOMPOSITION, question=BRIDGE):
    reasoner = ScriptedReasoner(decomposition=decomposition, solves=solves, answers=["x"])
    return T2RAG(reasoner).answer(question, bobby_mcgee_corpus(), settings)


def _badges(html: str) -> list[str]:
    return re.findall(r'class="tl-source[^"]*"[^>]*>([^<]+)</span>', html)


# --- source-kind badges ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sources, value, badge",
    [
        ({"?performer": "C1"}, "Kris Kristofferson", "cited"),  # the first chunk shown states it
        ({}, "Kris Kristofferson", "guessed"),  # no source named: matched in a walked proposition
        ({"?performer": "C1"}, "Antonio Vivaldi", "unverified"),  # the named chunk does not state it
    ],
)
def test_a_bindings_link_is_drawn_with_how_it_was_made(sources, value, badge):
    result = _run([SolveResult(bindings={"?performer": value}, sources=sources)])
    (b,) = result.trace.rounds[0].bindings
    assert b.applied_to  # the state took it
    html = chain_html(result)
    assert _badges(html) == [badge]
    assert f"?performer = {value}" in html


def test_a_guessed_link_does_not_look_like_a_cited_one():
    cited = chain_html(_run([SolveResult(bindings={"?performer": "Kris Kristofferson"}, sources={"?performer": "C1"})]))
    guessed = chain_html(_run([SolveResult(bindings={"?performer": "Kris Kristofferson"})]))
    assert "cited" in _badges(cited) and "cited" not in _badges(guessed)


# --- bindings the state ignored --------------------------------------------------------------


def test_a_binding_the_state_ignored_is_left_out_of_the_chain():
    # round 2 binds ?performer again (to another value): the state keeps the first, ignores this one
    result = _run(
        [
            SolveResult(bindings={"?performer": "Kris Kristofferson"}),
            SolveResult(bindings={"?performer": "Roger Miller", "?child": "Tracy Kristofferson"}),
        ]
    )
    r2 = result.trace.rounds[1]
    ignored = next(b for b in r2.bindings if b.value == "Roger Miller")
    assert not ignored.applied_to and ignored.note.startswith("ignored")
    claims = [c.claim for c in chain_for(result)]
    assert claims == ["?performer = Kris Kristofferson", "?child = Tracy Kristofferson"]
    assert "Roger Miller" not in chain_html(result).split("<summary>", 1)[1].split("</summary>")[0]


def test_a_refused_binding_reaches_no_chain():
    # a bare ? binding that is ambiguous is refused (not applied); nothing of it reaches the chain
    result = _run(
        [SolveResult(bindings={"?": "Kris Kristofferson"})],
        decomposition=[Q("Film A", "director", "?"), Q("Film B", "director", "?")],
        question="Who directed Film A and Film B?",
    )
    assert result.trace.rounds[0].bindings[0].note.endswith("ambiguous")
    assert all("Kris" not in c.claim for c in chain_for(result))
    assert "?" + " = Kris" not in chain_html(result)


# --- one question query per round, fallback rounds show unseen chunks ------------------------


def test_a_fallback_round_asks_the_question_once_and_shows_only_new_chunks():
    # all fuzzy: every round is a fallback round; the solver finds nothing, so the rounds go on
    result = _run(
        [SolveResult(), SolveResult(), SolveResult()],
        T2RAGSettings(k=3, rounds=3),
        decomposition=[Q("?film", "directed by", "?director")],
        question="Which film was directed by whom?",
    )
    rounds = result.trace.rounds
    assert len(rounds) >= 2
    for r in rounds:
        assert [q.kind for q in r.queries] == ["question"]  # not also "question_stripped"
        assert r.queries[0].text == "film was directed by ?"  # the question minus its wh-words
    shown = [c.chunk_id for r in rounds for c in r.chunks]
    assert len(shown) == len(set(shown)), "a fallback round re-showed a chunk an earlier round showed"


def test_with_question_query_off_the_fallback_is_the_question_as_typed():
    q = "Which film was directed by whom?"
    result = _run(
        [SolveResult()],
        T2RAGSettings(question_query=False, rounds=1),
        decomposition=[Q("?film", "directed by", "?director")],
        question=q,
    )
    assert [(x.kind, x.text) for x in result.trace.rounds[0].queries] == [("question", q)]


def test_a_triplet_round_still_adds_the_stripped_question_once():
    result = _run([SolveResult(bindings={"?performer": "Kris Kristofferson"}), SolveResult()])
    kinds = [q.kind for q in result.trace.rounds[0].queries]
    assert kinds == ["triplet", "question_stripped"]


# --- KG2RAG's read cap keeps the seed's own triplets and records the true degree -------------


@pytest.fixture()
def hub_corpus(tmp_path):
    """ "Paris" and "France" each have 12 edges stored before the one fact a seed chunk states about
    both ("Paris capital of France"): each hub's first edges by triplet id are other facts."""
    c = Workspace(tmp_path / "ws", embedder=HashEmbedder()).create("hub")
    docs = [Document(f"town{i}", f"Town {i}", f"Town {i} is twinned with Paris.", f"town{i}.txt") for i in range(12)]
    docs += [
        Document(f"region{i}", f"Region {i}", f"Region {i} is part of France.", f"region{i}.txt") for i in range(12)
    ]
    docs.append(Document("seed", "Paris", "Paris is the capital of France.", "seed.txt"))
    c.add_documents(docs)
    by_doc = {ch.doc_id: ch.chunk_id for ch in c.chunks()}
    rows = [(by_doc[f"town{i}"], f"Town {i}", "twinned with", "Paris") for i in range(12)]
    rows += [(by_doc[f"region{i}"], f"Region {i}", "part of", "France") for i in range(12)]
    rows.append((by_doc["seed"], "Paris", "capital of", "France"))
    c.import_triplets(rows)
    return c, by_doc


def test_the_read_cap_keeps_the_seed_chunks_own_triplets(hub_corpus):
    corpus, by_doc = hub_corpus
    own = {t.triplet_id for t in corpus.triplets(chunk_ids=[by_doc["seed"]])}
    assert len(own) == 1 and min(own) > 24  # stored last
    capped = corpus.entity_neighbourhood(["france", "paris"], 1, per_entity=4)
    assert not own & {k for *_, k in capped.edges(keys=True)}  # storage order cut it before
    kept = corpus.entity_neighbourhood(["france", "paris"], 1, per_entity=4, keep=sorted(own))
    assert own <= {k for *_, k in kept.edges(keys=True)}
    # the true degree of each entity the cap cut, not the 4 edges read
    assert kept.graph["entity_degrees"] == {"france": 13, "paris": 13}
    assert corpus.entity_neighbourhood(["paris"], 1, per_entity=20).graph["entity_degrees"] == {}


def test_kg2rag_under_a_read_cap_organizes_the_seed_fact_and_notes_the_true_degree(hub_corpus):
    corpus, by_doc = hub_corpus

    class Silent:
        name = "silent"

        def answer(self, question, context, *, facts=None):
            from engine.llm.base import LLMCall

            return "", LLMCall(job="answer", model="silent")

    s = KG2RAGSettings(k=1, seeds="dense", max_entity_reads=4, max_entity_edges=30, hops=1)
    res = KG2RAG(Silent()).answer("Paris is the capital of which country, France?", corpus, s)
    assert res.trace.seeds[0].chunk_id == by_doc["seed"]
    # the seed's own fact is an edge of the weighted graph (the read cap cut it before)
    assert any(e.predicate == "capital of" and e.chunk_id == by_doc["seed"] for e in res.trace.edges)
    caps = {c.entity: c for h in res.trace.hops for c in h.entity_caps}
    # 4 edges read by the cap and the seed's own fact: 8 never read
    assert caps["paris"].degree == 13 and caps["paris"].unread == 13 - 4 - 1
    assert res.evidence_chunk_ids[0] == by_doc["seed"]


def test_the_dependency_graph_shows_the_value_the_state_took_not_an_ignored_one():
    from components.methods.t2rag import dependency_graph

    result = _run(
        [
            SolveResult(bindings={"?performer": "Kris Kristofferson"}),
            SolveResult(bindings={"?performer": "Roger Miller", "?child": "Tracy Kristofferson"}),
        ]
    )
    nodes, _ = dependency_graph(result.trace, 2)
    labels = {n.label for n in nodes}
    assert "?performer = Kris Kristofferson" in labels and not any("Roger Miller" in x for x in labels)
    # round 2 filled ?child; ?performer was filled in round 1, not "this round"
    fresh = {n.label for n in nodes if n.color == "#f4a261"}
    assert fresh == {"?child = Tracy Kristofferson"}
