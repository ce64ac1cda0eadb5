"""Tolerant parsing of LLM replies, strict about structure.

Tolerant of how models wrap things: code fences, prose before or after the JSON, numbered lists,
a JSON body cut off by the token limit (complete triples are salvaged), or `s | p | o` lines in
place of JSON. Strict about what comes out: only the expected fields are read, every part must be
a string (or a number, turned into one), and nothing else in a reply can add keys or change the
shape of what lands in a trace.

Every parser returns `(value, error)`; `error` is "" on success and a short reason otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_JSON_STRING = r'"(?:[^"\\]|\\.)*"'
# An array of exactly three JSON strings: a complete triple even inside a truncated reply.
_TRIPLE_ARRAY = re.compile(r"\[\s*(%s)\s*,\s*(%s)\s*,\s*(%s)\s*\]" % (_JSON_STRING, _JSON_STRING, _JSON_STRING))
_NUMBERING = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|\(\d+\))\s*")
_KG2RAG = re.compile(r"<([^<>]*?)##([^<>]*?)##([^<>]*?)>")
MAX_PART_CHARS = 300  # a "part" longer than this is a paragraph, not an entity or relation


def strip_fences(text: str) -> str:
    m = _FENCE.search(text)
    return m.group(1).strip() if m else text.strip()


def find_json(text: str) -> Any:
    """The first JSON object or array in `text` (fenced or surrounded by prose), or None."""
    body = strip_fences(text)
    try:
        return json.loads(body)
    except (json.JSONDecodeError, ValueError):
        pass
    decoder = json.JSONDecoder()
    for source in (body, text):
        for i, ch in enumerate(source):
            if ch in "{[":
                try:
                    value, _ = decoder.raw_decode(source, i)
                except (json.JSONDecodeError, ValueError):
                    continue
                if isinstance(value, (dict, list)):
                    return value
    return None


def _part(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        s = " ".join(value.split())
        return s if 0 < len(s) <= MAX_PART_CHARS else None
    return None  # nested structures are not parts


def _as_triple(item: Any) -> tuple[str, str, str] | None:
    if isinstance(item, dict):
        keys = [("subject", "predicate", "object"), ("head", "relation", "tail"), ("s", "p", "o")]
        for k in keys:
            if all(x in item for x in k):
                item = [item[x] for x in k]
                break
        else:
            return None
    if not isinstance(item, (list, tuple)) or len(item) != 3:
        return None
    parts = [_part(x) for x in item]
    if any(p is None for p in parts):
        return None
    return (parts[0], parts[1], parts[2])  # type: ignore[return-value]


def _pipe_lines(text: str) -> list[tuple[str, str, str]]:
    out = []
    for line in strip_fences(text).splitlines():
        line = _NUMBERING.sub("", line).strip().strip("()[]")
        if line.count("|") == 2:
            t = _as_triple([p.strip().strip("\"'") for p in line.split("|")])
            if t:
                out.append(t)
    return out


def parse_triples(
    reply: str, keys: tuple[str, ...] = ("triples", "triplets")
) -> tuple[list[tuple[str, str, str]], str]:
    """Triples from `{"triples": [[s, p, o], ...]}` (or a bare list), with fallbacks."""
    if not reply.strip():
        return [], "empty reply"
    data = find_json(reply)
    items: list[Any] | None = None
    if isinstance(data, dict):
        for k in keys:
            if isinstance(data.get(k), list):
                items = data[k]
                break
    elif isinstance(data, list):
        items = data
    if items is not None:
        triples = [t for t in (_as_triple(x) for x in items) if t]
        if triples or not items:
            return triples, ""
    # A reply cut off mid-JSON still holds complete triples; salvage those.
    salvaged = []
    for m in _TRIPLE_ARRAY.finditer(reply):
        t = _as_triple([json.loads(g) for g in m.groups()])
        if t:
            salvaged.append(t)
    if salvaged:
        return salvaged, ""
    lines = _pipe_lines(reply)
    if lines:
        return lines, ""
    if items is not None:
        return [], "no item of the JSON list is a [subject, predicate, object] triple"
    return [], "no JSON triples and no 's | p | o' lines in the reply"


def parse_entities(reply: str) -> tuple[list[str], str]:
    """Named entities from `{"named_entities": [...]}`, a bare list, or one entity per line."""
    if not reply.strip():
        return [], "empty reply"
    data = find_json(reply)
    items: Any = None
    if isinstance(data, dict):
        items = data.get("named_entities", data.get("entities"))
    elif isinstance(data, list):
        items = data
    if not isinstance(items, list):
        items = [_NUMBERING.sub("", ln).strip().strip('"') for ln in strip_fences(reply).splitlines()]
        if any(ch in reply for ch in "{}[]"):
            return [], "no named_entities list in the reply"
    seen: dict[str, str] = {}
    for x in items:
        p = _part(x)
        if p and p.lower() not in seen:
            seen[p.lower()] = p
    return list(seen.values()), ""


def parse_kg2rag(reply: str) -> tuple[list[tuple[str, str, str]], str]:
    """Triples in KG2RAG's `<head##relation##tail>$$` format; JSON and pipe lines as fallbacks."""
    if not reply.strip():
        return [], "empty reply"
    out = []
    for m in _KG2RAG.finditer(reply):
        t = _as_triple([g.strip() for g in m.groups()])
        if t:
            out.append(t)
    if out:
        return out, ""
    triples, err = parse_triples(reply)
    return triples, ("" if triples else "no <head##relation##tail> items in the reply")


