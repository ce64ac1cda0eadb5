"""Recognition memory: the LLM keeps the retrieved facts that matter to the question.

The instruction is the paper's "Triple Filter" (HippoRAG 2, appendix; `best_dspy_prompt` in
OSU-NLP-Group/HippoRAG `src/hipporag/prompts/filter_default_prompt.py`), the user message the
authors' `DSPyFilter.one_input_template`, the reply parsed and matched back to the candidates as
`DSPyFilter.parse_filter` / `DSPyFilter.rerank` do (each returned fact is mapped to its closest
candidate by `difflib`). Departure, listed in the trace: the DSPy-optimized few-shot demonstrations
are not sent.
"""

from __future__ import annotations

import ast
import difflib
import json
import re

INSTRUCTION = (
    "You are a critical component of a high-stakes question-answering system used by top researchers and "
    "decision-makers worldwide. Your task is to filter facts based on their relevance to a given query, ensuring "
    "that the most crucial information is presented to these stakeholders. The query requires careful analysis "
    "and possibly multi-hop reasoning to connect different pieces of information. You must select up to 4 relevant "
    "facts from the provided candidate list that have a strong connection to the query, aiding in reasoning and "
    'providing an accurate answer. The output should be in JSON format, e.g., {"fact": [["s1", "p1", "o1"], '
    '["s2", "p2", "o2"]]}, and if no facts are relevant, return an empty list, {"fact": []}. The accuracy of your '
    "response is paramount, as it will directly impact the decisions made by these high-level stakeholders. You "
    "must only use facts from the candidate list and not generate new facts. The future of critical "
    "decision-making relies on your ability to accurately filter facts for optimal outcomes."
)
INPUT_TEMPLATE = (
    "[[ ## question ## ]]\n{question}\n\n[[ ## fact_before_filter ## ]]\n{fact_before_filter}\n\n"
    "Respond with the corresponding output fields, starting with the field `[[ ## fact_after_filter ## ]]` "
    "(must be formatted as a valid Python Fact), and then ending with the marker for `[[ ## completed ## ]]`."
)
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")


def filter_messages(question: str, candidates: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    before = json.dumps({"fact": [list(c) for c in candidates]})
    return [
        {"role": "system", "content": INSTRUCTION},
        {"role": "user", "content": INPUT_TEMPLATE.format(question=question, fact_before_filter=before)},
    ]


def parse_filter(reply: str) -> list[list[str]]:
    """The facts of the `fact_after_filter` field ([] when it is missing or unreadable). A reply
    with no field markers at all is read whole (a model that answers with the bare JSON)."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in (reply or "").splitlines():
        m = _FIELD.match(line.strip())
        if m:
            sections.append((m.group(1), []))
        else:
            sections[-1][1].append(line)
    fields = {k: "\n".join(v).strip() for k, v in sections}
    value = fields.get("fact_after_filter", fields.get(None, "") if len(sections) == 1 else "")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    facts = parsed.get("fact") if isinstance(parsed, dict) else None
    if not isinstance(facts, list):
        return []
    return [[str(x) for x in f] for f in facts if isinstance(f, list | tuple)]


def match_candidates(generated: list[list[str]], candidates: list[tuple[str, str, str]]) -> list[int]:
    """Candidate positions of the returned facts, in the reply's order (each to its closest
    candidate, as the authors' `difflib.get_close_matches(..., n=1, cutoff=0.0)`)."""
    texts = [str(list(c)) for c in candidates]
    out: list[int] = []
    for fact in generated:
        best = difflib.get_close_matches(str(fact), texts, n=1, cutoff=0.0)
        if best:
            out.append(texts.index(best[0]))
    return out
