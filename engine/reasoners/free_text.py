"""Free-text replies of T2RAG's reference prompts (the `paper` preset's decomposition, fix-up,
solve and answer steps): our tolerant readings, and the authors' own parsing restated.

`T2RAGSettings.tolerant_replies` picks one: the tolerant readers accept what models send (code
fences, markdown headings and bold, numbered items, "None", stray prose); the `*_paper` functions
read line for line as rockcor/T2RAG src/TRAG.py does, dropping what it drops. JSON replies (the
tuned prompts) are read in engine/reasoners/parsing.py.
"""

from __future__ import annotations

import re

from engine.reasoners.parsing import _NUMBERING, _as_triple, _pipe_lines, parse_triples, strip_fences

_TRIPLES_HEAD = re.compile(r"^\s*(?:[-*#]\s*)*\**\s*triples?\s*\**\s*:\s*\**\s*", re.IGNORECASE)
_MARKUP = re.compile(r"[*`]+")


def _dedupe(triples: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The reference's `_deduplicate_clues`: the first of each (subject, predicate, object), case-blind."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for t in triples:
        key = tuple(x.strip().lower() for x in t)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def parse_reasoned_triples(reply: str) -> tuple[list[tuple[str, str, str]], str]:
    """Tolerant reading of the reference T2RAG decomposition reply (ours): "Reasoning: ...", then
    "Triples:" and one `s | p | o` per line, read through code fences, markdown bold or backticks,
    bullets and numbering; a triple may follow the heading on its line; the "Propositions:" block
    and any other prose are ignored; JSON as a fallback."""
    if not reply.strip():
        return [], "empty reply"
    lines = [_MARKUP.sub("", _TRIPLES_HEAD.sub("", ln)) for ln in strip_fences(reply).splitlines()]
    keep = [ln for ln in lines if not ln.strip().lower().startswith(("reasoning", "propositions"))]
    triples = _pipe_lines("\n".join(keep))
    if triples:
        return _dedupe(triples), ""
    return parse_triples(reply, keys=("triplets", "triples"))


_CLUE_HEAD = re.compile(
    r"^\s*(?:[-*#>]+\s*|\d+[.)]\s*)*\**\s*(fully resolved|newly traceable)\s+clues?\b[^:]*:?\**\s*(.*)$",
    re.IGNORECASE,
)
_CLUE_PART = re.compile(
    r"^\s*(?:[-*>]+\s*|\d+[.)]\s*)*\**\s*(subject|predicate|object)\s*\**\s*:\s*\**\s*(.*?)\s*\**\s*$",
    re.IGNORECASE,
)
_INLINE_PARTS = re.compile(r"subject\s*:\s*(.+?)\s*[,;]\s*predicate\s*:\s*(.+?)\s*[,;]\s*object\s*:\s*(.+)$", re.I)
#: What a model writes for "no clue here": such a part, or a heading followed by it, adds no clue.
_NONE_VALUES = {"none", "n/a", "na", "null", "nil", "unknown", "not found", "not available", "not mentioned", "-"}


def _none(value: str) -> bool:
    return _MARKUP.sub("", value).strip().strip(".").strip().lower() in _NONE_VALUES


def parse_clues(reply: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], str]:
    """Tolerant reading of the reference T2RAG solve reply (ours): "Fully Resolved Clue N:" and
    "Newly Traceable Clue N:" blocks of Subject / Predicate / Object lines -> (resolved, traceable,
    error). On top of the authors' line parsing (`parse_clues_paper`) it accepts what models send:
    code fences, markdown headings and bold (`**Fully Resolved Clue 1:**`, `- **Subject:** X`),
    numbered items, a plural heading over several clues ("Fully Resolved Clues:" then
    "1. Subject: ..."), a clue on one line ("Subject: A, Predicate: b, Object: C" or "A | b | C"),
    and "None" for an empty list or part (a clue with a part "None", "N/A", "unknown" is no clue).
    Stray prose is skipped."""
    if not reply.strip():
        return [], [], "empty reply"
    out: dict[str, list[tuple[str, str, str]]] = {"fully resolved": [], "newly traceable": []}
    kind: str = ""
    parts: dict[str, str] = {}

    def close() -> None:
        nonlocal parts
        if kind and len(parts) == 3 and not any(_none(v) for v in parts.values()):
            t = _as_triple([parts["subject"], parts["predicate"], parts["object"]])
            if t:
                out[kind].append(t)
        parts = {}

    for line in strip_fences(reply).splitlines():
        head = _CLUE_HEAD.match(line)
        if head:
            close()
            kind, rest = head.group(1).lower(), _MARKUP.sub("", head.group(2)).strip()
            inline = _INLINE_PARTS.search(rest) or None
            if inline:
                parts = dict(zip(("subject", "predicate", "object"), (g.strip() for g in inline.groups())))
                close()
            elif rest.count("|") == 2:
                parts = dict(zip(("subject", "predicate", "object"), (p.strip() for p in rest.split("|"))))
                close()
            continue
        if not kind:
            continue
        bare = _NUMBERING.sub("", _MARKUP.sub("", line)).strip()
        inline = _INLINE_PARTS.search(bare)
        m = None if inline else _CLUE_PART.match(line)
        if m:
            name, value = m.group(1).lower(), _MARKUP.sub("", m.group(2)).strip()
            if name in parts:  # a plural heading's next item: the previous clue is complete
                close()
            parts[name] = value
        elif inline:
            close()
            parts = dict(zip(("subject", "predicate", "object"), (g.strip() for g in inline.groups())))
            close()
        elif bare.count("|") == 2:
            close()
            parts = dict(zip(("subject", "predicate", "object"), (p.strip().strip("()") for p in bare.split("|"))))
            close()
    close()
    resolved, traceable = _dedupe(out["fully resolved"]), _dedupe(out["newly traceable"])
    return resolved, traceable, ("" if resolved or traceable else "no 'Fully Resolved' or 'Newly Traceable' clue")


