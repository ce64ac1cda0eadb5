"""Issue 29: the offline reasoner shows the method on a newcomer's own documents.

Each decomposition rule is pinned by a real question (HotpotQA train and MuSiQue-Ans, copied in
tests/fixtures/qa/ with their attribution; the test checks each question is still there), and the
rules carry no entity of their own: the end-to-end test runs on invented documents
(tests/fixtures/offline_hops/) whose names no rule could know.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from engine.reasoners.base import Evidence, QueryTriplet

FIXTURE = Path(__file__).parents[2] / "fixtures" / "offline_hops" / "corpus.json"
RULES = Path(__file__).resolve().parents[3] / "engine" / "reasoners" / "offline" / "questions"


# --- decomposition: one real question per rule ----------------------------------------------------


@pytest.mark.parametrize(
    "rule, question, inner, outer",
    [
        # contact clause: "the city CKIS-FM serves" (MuSiQue)
        (
            "contact",
            "From where do buses leave the city CKIS-FM serves?",
            ("CKIS-FM", "serves", "?city"),
            ("?city", "buses leave", "?answer"),
        ),
        # object relative with its subject named: "the country that the German Socialist Party was part of" (MuSiQue)
        (
            "object relative",
            "Who constituted the freikorps in the country that the German Socialist Party was part of?",
            ("German Socialist Party", "part of", "?country"),
            ("?country", "constituted freikorps", "?answer"),
        ),
        # where-clause under a longer noun phrase: "the body of water where X is located" (MuSiQue)
        (
            "where",
            "What is the source of the body of water where Augrabies Falls is located?",
            ("Augrabies Falls", "located in", "?water"),
            ("?water", "source", "?answer"),
        ),
        # subject relative with a named object (HotpotQA)
        (
            "subject relative",
            'What is the abbreviation to the magazine that called Qvwm  "an unusually impressive imposter"?',
            ("?magazine", "called", "Qvwm"),
            None,
        ),
        # possessive noun phrase followed by more question (MuSiQue)
        (
            "possessive",
            "What film features Anil Devgan's sibling?",
            ("Anil Devgan", "sibling", "?sibling"),
            ("?sibling", "film features", "?answer"),
        ),
        # a role noun hanging off a name (MuSiQue)
        (
            "role",
            "Who did the creator of Derech Mitzvosecha follow?",
            ("Derech Mitzvosecha", "creator", "?creator"),
            ("?creator", "follow", "?answer"),
        ),
        (
            "role",
            "What did the actress in My Fair Lady win a Tony for?",
            ("My Fair Lady", "actress", "?actress"),
            ("?actress", "win Tony", "?answer"),
        ),
        # a name modifying a role noun (MuSiQue)
        (
            "premodified",
            "Who won the Indy car race in the largest city and capitol of the state where the Oh Yeah performer is from?",  # noqa: E501
            ("Oh Yeah", "performer", "?performer"),
            None,
        ),
    ],
)
def test_a_described_noun_becomes_a_typed_hop(reasoner, real_questions, rule, question, inner, outer):
    assert question in real_questions
    ts, call = reasoner.decompose(question)
    parts = [t.parts for t in ts]
    assert call.parsed["type"] == "nested", (rule, parts)
    assert parts[0] == inner, rule
    if outer:
        assert parts[1] == outer, rule
    # the inner placeholder links the hops: it is the subject of the question's final triplet
    assert any(inner[2] if inner[2].startswith("?") else inner[0] in p for p in parts[1:])
    assert parts[-1][2] == "?answer"


def test_nested_chain_and_possessive_hops_link_through_one_placeholder(reasoner, real_questions):
    # a chain whose named end is a possessive (MuSiQue)
    q = "When did the headquarters city of Kentucky Tavern's manufacturer elect its first black mayor?"
    assert q in real_questions
    ts, _ = reasoner.decompose(q)
    assert ts[0].parts == ("Kentucky Tavern", "manufacturer", "?manufacturer")
    assert ts[1].subject == "?manufacturer" and ts[1].object == "?answer"


def test_a_title_noun_before_a_name_is_not_a_clause(reasoner):
    """ "When was the band Queen formed": reduced to "When was ?band" the rest asks nothing of it."""
    ts, call = reasoner.decompose("When was the band Queen formed?")
    assert call.parsed["type"] != "nested" and ts[0].subject == "Queen"


def test_a_question_naming_nothing_still_gets_a_searchable_triplet(reasoner, real_questions):
    q = "Which of the two tornado outbreaks killed the most people?"  # HotpotQA
    assert q in real_questions
    ts, call = reasoner.decompose(q)
    assert call.parsed["type"] == "definitional" and call.error == ""
    assert [t.parts for t in ts] == [("two tornado outbreaks", "killed most people", "?answer")]
    # "what is" with an "of" phrase: the head noun is the subject, the asked property the relation
    ts, _ = reasoner.decompose("What is the most common type of skin cancer?")
    assert [t.parts for t in ts] == [("skin cancer", "most common type", "?answer")]


def test_no_rule_names_an_entity():
    """The question rules are grammar: no string in them (docstrings aside) holds a capitalised word."""
    for path in RULES.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        exports = {  # the module's public names (`__all__`) are code, not rules
            id(c)
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
            for c in ast.walk(n.value)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | exports:
                words = [w for w in node.value.split() if w[:1].isupper() and w[1:2].islower()]
                assert not words or node.value == "Qxzvplaceholder", (path.name, node.value)


# --- filling respects the placeholder's type -------------------------------------------------------


def test_a_placeholder_takes_a_value_of_its_type(reasoner):
    props = (
        "Saltlight Studio founded in 1989",
        "Saltlight Studio founded by Orla Vennick",
        "Orla Vennick born in Brisk Harbor",
        "Orla Vennick born on 4 May 1958",
    )
    ev = Evidence(propositions=props, chunks=())
    res, call = reasoner.solve(
        "Who founded Saltlight Studio?", [], [QueryTriplet("Saltlight Studio", "founded", "?answer")], ev
    )
    assert res.bindings == {"?answer": "Orla Vennick"} and call.parsed["candidates"][0]["type"] == "person"
    res, _ = reasoner.solve(
        "When was Saltlight Studio founded?", [], [QueryTriplet("Saltlight Studio", "founded", "?answer")], ev
    )
    assert res.bindings == {"?answer": "1989"}
    res, _ = reasoner.solve("Where was Orla Vennick born?", [], [QueryTriplet("Orla Vennick", "born", "?answer")], ev)
    assert res.bindings == {"?answer": "Brisk Harbor"}
    res, _ = reasoner.solve("q", [], [QueryTriplet("Orla Vennick", "born", "?town")], ev)
    assert res.bindings == {"?town": "Brisk Harbor"}
    res, _ = reasoner.solve("q", [], [QueryTriplet("Orla Vennick", "born", "?year")], ev)
    assert res.bindings == {"?year": "4 May 1958"}


def test_a_count_is_not_filled_with_a_calendar_date(reasoner):
    # "how many" asks a quantity: a date holds digits too, but counts nothing
    props = ("Orla Vennick sold more than 9 March 1961", "Orla Vennick sold more than 150 million records")
    res, call = reasoner.solve(
        "How many records did Orla Vennick sell?",
        [],
        [QueryTriplet("Orla Vennick", "sold more than", "?answer")],
        Evidence(propositions=props, chunks=()),
    )
    assert res.bindings == {"?answer": "150 million records"} and call.parsed["candidates"][0]["type"] == "number"


def test_how_many_takes_the_number_that_counts_the_asked_noun(reasoner):
    # the sentence's first number is a span of years; "how many times" asks the count of times
    context = (
        "Brisk Harbor\nBrisk Harbor is a fishing town. In 30 years the plague struck Brisk Harbor 22 times, "
        "from 1400 to 1528."
    )
    answer, call = reasoner.answer("How many times did the plague strike Brisk Harbor?", context, facts=[])
    assert answer == "22", call.parsed


def test_what_county_takes_the_name_that_says_county(reasoner):
    # the relation's word ("county") is inside the answer's own name: the name after it is the state
    context = (
        "Dunmore Quay\nDunmore Quay is a village in the town of Ashby, Kelverton County, New York.\n\n"
        "Orla Vennick\nOrla Vennick was born in Dunmore Quay."
    )
    answer, call = reasoner.answer(
        "What county is Orla Vennick's birthplace a part of?",
        context,
        facts=["Orla Vennick | birthplace | Dunmore Quay"],
    )
    assert answer == "Kelverton County", call.parsed
    # the hop's own value carries the noun too: it is not the answer
    answer, call = reasoner.answer(
        "What county is Orla Vennick's birthplace a part of?",
        "Dunmore County\nDunmore County is a town in Kelverton County.",
        facts=["Orla Vennick | birthplace | Dunmore County"],
    )
    assert answer == "Kelverton County", call.parsed


# --- synthesis answers the final placeholder only --------------------------------------------------


def test_an_intermediate_value_is_never_the_answer(reasoner):
    context = (
        "Saltlight Studio\nSaltlight Studio is an animation studio based in Dunmore Quay. "
        "It was founded by Orla Vennick in 1989."
    )
    answer, call = reasoner.answer(
        "Where was the founder of Saltlight Studio born?", context, facts=["Saltlight Studio | founder | Orla Vennick"]
    )
    assert answer == ""
    # not a failed call: an answer of "not found", the unfilled hop as its reason
    assert not call.error and "?answer unfilled" in call.parsed["why"] and "Orla Vennick" in call.parsed["why"]
    # once the last hop is stated, the answer is its value
    answer, call = reasoner.answer(
        "Where was the founder of Saltlight Studio born?",
        context,
        facts=["Saltlight Studio | founder | Orla Vennick", "Orla Vennick | born | Brisk Harbor"],
    )
    assert answer == "Brisk Harbor" and call.error == ""


def test_the_last_hop_can_come_from_a_sentence_about_the_bound_value(reasoner):
    context = (
        "Brisk Harbor\nBrisk Harbor is a fishing town. Tamsin Oakhurst has led the council of "
        "Brisk Harbor since 2015.\n\nOrla Vennick\nOrla Vennick was born in Brisk Harbor."
    )
    answer, call = reasoner.answer(
        "Who is the mayor of the town Orla Vennick was born in?",
        context,
        facts=["Orla Vennick | born in | Brisk Harbor"],
    )
    assert answer == "Tamsin Oakhurst", call.parsed


def test_the_last_hop_is_the_name_after_its_relation_word(reasoner):
    # the sentence about the bound value names someone else first: the answer follows "godfather"
    context = (
        "Orla Vennick\nOrla Vennick, a pupil of Brann Holt, was raised by her godfather Tobias Wren.\n\n"
        "Saltlight Studio\nSaltlight Studio was founded by Orla Vennick in 1989."
    )
    answer, call = reasoner.answer(
        "Who was the godfather of the founder of Saltlight Studio?",
        context,
        facts=["Saltlight Studio | founder | Orla Vennick"],
    )
    assert answer == "Tobias Wren", call.parsed


# --- end to end: T2RAG on invented documents ------------------------------------------------------


def test_t2rag_offline_walks_two_hops_on_invented_documents(reasoner, workspace):
    from engine.core.chunking import make_doc_id
    from engine.core.types import Document
    from engine.eval.metrics import answer_score
    from engine.methods.t2rag import T2RAG
    from engine.triplets.extraction import run_extraction

    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    docs = [Document(make_doc_id(d["title"], d["text"]), d["title"], d["text"]) for d in raw["documents"]]
    corpus, _, _ = workspace.create_from("hops", docs)
    run_extraction(corpus, reasoner, concurrency=1)
    corpus.refresh_indexes()
    method = T2RAG(reasoner)
    correct, short = [], []
    for q in raw["questions"]:
        result = method.answer(q["question"], corpus)
        if answer_score(result.answer, [q["answer"]]).em:
            correct.append(q["question"])
        if q["hops"] >= 2 and len(result.trace.rounds) < 2:
            short.append(q["question"])
    assert len(raw["questions"]) == 20
    assert len(correct) >= 15, f"{len(correct)}/20 correct"
    assert not short, f"one round only: {short}"


def test_a_hop_no_triplet_states_is_read_off_its_sentence(reasoner):
    """ "Her first novel ... was published by X": no rule triplet, the pronoun names the paragraph's subject."""
    text = (
        'Mira Ostend\nMira Ostend is a writer. Her first novel, "Salt Lamps", was published by '
        "Harrow Lane Press in 2011."
    )
    res = _solve_on_one_chunk(reasoner, text, ("Mira Ostend", "first novel published by", "?house"))
    assert res.bindings == {"?house": "Harrow Lane Press"} and res.sources == {"?house": "C1"}
    # the question's own answer is left to the answer step: no sentence reading for ?answer
    res = _solve_on_one_chunk(reasoner, text, ("Mira Ostend", "first novel published by", "?answer"))
    assert res.bindings == {}


