"""What a question parser returns (`QuestionShape`), the question words the parsers share, and the
small readings every shape uses (the wh-word, the named spans, a placeholder's name)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.reasoners.offline.spans import NAME_CONNECTORS, STOPWORDS, find_spans

WH = r"(?:what|who|whom|which|where|when|how|whose)"
#: how a nationality word ends ("American", "Japanese", "English", "Israeli"): it describes, it names nothing
DEMONYM = re.compile(r"(?:an|ese|ish|i)$")
#: comparison keyword -> (operation, attribute used when the question names none)
COMPARATIVES = {
    "first": ("earlier", "date"),
    "earlier": ("earlier", "date"),
    "earliest": ("earlier", "date"),
    "before": ("earlier", "date"),
    "older": ("earlier", "born"),
    "oldest": ("earlier", "born"),
    "later": ("later", "date"),
    "last": ("later", "date"),
    "latest": ("later", "date"),
    "recently": ("later", "date"),
    "recent": ("later", "date"),
    "newer": ("later", "date"),
    "younger": ("later", "born"),
    "youngest": ("later", "born"),
    "larger": ("larger", "size"),
    "largest": ("larger", "size"),
    "bigger": ("larger", "size"),
    "more": ("larger", "number"),
    "most": ("larger", "number"),
    "higher": ("larger", "height"),
    "taller": ("larger", "height"),
    "longer": ("larger", "length"),
    "longest": ("larger", "length"),
    "smaller": ("smaller", "size"),
    "fewer": ("smaller", "number"),
    "less": ("smaller", "number"),
    "shorter": ("smaller", "length"),
    "lower": ("smaller", "height"),
}
#: verbs whose date a comparison is about: "formed first" compares formation dates
EVENT_VERBS = (
    "born",
    "founded",
    "formed",
    "established",
    "released",
    "published",
    "opened",
    "created",
    "built",
    "started",
    "launched",
    "debuted",
    "died",
    "written",
    "produced",
    "made",
    "introduced",
    "invented",
    "discovered",
    "elected",
    "signed",
    "completed",
    "premiered",
)
COMPOUND_RELATIONS = (
    "place of birth",
    "place of death",
    "date of birth",
    "date of death",
    "cause of death",
    "country of origin",
    "country of citizenship",
    "place of burial",
)
AUX = {"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would"}


@dataclass
class QuestionShape:
    """What the rules recognised. `entities` are the compared/checked entities (comparison, yes/no)."""

    qtype: str  # comparison | yesno | chain | relative | bridge | fallback
    triplets: list[tuple[str, str, str]] = field(default_factory=list)
    op: str = ""  # earlier | later | larger | smaller | match | same | both | check
    attribute: str = ""  # what is compared or checked ("formed", "nationality", "film directors")
    entities: list[str] = field(default_factory=list)
    wh: str = ""  # who | when | where | how many | ...
    via: str = ""  # comparison of a related entity's value: "director" in "whose director is younger"
    like: str = ""  # an analogy's category: "demon" in "If Gallu is a demon, Lilu is what?"

    def to_dict(self) -> dict:
        return {
            "type": self.qtype,
            "op": self.op,
            "attribute": self.attribute,
            "entities": self.entities,
            "via": self.via,
            "like": self.like,
            "wh": self.wh,
            "triplets": [list(t) for t in self.triplets],
        }


def clean_question(q: str) -> str:
    q = q.replace("“", '"').replace("”", '"').replace("’", "'")
    return re.sub(r"\s+", " ", q).strip().rstrip("?").strip()


def wh_word(q: str) -> str:
    low = q.lower()
    for key in (
        "how many",
        "how much",
        "how long",
        "how old",
        "what year",
        "which year",
        "in what year",
        "what city",
        "what state",
        "what country",
        "what nationality",
    ):
        if key in low:
            return key
    m = re.search(rf"\b({WH})\b", low)
    return m.group(1) if m else ""


def named_spans(q: str) -> list[str]:
    """Entities of a question: quoted titles first, then capitalised runs (the wh-word excluded)."""
    return [s.text for s in find_spans(q, ("quote", "name", "date"))]


def slug(words: str) -> str:
    w = [x for x in re.findall(r"[a-z0-9]+", words.lower()) if x not in STOPWORDS]
    return "?" + (w[-1] if w else "x")


def looks_like_name(text: str) -> bool:
    words = text.split()
    return (
        bool(words)
        and words[0][:1].isupper()
        and all(w[:1].isupper() or w[:1].isdigit() or w in NAME_CONNECTORS | {"and", "&"} for w in words)
    )
