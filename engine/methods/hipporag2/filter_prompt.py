"""HippoRAG 2's recognition-memory prompt, as the authors' code sends it: their data, not ours.

Copied from OSU-NLP-Group/HippoRAG @ c617143f01477243992a63b2e2151cc003dd3b21,
`src/hipporag/prompts/filter_default_prompt.py` (`best_dspy_prompt`, added with HippoRAG 2 in
191f281), MIT licence, Copyright (c) 2025 OSU Natural Language Processing. The authors' `DSPyFilter`
(`src/hipporag/rerank.py`) sends `SYSTEM` (DSPy's field preamble around the paper's Triple Filter
instruction) as the system message, then each of `DEMOS` as a user message (`INPUT_TEMPLATE`) and
an assistant reply (`OUTPUT_TEMPLATE`), then the question's own user message. The demonstrations
are the DSPy-optimized few-shot examples (2WikiMultihopQA-style questions with their candidate
and kept facts), kept character for character (the strings are only split across lines here).
"""

from __future__ import annotations

SYSTEM = (
    "Your input fields are:\n1. `question` (str): Query for retrieval\n2. `fact_before_filter` (str): "
    "Candidate facts to be filtered\n\nYour output fields are:\n1. `fact_after_filter` (Fact): Filtered "
    "facts in JSON format\n\nAll interactions will be structured in the following way, with the appropriate "
    "values filled in.\n\n[[ ## question ## ]]\n{question}\n\n[[ ## fact_before_filter ## ]]\n{fact_before_filt"
    "er}\n\n[[ ## fact_after_filter ## ]]\n{fact_after_filter}        # note: the value you produce "
    'must be pareseable according to the following JSON schema: {"type": "object", "properties": {"fact": '
    '{"type": "array", "description": "A list of facts, each fact is a list of 3 strings: [subject,'
    ' predicate, object]", "items": {"type": "array", "items": {"type": "string"}}, "title": "Fact"}},'
    ' "required": ["fact"], "title": "Fact"}\n\n[[ ## completed ## ]]\n\nIn adhering to this structure,'
    " your objective is: \n        You are a critical component of a high-stakes question-answering "
    "system used by top researchers and decision-makers worldwide. Your task is to filter facts based "
    "on their relevance to a given query, ensuring that the most crucial information is presented to "
    "these stakeholders. The query requires careful analysis and possibly multi-hop reasoning to connect "
    "different pieces of information. You must select up to 4 relevant facts from the provided candidate "
    "list that have a strong connection to the query, aiding in reasoning and providing an accurate "
    'answer. The output should be in JSON format, e.g., {"fact": [["s1", "p1", "o1"], ["s2", "p2", '
    '"o2"]]}, and if no facts are relevant, return an empty list, {"fact": []}. The accuracy of your '
    "response is paramount, as it will directly impact the decisions made by these high-level stakeholders. "
    "You must only use facts from the candidate list and not generate new facts. The future of critical "
    "decision-making relies on your ability to accurately filter and present relevant information."
)