def parse_solve(reply: str) -> tuple[dict[str, str], list[tuple[str, str, str]], str]:
    """`{"bindings": {"?x": "value"}, "triplets": [[s, p, o], ...]}`; other fields are ignored.

    A binding is kept only when its name is a placeholder and its value a non-empty string that
    is not itself a placeholder: a reply cannot bind `?x` to `?y` or to a nested object.
    """
    if not reply.strip():
        return {}, [], "empty reply"
    data = find_json(reply)
    if not isinstance(data, dict):
        lines = _pipe_lines(reply)
        return {}, lines, ("" if lines else "no JSON object in the reply")
    bindings: dict[str, str] = {}
    raw = data.get("bindings")
    if isinstance(raw, dict):
        for k, v in raw.items():
            name = k.strip() if isinstance(k, str) else ""
            value = _part(v)
            if name.startswith("?") and len(name) > 1 and value and not value.startswith("?"):
                bindings[name] = value
    triples: list[tuple[str, str, str]] = []
    if isinstance(data.get("triplets"), list):
        triples = [t for t in (_as_triple(x) for x in data["triplets"]) if t]
    if not bindings and not triples and "bindings" not in data and "triplets" not in data:
        return {}, [], "the JSON object has neither 'bindings' nor 'triplets'"
    return bindings, triples, ""


def parse_solve_sources(reply: str, bindings: dict[str, str]) -> dict[str, str]:
    """The solve reply's `"sources": {"?x": "P2"}` for the placeholders it bound; anything else is dropped."""
    data = find_json(reply) if reply.strip() else None
    raw = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        return {}
    out: dict[str, str] = {}
    for k, v in raw.items():
        name = k.strip() if isinstance(k, str) else ""
        label = _part(v)
        if name in bindings and label:
            out[name] = label
    return out


_ANSWER_PREFIX = re.compile(r"^\s*(?:so the answer is|final answer|the answer is|answer)\s*[:\-]?\s*", re.IGNORECASE)
_YES_NO_START = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may|"
    r"might|must)\b",
    re.IGNORECASE,
)


def is_yes_no_question(question: str) -> bool:
    return bool(_YES_NO_START.match(question.strip()))


_QA_LINE = re.compile(r"^\s*A\s*:\s*(.+)$")


def parse_stepwise_answer(reply: str, question: str = "") -> tuple[str, str]:
    """A reply that reasons first (KG2RAG's "think step by step" prompt): the last "A: ..." line,
    else an "Answer: ..." line, else the last line."""
    lines = [ln.strip() for ln in strip_fences(reply).splitlines() if ln.strip()]
    if not lines:
        return "", "empty reply"
    marked = [m.group(1) for m in (_QA_LINE.match(ln) for ln in lines) if m]
    if marked:
        return parse_answer(marked[-1], question)
    if any(_ANSWER_PREFIX.match(ln) for ln in lines):
        return parse_answer(reply, question)
    return parse_answer(lines[-1], question)


def parse_answer(reply: str, question: str = "") -> tuple[str, str]:
    """The short answer: first non-empty line, without 'Answer:' or quotes; yes/no normalized."""
    lines = [ln.strip() for ln in strip_fences(reply).splitlines() if ln.strip()]
    if not lines:
        return "", "empty reply"
    text = lines[0]
    for ln in lines:  # a model that reasons first usually ends with "Answer: X"
        if _ANSWER_PREFIX.match(ln) and _ANSWER_PREFIX.sub("", ln).strip():
            text = ln
            break
    text = _ANSWER_PREFIX.sub("", text).strip().strip("\"'`*").strip()
    text = text.rstrip(".").strip()
    if is_yes_no_question(question):
        head = re.split(r"[\s,.;:!]", text.lower(), maxsplit=1)[0]
        if head in ("yes", "no"):
            text = head
    return text[:MAX_PART_CHARS], ""