# --- the authors' T2RAG reply parsing, restated (rockcor/T2RAG src/TRAG.py): the `paper` preset --------
# Line for line: no markdown, bullets or numbering are read but the ones the authors read, a part
# may be empty, and what they keep or drop is kept or dropped here. Tolerant versions are above.


def _split_parts(line: str) -> tuple[str, str, str] | None:
    parts = [p.strip() for p in line.split("|")]
    return (parts[0], parts[1], parts[2]) if len(parts) >= 3 else None


def parse_decomposition_paper(reply: str) -> tuple[list[tuple[str, str, str]], str]:
    """`reason_and_form_triples`'s parsing: lines after a line starting "Triples:" holding a '|'
    (three parts or more, the first three kept; the heading line itself is not read); when none,
    every line with a '|' outside the headings, after ". " numbering and "- " bullets are dropped
    and quotes stripped. Then `_deduplicate_clues`."""
    lines = reply.strip().split("\n")
    section = None
    triples: list[tuple[str, str, str]] = []
    for raw in lines:
        line = raw.strip()
        if line.startswith("Reasoning:"):
            section = "reasoning"
        elif line.startswith("Triples:"):
            section = "triples"
        elif line.startswith("Propositions:"):
            section = "propositions"
        elif section == "triples" and "|" in line:
            t = _split_parts(line)
            if t:
                triples.append(t)
    if not triples:
        for raw in lines:
            line = raw.strip()
            if not line or line.lower().startswith(("reasoning:", "triples:", "propositions:")):
                continue
            if "|" in line:
                if ". " in line:
                    line = line.split(". ", 1)[-1]
                if "- " in line:
                    line = line.replace("- ", "")
                parts = [p.strip().strip('"').strip("'") for p in line.split("|")]
                if len(parts) >= 3:
                    triples.append((parts[0], parts[1], parts[2]))
    triples = _dedupe(triples)
    return triples, ("" if triples else "no triple in the reply")


def parse_fixup_paper(reply: str) -> tuple[list[tuple[str, str, str]], str]:
    """`_retry_triple_extraction_simple`'s parsing: every line with a '|' not starting "Question:" or
    "Examples:", numbering and bullets dropped, quotes stripped; a generic "? | related ... | <long>"
    triple skipped; at most 3."""
    triples: list[tuple[str, str, str]] = []
    for raw in reply.strip().split("\n"):
        line = raw.strip()
        if "|" in line and not line.startswith("Question:") and not line.startswith("Examples:"):
            if ". " in line:
                line = line.split(". ", 1)[-1]
            if "- " in line:
                line = line.replace("- ", "")
            parts = [p.strip().strip('"').strip("'") for p in line.split("|")]
            if len(parts) >= 3 and not (parts[0] == "?" and "related" in parts[1].lower() and len(parts[2]) > 30):
                triples.append((parts[0], parts[1], parts[2]))
    triples = _dedupe(triples[:3])
    return triples, ("" if triples else "no triple in the reply")


def parse_clues_paper(reply: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], str]:
    """`_parse_combined_clue_response`: a line starting "Fully Resolved Clue" or "Newly Traceable Clue"
    opens a clue; lines starting "Subject:", "Predicate:", "Object:" fill it; a clue with all three
    is kept when the next heading (or the end) comes. Then `_deduplicate_clues` on each list."""
    resolved: list[tuple[str, str, str]] = []
    traceable: list[tuple[str, str, str]] = []
    section = None
    clue: dict[str, str] = {}

    def keep() -> None:
        if len(clue) == 3:
            t = (clue["subject"], clue["predicate"], clue["object"])
            if section == "resolved":
                resolved.append(t)
            elif section == "traceable":
                traceable.append(t)

    for raw in reply.splitlines():
        line = raw.strip()
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
    resolved, traceable = _dedupe(resolved), _dedupe(traceable)
    return resolved, traceable, ("" if resolved or traceable else "no 'Fully Resolved' or 'Newly Traceable' clue")


def parse_answer_paper(reply: str) -> tuple[str, str]:
    """`final_qa`'s reading: the text after the last "Answer:" when there is one, else the reply."""
    text = reply.split("Answer:")[-1] if "Answer:" in reply else reply
    text = text.strip()
    return text, ("" if text else "empty reply")
