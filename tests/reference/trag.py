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


# --- the LLM replies, as the reference reads them (reason_and_form_triples, _retry_triple_extraction_simple,
# _parse_combined_clue_response, final_qa). `llm(prompt_kind) -> reply` stands for self.llm_model.infer.


def parse_triples_section(reply):
    """`reason_and_form_triples`'s first pass: '|' lines after a line starting "Triples:"."""
    triples, section = [], None
    for line in reply.strip().split("\n"):
        line = line.strip()
        if line.startswith("Reasoning:"):
            section = "reasoning"
        elif line.startswith("Triples:"):
            section = "triples"
        elif line.startswith("Propositions:"):
            section = "propositions"
        elif section == "triples" and "|" in line:
            parts = [p.strip() for p in line.split("|")]
            if len(parts) >= 3:
                triples.append({"subject": parts[0], "predicate": parts[1], "object": parts[2]})
    return triples


def parse_unlabeled(reply):
    """Its second pass: every '|' line outside the headings, numbering and bullets dropped."""
    out = []
    for line in reply.strip().split("\n"):
        line = line.strip()
        if not line or line.lower().startswith(("reasoning:", "triples:", "propositions:")):
            continue
        if "|" in line:
            if ". " in line:
                line = line.split(". ", 1)[-1]
            if "- " in line:
                line = line.replace("- ", "")
            parts = [p.strip().strip('"').strip("'") for p in line.split("|")]
            if len(parts) >= 3:
                out.append({"subject": parts[0], "predicate": parts[1], "object": parts[2]})
    return out


def parse_simple(reply):
    """`_retry_triple_extraction_simple`'s parsing (at most 3)."""
    out = []
    for line in reply.strip().split("\n"):
        line = line.strip()
        if "|" in line and not line.startswith("Question:") and not line.startswith("Examples:"):
            if ". " in line:
                line = line.split(". ", 1)[-1]
            if "- " in line:
                line = line.replace("- ", "")
            parts = [p.strip().strip('"').strip("'") for p in line.split("|")]
            if len(parts) >= 3 and not (parts[0] == "?" and "related" in parts[1].lower() and len(parts[2]) > 30):
                out.append({"subject": parts[0], "predicate": parts[1], "object": parts[2]})
    return out[:3]


def reason_and_form_triples(llm):
    """The decomposition with its retries: the main prompt, then the simple one; when that gives
    nothing a RuntimeError, which the method's own `except` catches to ask the simple prompt once
    more before raising for good. Returns (triples, prompts asked) or raises RuntimeError."""
    asked = []

    def ask(kind):
        asked.append(kind)
        return llm(kind)

    try:
        reply = ask("main")
        triples = parse_triples_section(reply) or parse_unlabeled(reply)
        if not triples:
            triples = parse_simple(ask("simple"))
            if not triples:
                raise RuntimeError("Could not extract meaningful triples")
    except Exception:
        triples = parse_simple(ask("simple"))
        if not triples:
            raise RuntimeError(f"TRAG cannot process query without meaningful triples (asked {asked})") from None
    return dedupe(triples), asked


def parse_combined(reply):
    """`_parse_combined_clue_response` -> (fully resolved, newly traceable), each deduplicated as
    `resolve_clues` does."""
    resolved, traceable, section, clue = [], [], None, {}

    def keep():
        if section == "resolved" and len(clue) == 3:
            resolved.append(clue)
        elif section == "traceable" and len(clue) == 3:
            traceable.append(clue)

    for line in reply.splitlines():
        line = line.strip()
        if line.startswith("Fully Resolved Clue"):
            keep()
            section, clue = "resolved", {}
        elif line.startswith("Newly Traceable Clue"):
            keep()
            section, clue = "traceable", {}
        elif line.startswith("Subject:"):
            clue["subject"] = line.split("Subject:", 1)[1].strip()
        elif line.startswith("Predicate:"):
            clue["predicate"] = line.split("Predicate:", 1)[1].strip()
        elif line.startswith("Object:"):
            clue["object"] = line.split("Object:", 1)[1].strip()
    keep()
    return dedupe(resolved), dedupe(traceable)


def final_answer(reply):
    """`final_qa`'s cleanup: the text after the last "Answer:" when there is one."""
    return reply.split("Answer:")[-1].strip() if "Answer:" in reply else reply