def _solve_on_one_chunk(reasoner, text: str, triplet: tuple[str, str, str]):
    """The solver's bindings for one open triplet against one chunk and no proposition."""
    res, _call = reasoner.solve("q", [], [QueryTriplet(*triplet)], Evidence(propositions=(), chunks=(("c1", text),)))
    return res


def test_an_aside_between_commas_and_a_description_before_the_name_ask_nothing(reasoner, real_questions):
    """ "X, known for ..., is father to which actress": the aside and the words before the name
    describe the subject; only the words after it say the relation."""
    q = (
        "Indian film photographer Jagdish Mali, known for taking images of various celebrities including "
        "Shabana Azmi, is father to which Bollywood actress? "
    )  # HotpotQA
    assert q in real_questions
    ts, _ = reasoner.decompose(q)
    assert [t.parts for t in ts] == [("Jagdish Mali", "father Bollywood actress", "?answer")]
    # the same reading on invented names
    ts, _ = reasoner.decompose("Harbour pilot Orla Vennick, best known for her charts, is mother to which sculptor?")
    assert [t.parts for t in ts] == [("Orla Vennick", "mother sculptor", "?answer")]


def test_the_type_the_question_names_is_not_repeated_in_the_answer(reasoner):
    context = "Orla Vennick\nOrla Vennick was the mother of the sculptor Tamsin Oakhurst."
    answer, call = reasoner.answer(
        "Orla Vennick is mother to which sculptor?", context, facts=["Orla Vennick | mother | sculptor Tamsin Oakhurst"]
    )
    assert answer == "Tamsin Oakhurst", call.parsed