#: (question, fact_before_filter, fact_after_filter), in the authors' order
DEMOS: tuple[tuple[str, str, str], ...] = (
    (
        "Are Imperial River (Florida) and Amaradia (Dolj) both located in the same country?",
        (
            '{"fact": [["imperial river", "is located in", "florida"], ["imperial river", "is a river '
            'in", "united states"], ["imperial river", "may refer to", "south america"], ["amaradia",'
            ' "flows through", "ro ia de amaradia"], ["imperial river", "may refer to", "united states"]]}'
        ),
        (
            '{"fact":[["imperial river","is located in","florida"],["imperial river","is a river in",'
            '"united states"],["amaradia","flows through","ro ia de amaradia"]]}'
        ),
    ),
    (
        "When is the director of film The Ancestor 's birthday?",
        (
            '{"fact": [["jean jacques annaud", "born on", "1 october 1943"], ["tsui hark", "born on",'
            ' "15 february 1950"], ["pablo trapero", "born on", "4 october 1971"], ["the ancestor",'
            ' "directed by", "guido brignone"], ["benh zeitlin", "born on", "october 14  1982"]]}'
        ),
        '{"fact":[["the ancestor","directed by","guido brignone"]]}',
    ),
    (
        "In what geographic region is the country where Teafuone is located?",
        (
            '{"fact": [["teafuaniua", "is on the", "east"], ["motuloa", "lies between", "teafuaniua"],'
            ' ["motuloa", "lies between", "teafuanonu"], ["teafuone", "is", "islet"], ["teafuone", '
            '"located in", "nukufetau"]]}'
        ),
        '{"fact":[["teafuone","is","islet"],["teafuone","located in","nukufetau"]]}',
    ),
    (
        "When did the director of film S.O.B. (Film) die?",
        (
            '{"fact": [["allan dwan", "died on", "28 december 1981"], ["s o b", "written and directed '
            'by", "blake edwards"], ["robert aldrich", "died on", "december 5  1983"], ["robert siodmak",'
            ' "died on", "10 march 1973"], ["bernardo bertolucci", "died on", "26 november 2018"]]}'
        ),
        '{"fact":[["s o b","written and directed by","blake edwards"]]}',
    ),
    (
        ("Do both films: Gloria (1980 Film) and A New Life (Film) have the directors from the same country?"),
        (
            '{"fact": [["sebasti n lelio watt", "received acclaim for directing", "gloria"], ["gloria",'
            ' "is", "1980 american thriller crime drama film"], ["a brand new life", "is directed by",'
            ' "ounie lecomte"], ["gloria", "written and directed by", "john cassavetes"], ["a new life",'
            ' "directed by", "alan alda"]]}'
        ),
        (
            '{"fact":[["gloria","is","1980 american thriller crime drama film"],["gloria","written '
            'and directed by","john cassavetes"],["a new life","directed by","alan alda"]]}'
        ),
    ),
    (
        "What is the date of death of the director of film The Old Guard (1960 Film)?",
        (
            '{"fact": [["the old guard", "is", "1960 french comedy film"], ["gilles grangier", "directed",'
            ' "the old guard"], ["the old guard", "directed by", "gilles grangier"], ["the old fritz",'
            ' "directed by", "gerhard lamprecht"], ["oswald albert mitchell", "directed", "old mother '
            'riley series of films"]]}'
        ),
        (
            '{"fact":[["the old guard","is","1960 french comedy film"],["gilles grangier","directed",'
            '"the old guard"],["the old guard","directed by","gilles grangier"]]}'
        ),
    ),
    (
        "When is the composer of film Aulad (1968 Film) 's birthday?",
        (
            '{"fact": [["aulad", "has music composed by", "chitragupta shrivastava"], ["aadmi sadak '
            'ka", "has music by", "ravi"], ["ravi shankar sharma", "composed music for", "hindi films"],'
            ' ["gulzar", "was born on", "18 august 1934"], ["aulad", "is a", "1968 hindi language drama '
            'film"]]}'
        ),
        (
            '{"fact":[["aulad","has music composed by","chitragupta shrivastava"],["aulad","is a","1968 '
            'hindi language drama film"]]}'
        ),
    ),
    (
        "How many households were in the city where Angelical Tears located?",
        (
            '{"fact": [["dow city", "had", "219 households"], ["tucson", "had", "229 762 households"],'
            ' ["atlantic city", "has", "15 504 households"], ["angelical tears", "located in", "oklahoma '
            'city"], ["atlantic city", "had", "15 848 households"]]}'
        ),
        '{"fact": [["angelical tears", "located in", "oklahoma city"]]}',
    ),
    (
        "Did the movies In The Pope'S Eye and Virgin Mountain, originate from the same country?",
        (
            '{"fact": [["virgin mountain", "released in", "icelandic cinemas"], ["virgin mountain",'
            ' "directed by", "dagur k ri"], ["virgin mountain", "icelandic title is", "f si"], ["virgin '
            'mountain", "won", "2015 nordic council film prize"], ["virgin mountain", "is a", "2015 '
            'icelandic drama film"]]}'
        ),
        (
            '{"fact": [["virgin mountain", "released in", "icelandic cinemas"], ["virgin mountain",'
            ' "directed by", "dagur k ri"], ["virgin mountain", "icelandic title is", "f si"], ["virgin '
            'mountain", "won", "2015 nordic council film prize"], ["virgin mountain", "is a", "2015 '
            'icelandic drama film"]]}'
        ),
    ),
    (
        ("Which film has the director who died earlier, The Virtuous Model or Bulldog Drummond'S Peril?"),
        (
            '{"fact": [["the virtuous model", "is", "1919 american silent drama film"], ["bulldog drummond '
            's peril", "directed by", "james p  hogan"], ["the virtuous model", "directed by", "albert '
            'capellani"], ["bulldog drummond s revenge", "directed by", "louis king"], ["bulldog drummond '
            's peril", "is", "american film"]]}'
        ),
        (
            '{"fact": [["the virtuous model", "is", "1919 american silent drama film"], ["bulldog drummond '
            's peril", "directed by", "james p  hogan"], ["the virtuous model", "directed by", "albert '
            'capellani"], ["bulldog drummond s peril", "is", "american film"]]}'
        ),
    ),
)

#: `DSPyFilter.one_input_template` and `one_output_template`
INPUT_TEMPLATE = (
    "[[ ## question ## ]]\n{question}\n\n[[ ## fact_before_filter ## ]]\n{fact_before_filter}\n\n"
    "Respond with the corresponding output fields, starting with the field `[[ ## fact_after_filter ## ]]` "
    "(must be formatted as a valid Python Fact), and then ending with the marker for `[[ ## completed ## ]]`."
)
OUTPUT_TEMPLATE = "[[ ## fact_after_filter ## ]]\n{fact_after_filter}\n\n[[ ## completed ## ]]"
