"""The offline reasoner: rule extraction, question decomposition, solving and answering with no model.

Hand-written sentences pin each rule; real HotpotQA paragraphs and questions (from the shared
samples) check the rules hold on text nobody wrote for them. The end-to-end check at the bottom
runs the T2RAG-style loop (extract -> decompose -> solve -> answer) on ten real questions.
"""

from __future__ import annotations

import json
import re
import string

import pytest

from engine.reasoners.base import Evidence, QueryTriplet, Reasoner
from engine.reasoners.offline import OfflineReasoner


@pytest.fixture(scope="module")
def hotpot(shared_data):
    with open(shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json", encoding="utf-8") as fh:
        return json.load(fh)


def _paragraph(records, title: str) -> str:
    for rec in records:
        for t, sents in rec["context"]:
            if t == title:
                return "".join(sents)
    raise KeyError(title)


def _question(records, text: str) -> dict:
    return next(r for r in records if r["question"].startswith(text))


# --- the record every job leaves in the trace --------------------------------------------------


def test_every_job_is_labelled_offline_rules_and_free(reasoner):
    assert isinstance(reasoner, Reasoner)
    assert reasoner.name == "offline-rules" and reasoner.supports_free_text is False
    triplets, call = reasoner.extract("Inception", "Inception is a film directed by Christopher Nolan.")
    assert call.job == "extract" and call.model == "offline-rules"
    assert call.prompt_tokens == 0 and call.completion_tokens == 0 and call.cost == 0.0 and call.latency >= 0
    assert call.messages[0]["role"] == "user" and "Inception" in call.messages[0]["content"]
    assert json.loads(call.response) == {"triples": [list(t) for t in triplets]}
    _, dcall = reasoner.decompose("Who is older, Sid Haig or Vic Darchinyan?")
    assert dcall.model == "offline-rules" and dcall.parsed["type"] == "comparison"
    with pytest.raises(NotImplementedError, match="real LLM"):
        reasoner.chat("cot", [{"role": "user", "content": "think step by step"}])


# --- 1. extract ------------------------------------------------------------------------------


def test_extract_copula_birth_passive_pronoun_and_possessive(reasoner):
    text = (
        "Christopher Edward Nolan (born 30 July 1970) is an English-American film director. "
        "He was born in London. His wife is Emma Thomas. Nolan married Emma Thomas in 1997."
    )
    triplets, _ = reasoner.extract("Christopher Nolan", text)
    assert ("Christopher Nolan", "born on", "30 July 1970") in triplets
    assert ("Christopher Nolan", "is", "English-American film director") in triplets
    assert ("Christopher Nolan", "born in", "London") in triplets  # "He" is the paragraph's title
    assert ("Christopher Nolan", "wife", "Emma Thomas") in triplets  # "His wife is ..."
    assert ("Christopher Nolan", "full name", "Christopher Edward Nolan") in triplets
    assert ("Christopher Nolan", "married", "Emma Thomas") in triplets  # "Nolan" is the title's name
    assert ("Christopher Nolan", "full name", "Nolan") not in triplets

    film, _ = reasoner.extract(
        "Inception",
        "Inception is a 2010 science fiction film written and directed "
        "by Christopher Nolan. The film stars Leonardo DiCaprio.",
    )
    assert ("Inception", "directed by", "Christopher Nolan") in film
    assert ("Inception", "written by", "Christopher Nolan") in film
    assert ("Inception", "is", "2010 science fiction film") in film
    assert ("Inception", "stars", "Leonardo DiCaprio") in film  # "The film" is the title
    # filtered: no empty part, subject never equals object, no duplicate
    assert len(film) == len(set(film)) and all(s and p and o and s != o for s, p, o in film)


def test_extract_keeps_quiet_when_no_rule_is_sure(reasoner):
    triplets, _ = reasoner.extract("Alû", "The demon has no mouth, lips or ears.")
    assert triplets == []


def test_extract_real_hotpotqa_paragraphs(reasoner, hotpot):
    cases = {
        "Maximum Overdrive": [
            ("Maximum Overdrive", "directed by", "Stephen King"),
            ("Maximum Overdrive", "written by", "Stephen King"),
        ],
        "Grace Krilanovich": [
            ("Grace Krilanovich", "born on", "October 5, 1979"),
            ("Grace Krilanovich", "is", "American author"),
        ],
        "The Exies": [("The Exies", "formed in", "1997")],
        "Circus Diablo": [("Circus Diablo", "formed in", "2006"), ("Circus Diablo", "is", "American rock band")],
        "Two Dollar Radio": [("Two Dollar Radio", "based in", "Columbus, Ohio")],
        "Carl Philipp Emanuel Bach": [
            ("Carl Philipp Emanuel Bach", "born on", "8 March 1714"),
            ("Carl Philipp Emanuel Bach", "died on", "14 December 1788"),
        ],
        "Sid Haig": [("Sid Haig", "born on", "July 14, 1939")],
        "Formula One Arcade": [("Formula One Arcade", "developed by", "Studio 33")],
        "Kerry Saxby-Junna": [("Kerry Saxby-Junna", "born in", "Young, New South Wales")],
    }
    for title, expected in cases.items():
        triplets, _ = reasoner.extract(title, _paragraph(hotpot, title))
        for t in expected:
            assert t in triplets, (title, t, triplets)


# --- 2. decompose ----------------------------------------------------------------------------


def _parts(triplets):
    return [t.parts for t in triplets]


def test_decompose_bridge_chains(reasoner):
    ts, call = reasoner.decompose("What is the nationality of the director of Inception?")
    assert _parts(ts) == [("Inception", "director", "?director"), ("?director", "nationality", "?answer")]
    assert call.parsed["type"] == "chain"
    ts, _ = reasoner.decompose("Who is the child of the performer of Me and Bobby McGee?")
    assert _parts(ts) == [("Me and Bobby McGee", "performer", "?performer"), ("?performer", "child", "?answer")]
    ts, _ = reasoner.decompose("When was the director of Inception born?")
    assert _parts(ts) == [("Inception", "director", "?director"), ("?director", "born", "?answer")]
    ts, call = reasoner.decompose("Who directed the film that was shot in or around Leland, North Carolina in 1986")
    assert call.parsed["type"] == "relative"
    assert _parts(ts) == [("?film", "shot in or around", "Leland, North Carolina"), ("?film", "directed by", "?answer")]


def test_decompose_comparisons_from_hotpotqa(reasoner):
    ts, call = reasoner.decompose("Which band was formed first The Exies or Circus Diablo ?")
    assert _parts(ts) == [("The Exies", "formed", "?a"), ("Circus Diablo", "formed", "?b")]
    assert call.parsed["op"] == "earlier"
    ts, call = reasoner.decompose("Who is the oldest, Sid Haig or Vic Darchinyan?")
    assert _parts(ts) == [("Sid Haig", "born on", "?a"), ("Vic Darchinyan", "born on", "?b")]
    ts, call = reasoner.decompose("Which magazine was published first, Guitar World or Science News?")
    assert [t.subject for t in ts] == ["Guitar World", "Science News"] and call.parsed["op"] == "earlier"
    _, call = reasoner.decompose("Which plant is larger, the Pterocarya or the Cotula?")
    assert call.parsed["entities"] == ["Pterocarya", "Cotula"] and call.parsed["op"] == "larger"


def test_decompose_2wiki_shapes(reasoner, shared_data):
    questions = {}
    with open(shared_data / "hoprag_quickstart" / "wiki_example.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            questions[rec["question"]] = rec
    # titles with small words survive, and the compared value belongs to each film's director
    q = "Which film has the director born earlier, The Temptation Of Carlton Earle or The Steel Helmet?"
    assert q in questions
    ts, call = reasoner.decompose(q)
    assert _parts(ts) == [
        ("The Temptation Of Carlton Earle", "director", "?director_a"),
        ("?director_a", "born on", "?a"),
        ("The Steel Helmet", "director", "?director_b"),
        ("?director_b", "born on", "?b"),
    ]
    assert call.parsed["via"] == "director" and call.parsed["op"] == "earlier"
    q = "Where was the place of death of the director of film The Hi-Jackers?"
    assert q in questions
    ts, _ = reasoner.decompose(q)
    assert _parts(ts) == [("The Hi-Jackers", "director", "?director"), ("?director", "place of death", "?answer")]
    ts, _ = reasoner.decompose("Who is Konrad V Kantner's paternal grandfather?")
    assert _parts(ts) == [("Konrad V Kantner", "paternal grandfather", "?answer")]
    ts, call = reasoner.decompose("Which album came out first, Stands For Decibels or Pleasure Victim?")
    assert [t.subject for t in ts] == ["Stands For Decibels", "Pleasure Victim"] and call.parsed["op"] == "earlier"


def test_decompose_yes_no(reasoner):
    ts, call = reasoner.decompose("Were Scott Derrickson and Ed Wood of the same nationality?")
    assert _parts(ts) == [("Scott Derrickson", "nationality", "?a"), ("Ed Wood", "nationality", "?b")]
    assert call.parsed["type"] == "yesno" and call.parsed["op"] == "same"
    ts, call = reasoner.decompose("Are Christopher Nolan and Sathish Kalathil both film directors?")
    assert _parts(ts) == [("Christopher Nolan", "is", "?a"), ("Sathish Kalathil", "is", "?b")]
    assert call.parsed["op"] == "both" and call.parsed["attribute"] == "film directors"
    _, call = reasoner.decompose("Are Nantong and Jingdezhen situated in the same province ?")
    assert call.parsed["attribute"] == "province"
    # a film named "Do ..." is not a yes/no question
    _, call = reasoner.decompose("Do Lafzon Ki Kahani, is a 2016 Indian film, released in which year?")
    assert call.parsed["type"] != "yesno"


def test_decompose_falls_back_to_one_triplet(reasoner):
    ts, call = reasoner.decompose("If Gallu is a demon Lilu is what?")
    # the condition sets up an analogy: the question proper is "Lilu is what?", in the sense of "demon"
    assert [t.parts for t in ts] == [("Lilu", "is", "?answer")]
    assert call.parsed["type"] == "fallback" and call.parsed["like"] == "demon"
    ts, call = reasoner.decompose("what is it?")
    assert ts == [] and call.error


@pytest.mark.parametrize(
    "question, triplets",
    [
        (
            "Scott Howell is a consultant who has worked with the mayor of what city?",
            [("Scott Howell", "worked with", "?mayor"), ("?mayor", "mayor of", "?answer")],
        ),
        (
            "From 1945-1949 Dick Humbert played for an NFL team based in what state?",
            [("Dick Humbert", "played for", "?team"), ("?team", "based in", "?answer")],
        ),
        (
            "At the 2011 census, what was the population of the city where Kerry Saxby-Junna was born?",
            [("Kerry Saxby-Junna", "born in", "?city"), ("?city", "population", "?answer")],
        ),
        (
            "The Women's National Basketball League includes the Adelaide team that was formed in what year?",
            # the name modifying the bridge noun is searched with it (test_offline_hops.py)
            [
                ("The Women's National Basketball League", "includes Adelaide team", "?team"),
                ("?team", "formed in", "?answer"),
            ],
        ),
        (
            "Notable speakers at the Brisbane Institute include a painter known for his precisionist depictions of what?",  # noqa: E501
            [
                ("Brisbane Institute", "include", "?painter"),
                ("?painter", "known for his precisionist depictions of", "?answer"),
            ],
        ),
    ],
)
def test_decompose_bridge_questions_into_two_hops(reasoner, question, triplets):
    """A described but unnamed noun between the named entity and the asked property is the bridge."""
    ts, call = reasoner.decompose(question)
    assert [t.parts for t in ts] == triplets and call.parsed["type"] == "bridge"


def test_a_typed_placeholder_picks_a_value_of_its_type(reasoner):
    """ "born in" alone wants a date; `?city` says the bridge is a place."""
    props = ("Kerry Saxby-Junna born in Young, New South Wales", "Kerry Saxby-Junna born on 2 June 1961")
    ev = Evidence(propositions=props, chunks=())
    res, _ = reasoner.solve("q", [], [QueryTriplet("Kerry Saxby-Junna", "born in", "?city")], ev)
    assert res.bindings == {"?city": "Young, New South Wales"} and res.sources == {"?city": "P1"}
    res, _ = reasoner.solve("q", [], [QueryTriplet("Kerry Saxby-Junna", "born in", "?year")], ev)
    assert res.bindings == {"?year": "2 June 1961"}


def test_the_answer_to_what_state_is_the_state(reasoner):
    answer, _ = reasoner.answer(
        "From 1945-1949 Dick Humbert played for an NFL team based in what state?",
        "",
        facts=[
            "Dick Humbert | played for | Philadelphia Eagles",
            "Philadelphia Eagles | based in | Philadelphia, Pennsylvania",
        ],
    )
    assert answer == "Pennsylvania"
    answer, _ = reasoner.answer(
        "Where are the Philadelphia Eagles based?",
        "",
        facts=["Philadelphia Eagles | based in | Philadelphia, Pennsylvania"],
    )
    assert answer == "Philadelphia, Pennsylvania"


# --- 3. solve --------------------------------------------------------------------------------

PROPS = (
    "Inception directed by Christopher Nolan",
    "Inception stars Leonardo DiCaprio",
    "Christopher Nolan is English-American film director",
    "Christopher Nolan born on 30 July 1970",
    "Me and Bobby McGee performed by Roger Miller",
    "Roger Miller son Dean Miller",
)


def test_solve_binds_placeholders_from_propositions(reasoner):
    ev = Evidence(propositions=PROPS, chunks=())
    res, call = reasoner.solve(
        "Who is the child of the performer of Me and Bobby McGee?",
        [],
        [QueryTriplet("Me and Bobby McGee", "performer", "?performer"), QueryTriplet("?performer", "child", "?answer")],
        ev,
    )
    assert res.bindings == {"?performer": "Roger Miller"}  # the fuzzy triplet waits for the next round
    # the source is the label the proposition has in the solve prompt: the 5th one shown
    assert res.sources["?performer"] == "P5" and PROPS[4] == "Me and Bobby McGee performed by Roger Miller"
    assert res.triplets == (QueryTriplet("Me and Bobby McGee", "performer", "Roger Miller"),)
    assert call.model == "offline-rules" and call.parsed["bindings"] == res.bindings
    res, _ = reasoner.solve("", [], [QueryTriplet("Roger Miller", "child", "?answer")], ev)
    assert res.bindings == {"?answer": "Dean Miller"}
    res, _ = reasoner.solve("", [], [QueryTriplet("Christopher Nolan", "nationality", "?n")], ev)
    assert res.bindings == {"?n": "English-American"}


def test_solve_reads_chunk_text_when_propositions_miss(reasoner):
    ev = Evidence(
        propositions=(),
        chunks=(
            ("c1", "The Exies\nThe Exies were an American rock band from Los Angeles, California, formed in 1997."),
        ),
    )
    res, _ = reasoner.solve("", [], [QueryTriplet("The Exies", "formed", "?a")], ev)
    assert res.bindings == {"?a": "1997"}


def test_solve_leaves_unconvincing_placeholders_open(reasoner):
    ev = Evidence(propositions=PROPS, chunks=())
    res, call = reasoner.solve(
        "", [], [QueryTriplet("Inception", "budget", "?budget"), QueryTriplet("Pulp Fiction", "director", "?d")], ev
    )
    assert res.bindings == {} and res.triplets == ()
    assert len(call.parsed["candidates"]) == 2  # what was tried is in the trace
    # never bind the placeholder to the entity the triplet already names
    ev = Evidence(propositions=("Roger Miller son Roger Miller",), chunks=())
    res, _ = reasoner.solve("", [], [QueryTriplet("Roger Miller", "child", "?c")], ev)
    assert res.bindings == {}


def test_solve_without_an_embedder_uses_word_overlap():
    plain = OfflineReasoner(embedder=None)
    ev = Evidence(propositions=PROPS, chunks=())
    res, _ = plain.solve("", [], [QueryTriplet("Inception", "director", "?d")], ev)
    assert res.bindings == {"?d": "Christopher Nolan"}


# --- 4. answer -------------------------------------------------------------------------------


def test_answer_comparisons_by_dates(reasoner):
    facts = ["Scott Derrickson | born on | July 16, 1966", "Ed Wood | born on | October 10, 1924"]
    assert reasoner.answer("Who was born earlier, Scott Derrickson or Ed Wood?", "", facts=facts)[0] == "Ed Wood"
    assert reasoner.answer("Who is younger, Scott Derrickson or Ed Wood?", "", facts=facts)[0] == "Scott Derrickson"
    band = ["The Exies | formed | 1997", "Circus Diablo | formed | 2006"]
    answer, call = reasoner.answer("Which band was formed first The Exies or Circus Diablo ?", "", facts=band)
    assert answer == "The Exies" and "1997" in call.parsed["how"]


def test_answer_compares_through_a_related_entity(reasoner):
    q = "Which film has the director who died first, The Return Of October or Brilliant Marriage?"
    facts = [
        "The Return Of October | director | Joseph H. Lewis",
        "Brilliant Marriage | director | Phil Rosen",
        "Joseph H. Lewis | died on | August 30, 2000",
        "Phil Rosen | died in | Hollywood, California",
        "Phil Rosen | died on | October 22, 1951",
    ]
    answer, call = reasoner.answer(q, "", facts=facts)
    assert answer == "Brilliant Marriage" and "1951" in call.parsed["how"]  # the city is not a date


def test_solve_keeps_dates_and_places_apart(reasoner):
    ev = Evidence(
        propositions=("Phil Rosen died in Hollywood, California", "Phil Rosen died on October 22, 1951"), chunks=()
    )
    res, _ = reasoner.solve("", [], [QueryTriplet("Phil Rosen", "died", "?d")], ev)
    assert res.bindings == {"?d": "October 22, 1951"}
    res, _ = reasoner.solve("", [], [QueryTriplet("Phil Rosen", "place of death", "?p")], ev)
    assert res.bindings == {"?p": "Hollywood, California"}


def test_answer_yes_no(reasoner):
    q = "Were Scott Derrickson and Ed Wood of the same nationality?"
    same = ["Scott Derrickson | nationality | American", "Ed Wood | nationality | American"]
    assert reasoner.answer(q, "", facts=same)[0] == "yes"
    differ = ["Scott Derrickson | nationality | American", "Ed Wood | nationality | English"]
    assert reasoner.answer(q, "", facts=differ)[0] == "no"
    facts = [
        "Christopher Nolan | is | English-American film director",
        "Sathish Kalathil | is | Indian film and documentary Director and Producer",
    ]
    assert (
        reasoner.answer("Are Christopher Nolan and Sathish Kalathil both film directors?", "", facts=facts)[0] == "yes"
    )
    assert reasoner.answer("Are Christopher Nolan and Sathish Kalathil both board games?", "", facts=facts)[0] == "no"


def test_answer_from_context_only(reasoner):
    context = (
        "Maximum Overdrive\nMaximum Overdrive is a 1986 American science fiction horror comedy film "
        "written and directed by Stephen King. The film stars Emilio Estevez.\n\n"
        "Leland, North Carolina\nLeland is a town in Brunswick County, North Carolina, United States."
    )
    answer, call = reasoner.answer("Who directed Maximum Overdrive?", context)
    assert answer == "Stephen King" and call.error == ""
    answer, _ = reasoner.answer("When was Maximum Overdrive released?", context)
    assert answer == "1986"
    # the comparison rules read the context too
    ctx = (
        "Sid Haig\nSid Haig (born July 14, 1939) is an American actor.\n\n"
        "Vic Darchinyan\nVic Darchinyan (born 7 January 1976) is an Armenian professional boxer."
    )
    assert reasoner.answer("Who is the oldest, Sid Haig or Vic Darchinyan?", ctx)[0] == "Sid Haig"


def test_answer_without_evidence_says_so(reasoner):
    answer, call = reasoner.answer("Who directed Maximum Overdrive?", "")
    assert answer == "" and call.error == "no evidence"
    answer, call = reasoner.answer("Were Scott Derrickson and Ed Wood of the same nationality?", "  ")
    assert answer == "" and call.error == "no evidence"  # no default "no" without evidence


def test_a_clue_only_answer_with_no_usable_clue_is_no_answer_not_an_error(reasoner):
    """Issue 40: T2RAG's paper preset answers a forced stop from its clues alone; when every clue
    still holds a placeholder the rules have nothing to read: "no answer", with the reason."""
    for facts in ([], ["Maximum Overdrive | director | ?"]):
        answer, call = reasoner.answer("Who directed Maximum Overdrive?", "", facts=facts)
        assert answer == "" and call.error == "" and "nothing to read" in call.parsed["why"]
        answer, call = reasoner.answer("Were Scott Derrickson and Ed Wood of the same nationality?", "", facts=facts)
        assert answer == "" and call.error == ""


def test_answer_prefers_resolved_facts(reasoner):
    facts = ["Inception | director | Christopher Nolan", "Christopher Nolan | nationality | English-American"]
    answer, call = reasoner.answer("What is the nationality of the director of Inception?", "", facts=facts)
    assert answer == "English-American" and call.parsed["type"] == "chain"


# --- end to end on real questions --------------------------------------------------------------


def _squad_norm(s: str) -> str:
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


def test_end_to_end_on_ten_hotpotqa_questions(reasoner, hotpot, workspace):
    """The real T2RAG loop over a real corpus (offline extraction), not a re-implementation of it."""
    from engine.core.chunking import ChunkingSettings
    from engine.ingest.datasets import read_dataset
    from engine.methods.t2rag import T2RAG
    from engine.triplets.extraction import run_extraction

    records = hotpot[:10]
    # the gold paragraphs only (20 chunks, as before this test ran the real loop): the test is about the
    # reasoner's hops, not about retrieval among distractors
    gold_only = [
        {**r, "context": [c for c in r["context"] if c[0] in {t for t, _ in r["supporting_facts"]}]} for r in records
    ]
    data = read_dataset("hotpot.json", json.dumps(gold_only))
    corpus = workspace.create("hp10", chunking=ChunkingSettings(mode="paragraph"))
    corpus.add_documents(data.documents)
    run_extraction(corpus, reasoner)
    method = T2RAG(reasoner)
    hits = [_squad_norm(method.answer(r["question"], corpus).answer) == _squad_norm(r["answer"]) for r in records]
    # measured 4/10 when written (9/30 on the bundled 30-question sample); the floor catches regressions
    assert sum(hits) >= 3, hits