def test_a_named_modifier_of_the_bridge_picks_the_value_that_carries_it(reasoner, real_questions):
    """ "the Adelaide team that was formed ...": the team's name holds "Adelaide"."""
    q = "The Women's National Basketball League includes the Adelaide team that was formed in what year?"  # HotpotQA
    assert q in real_questions
    ts, _ = reasoner.decompose(q)
    assert [t.parts for t in ts] == [
        ("The Women's National Basketball League", "includes Adelaide team", "?team"),
        ("?team", "formed in", "?answer"),
    ]
    text = (
        "Harbour League\nThe Harbour League has six clubs. The Brisk Harbor Gulls, Saltlight Rovers and "
        "Vennick Town are the current league teams sharing a ground."
    )
    res = _solve_on_one_chunk(reasoner, text, ("Harbour League", "includes Saltlight team", "?team"))
    assert res.bindings == {"?team": "Saltlight Rovers"}


@pytest.mark.timeout(60)
def test_open_clues_are_not_facts_and_never_the_answer(reasoner):
    """The paper preset's synthesis lists unresolved triplets among its clues: the offline answer step
    read "?era" as a value, bound ?era to itself and looped for ever (a chain), or answered "?answer"."""
    context = "Tamsin Oakhurst\nTamsin Oakhurst was a harbour pilot in Brisk Harbor."
    answer, call = reasoner.answer(
        "What language were books translated into during the era of Orla Vennick?",
        context,
        facts=["Orla Vennick | era | ?era", "?era | language books translated | ?answer"],
    )
    assert not answer.startswith("?"), call.parsed
    answer, call = reasoner.answer(
        "If Brisk Harbor is a town Saltlight is what?", "", facts=["Brisk Harbor | is | ?answer"]
    )
    assert answer == "" and call.parsed["answer"] == ""
