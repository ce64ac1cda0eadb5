"""Questions about two entities: comparisons ("Which band was formed first, A or B?") and yes/no
questions ("Were A and B of the same nationality?")."""

from __future__ import annotations

import re

from engine.reasoners.offline.questions.shape import (
    AUX,
    COMPARATIVES,
    EVENT_VERBS,
    WH,
    QuestionShape,
    named_spans,
    wh_word,
)
from engine.reasoners.offline.spans import find_spans


def _pair(q: str) -> tuple[str, str] | None:
    """The two sides of "A or B" / "A and B", preferring named spans that touch the conjunction."""
    spans = find_spans(q, ("quote", "name"))
    for conj in ("or", "and"):
        for a, b in zip(spans, spans[1:]):
            if q[a.end : b.start].strip(' ",').lower() in (conj, conj + " the"):
                return a.text, b.text
    # no capitalised spans: split the clause after the last comma ("..., the Pterocarya or the Cotula")
    tail = q.rsplit(",", 1)[-1]
    m = re.search(r"(?:^|\b)(?:the )?([\w'\-. ]+?) or (?:the )?([\w'\-. ]+)$", tail.strip(), re.I)
    if m and len(m.group(1).split()) <= 6:
        return m.group(1).strip(), m.group(2).strip()
    return None


def _comparison_pair(q: str) -> tuple[str, str] | None:
    """ "..., A or B": the literal text after the last comma, so titles with small words survive
    ("Stands For Decibels", "King Arthur Was A Gentleman"); else named spans around "or"."""
    if "," in q:
        parts = q.rsplit(",", 1)[1].split(" or ")
        if len(parts) == 2 and all(1 <= len(p.split()) <= 8 for p in parts):
            a, b = (re.sub(r"^(?:the|a|an)\s+", "", p.strip(' "')) for p in parts)
            if a and b and (a[:1].isupper() or a[:1].isdigit()):
                return a, b
    return _pair(q)


#: "Which film has the director born earlier, A or B?": the compared value belongs to A's director
VIA_RE = re.compile(
    r"\b(?:whose|the|has the|with the)\s+(director|author|composer|performer|creator|producer|"
    r"writer|founder|singer|father|mother|spouse|husband|wife)\b"
)


def parse_comparison(q: str) -> QuestionShape | None:
    low = q.lower()
    if " or " not in low:
        return None
    pair = _comparison_pair(q)
    if not pair:
        return None
    a, b = pair
    words = re.findall(r"[a-z]+", low[: low.find(a.lower())] if a.lower() in low else low)
    op, attr = "", ""
    # "more recently" compares dates; "more" alone is the weakest hint, used only when nothing else is
    for w in sorted((w for w in words if w in COMPARATIVES), key=lambda w: w in ("more", "most")):
        op, attr = COMPARATIVES[w]
        break
    verb = next((w for w in words if w in EVENT_VERBS), "")
    if verb:
        attr = verb if verb != "born" or not op else "born"
        op = op or "earlier"
    if not op:
        # "Which singer is American, Mark King or Nick Hexum?": the property to match
        m = re.search(r"\b(?:is|was|are|were)\s+(?:an?\s+|the\s+)?([\w\- ]+?)\s*,", q)
        op, attr = "match", (m.group(1) if m else "")
    pred = {"born": "born on", "date": "date"}.get(attr, attr or "is")
    if op == "match":
        pred = "is"
    via = VIA_RE.search(low[: low.find(a.lower())] if a.lower() in low else low)
    if via and op != "match":
        rel = via.group(1)
        triplets = [(a, rel, f"?{rel}_a"), (f"?{rel}_a", pred, "?a"), (b, rel, f"?{rel}_b"), (f"?{rel}_b", pred, "?b")]
        return QuestionShape("comparison", triplets, op=op, attribute=attr, entities=[a, b], wh=wh_word(q), via=rel)
    return QuestionShape(
        "comparison", [(a, pred, "?a"), (b, pred, "?b")], op=op, attribute=attr, entities=[a, b], wh=wh_word(q)
    )


def parse_yesno(q: str) -> QuestionShape | None:
    first = q.split()[0].lower() if q.split() else ""
    low = q.lower()
    # "Do Lafzon Ki Kahani, ... released in which year": a name that starts like a yes/no question
    if first not in AUX or re.search(rf"\b{WH}\b", low):
        return None
    spans = named_spans(q)
    pair = _pair(q)
    if pair:
        spans = list(pair) + [s for s in spans if s not in pair]
    same = re.search(r"\bsame ([a-z]+(?: [a-z]+)?)", low)
    both = re.search(r"\bboth\s+(?:an?\s+|the\s+)?([a-z][\w\- ]*)$", low)
    if not both and " both " in f" {low} " and len(spans) >= 2:
        # "Are both magazines, A and B, British publications?": the attribute follows the pair
        both = re.search(rf"{re.escape(spans[1].lower())}[\s,]+(?:an?\s+|the\s+)?([a-z][\w\- ]*)$", low)
    if same and len(spans) >= 2:
        attr = same.group(1)
        return QuestionShape(
            "yesno", [(spans[0], attr, "?a"), (spans[1], attr, "?b")], op="same", attribute=attr, entities=spans[:2]
        )
    if both and len(spans) >= 2:
        attr = both.group(1).strip()
        return QuestionShape(
            "yesno", [(spans[0], "is", "?a"), (spans[1], "is", "?b")], op="both", attribute=attr, entities=spans[:2]
        )
    if spans:
        m = re.match(rf"\w+ {re.escape(spans[0])} (?:an?\s+|the\s+)?(.+)$", q)
        attr = m.group(1) if m else ""
        return QuestionShape("yesno", [(spans[0], "is", "?a")], op="check", attribute=attr, entities=spans[:1])
    return None
