"""T2RAG's reference round loop (rockcor/T2RAG @ 72c43bd3, src/TRAG.py), restated; see README.md.

A clue is a dict with subject / predicate / object. The LLM calls are replaced by `resolve`, a
function (round, traceable, fuzzy, propositions, passages) -> (fully_resolved, newly_traceable)
standing for `resolve_clues` + `_parse_combined_clue_response`; the embedding model by `embed`
(texts -> unit row vectors). Propositions map to ONE passage each: the last one stating them
(`proposition_to_passage[proposition] = ...` overwritten per document).
"""

import numpy as np

QUESTION_WORDS = ["what", "who", "where", "when", "why", "how", "which", "whose"]


def q_count(clue):
    return sum(value.count("?") for value in clue.values())


def dedupe(clues):
    """`_deduplicate_clues` (and the same step in `reason_and_form_triples`)."""
    out, seen = [], set()
    for c in clues:
        key = (
            c.get("subject", "").strip().lower(),
            c.get("predicate", "").strip().lower(),
            c.get("object", "").strip().lower(),
        )
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def classify(triples):
    """`reason_and_form_triples`: (fuzzy, traceable, resolved) by the number of '?' characters."""
    fuzzy, traceable, resolved = [], [], []
    for t in dedupe(triples):
        n = q_count(t)
        (fuzzy if n >= 2 else traceable if n == 1 else resolved).append(t)
    return fuzzy, traceable, resolved


def has_unresolved(fuzzy, traceable):
    return any(q_count(c) >= 2 for c in fuzzy) or any(q_count(c) == 1 for c in traceable)


def query_propositions(traceable, query):
    """Step 2.1: each clue's parts not starting with '?', joined; then the question, lower-cased,
    with the question words removed as substrings and '?' removed."""
    out = []
    for clue in traceable:
        parts = [clue[k] for k in ("subject", "predicate", "object") if clue.get(k) and not clue[k].startswith("?")]
        if parts:
            out.append(" ".join(parts))
    filtered = query
    for w in QUESTION_WORDS:
        filtered = filtered.lower().replace(w, "").strip()
    filtered = filtered.replace("?", "").strip()
    if filtered:
        out.append(filtered)
    return out


def retrieve(traceable, query, propositions, prop_vecs, passage_of, embed, k):
    """`retrieve_and_double_check`: the max similarity of each stored proposition over the query
    propositions, walked best first (np.argsort(...)[::-1]) until k distinct passages."""
    queries = query_propositions(traceable, query)
    if not queries or not len(propositions):
        return queries, [], []
    sims = prop_vecs @ embed(queries).T
    best = sims.max(axis=1)
    order = np.argsort(best)[::-1]
    walked, passages, seen = [], [], set()
    for idx in order:
        if len(passages) >= k:
            break
        if best[idx] <= 0:
            continue
        prop = propositions[idx]
        pid = passage_of[prop]
        walked.append(prop)
        if pid not in seen:
            passages.append(pid)
            seen.add(pid)
    return queries, walked, passages


def trag_qa(query, triples, propositions, prop_vecs, passage_of, embed, resolve, k=5, max_steps=3):
    """`trag_qa`: rounds while a clue is open and fewer than max_steps ran. Returns one record per
    round (queries, walked propositions, passages, clues before) and the final clues."""
    fuzzy, traceable, resolved = classify(triples)
    rounds = []
    it = 0
    while it < max_steps and has_unresolved(fuzzy, traceable):
        it += 1
        queries, walked, passages = retrieve(traceable, query, propositions, prop_vecs, passage_of, embed, k)
        rounds.append(
            {
                "queries": queries,
                "walked": walked,
                "passages": passages,
                "traceable": list(traceable),
                "fuzzy": list(fuzzy),
            }
        )
        if not walked and not passages:  # resolve_clues: nothing retrieved, every clue kept
            newly_resolved, newly_traceable, rem_t, rem_f = [], [], list(traceable), list(fuzzy)
        else:
            newly_resolved, newly_traceable = resolve(it, traceable, fuzzy, walked, passages)
            newly_resolved, newly_traceable = dedupe(newly_resolved), dedupe(newly_traceable)
            rem_t, rem_f = [], []  # "No unresolved clues remain after combined resolution"
        resolved.extend(newly_resolved)
        traceable = []
        for clue in newly_traceable + rem_t:
            n = q_count(clue)
            if n == 1:
                traceable.append(clue)
            elif n == 0:
                resolved.append(clue)
        fuzzy = rem_f
        if not has_unresolved(fuzzy, traceable):
            break
    resolved = dedupe(resolved)
    return rounds, resolved + traceable
