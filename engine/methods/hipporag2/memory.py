"""Recognition memory: the LLM keeps the retrieved facts that matter to the question.

The messages are the authors' `DSPyFilter` (OSU-NLP-Group/HippoRAG `src/hipporag/rerank.py`): their
DSPy system preamble around the paper's Triple Filter instruction, their ten optimized
demonstrations as user/assistant turns, then the question's own turn (the data and its attribution:
filter_prompt.py). The reply is parsed and matched back to the candidates as `DSPyFilter.parse_filter`
and `DSPyFilter.rerank` do: the `fact_after_filter` field read as JSON (else a Python literal), each
returned fact mapped to its closest candidate by `difflib` over the candidates' `str(tuple)`.
One tolerance of ours, named in the trace ("filter reply read whole"): a reply with no field
markers at all is read whole (a model that answers with the bare JSON), where the authors' parser
returns nothing.
"""

from __future__ import annotations

import ast
import difflib
import json
import re

from engine.methods.hipporag2.filter_prompt import DEMOS, INPUT_TEMPLATE, OUTPUT_TEMPLATE, SYSTEM

_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")


def filter_messages(question: str, candidates: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    """The authors' `DSPyFilter.llm_call` messages for `question` and its candidate facts."""
    messages = [{"role": "system", "content": SYSTEM}]
    for q, before, after in DEMOS:
        messages.append({"role": "user", "content": INPUT_TEMPLATE.format(question=q, fact_before_filter=before)})
        messages.append({"role": "assistant", "content": OUTPUT_TEMPLATE.format(fact_after_filter=after)})
    before = json.dumps({"fact": [list(c) for c in candidates]})
    messages.append({"role": "user", "content": INPUT_TEMPLATE.format(question=question, fact_before_filter=before)})
    return messages


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
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return []
    facts = parsed.get("fact") if isinstance(parsed, dict) else None
    if not isinstance(facts, list):
        return []
    return [[str(x) for x in f] for f in facts if isinstance(f, list | tuple)]


def match_candidates(generated: list[list[str]], candidates: list[tuple[str, str, str]]) -> list[int]:
    """Candidate positions of the returned facts, in the reply's order: each to its closest
    candidate, as the authors' `difflib.get_close_matches(str(fact), [str(c) for c in candidates],
    n=1, cutoff=0.0)` over the candidates as tuples."""
    texts = [str(tuple(c)) for c in candidates]
    out: list[int] = []
    for fact in generated:
        best = difflib.get_close_matches(str(fact), texts, n=1, cutoff=0.0)
        if best:
            out.append(texts.index(best[0]))
    return out
