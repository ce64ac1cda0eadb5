"""Words and spans for the offline reasoner: the word lists and regular expressions, sentence
splitting, and the named spans of a sentence (names, quotes, dates, numbers).

Plain regular expressions and word lists, no model; `rules.py` builds triplets from these spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.core.chunking import split_sentences as _split

MONTHS = (
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
).split()
_MONTH = r"(?:%s)\.?" % "|".join(MONTHS)
#: "30 July 1970", "July 30, 1970", "July 1970", "1970", "1990s", "c. 1500"
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}} {_MONTH},? \d{{3,4}}|{_MONTH} \d{{1,2}},? \d{{3,4}}|{_MONTH} \d{{3,4}}|"
    r"(?:1[0-9]|20)\d{2}s?)\b"
)
NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:\s(?:million|billion|thousand|hundred))?(?!\w)")
YEAR_RE = re.compile(r"\b(1[0-9]\d{2}|20\d{2})\b")

#: Capitalised words that start sentences or clauses without naming anything.
FUNCTION_CAPS = set(
    """A An The In On At As By For From Of To With Without After Before During Since Until
When While Where Which Who Whom Whose What Why How This That These Those It Its He She His Her Him They Their
Them We Our I You Your There Here Also However Although Though But And Or Nor So Yet If Then Both Each Every
Some Many Most All Other Another Such Is Are Was Were Be Been Do Does Did Has Have Had Can Could Will Would
Shall Should May Might Must Not No Yes Following Born Known Based Located Founded Despite Among Between Through
Under Over About Upon Within Like Unlike Than""".split()
)
#: Capitalised words that are no name on their own but may be part of one ("Two Dollar Radio").
NOT_INITIAL = set(
    """Only Several One Two Three Four Five Six Seven Eight Nine Ten First Second Third Later
Earlier Today Currently Previously""".split()
)
#: Lowercase words allowed inside a name ("Bank of America", "Ludwig van Beethoven").
NAME_CONNECTORS = {"of", "the", "de", "du", "da", "van", "von", "der", "den", "la", "le", "del", "y", "di", "bin", "al"}
PRONOUNS = {"he", "she", "it", "they"}
POSSESSIVES = {"his", "her", "its", "their"}
#: "The film ...", "The band ..." at sentence start: the chunk's own subject.
TITLE_NOUNS = set(
    """film movie song single album band group company series show novel book game city town
village station airport magazine newspaper team club school university college church building programme program
episode play opera musical river lake mountain island organization organisation party network channel label plant
species genus bridge museum park district county state""".split()
)
COPULAS = {"is", "was", "are", "were"}
#: Irregular past forms and frequent present forms the "verb between two names" rule accepts.
COMMON_VERBS = set(
    """won wrote made became began led left took gave held found met saw ran sang built bought sold
lost drew grew knew shot spoke taught fought brought thought hit set put become becomes leads wins has had have
hosts holds owns plays stars runs""".split()
)
STOPWORDS = set(
    """a an the of in on at to for from by with and or as is are was were be been being that which who
whom whose what when where why how this these those it its his her their he she they them also both either
neither than then there here not no do does did has have had into onto about over under after before during
since until while""".split()
)
_PARTICIPLE = r"(?:[a-z]+ed|written|drawn|sung|given|taken|known|shown|won|made|held|led|built|sold|run|begun|founded)"
LOCATIVE_RE = re.compile(
    r"\b(based|located|headquartered|founded|formed|established|released|published|"
    r"opened|built|created|set|shot|filmed|held|buried|died|raised|incorporated|launched)"
    r" (in|at|on|near) (?:the )?(?:(?:early|late|mid|about|around|circa|c\.)[ -])?"
)
PASSIVE_RE = re.compile(rf"\b((?:{_PARTICIPLE}(?:,\s*|\s+and\s+|\s+))*{_PARTICIPLE})\s+by\s+")


@dataclass(frozen=True)
class Span:
    """A named span of a sentence: `kind` is name | quote | date | number."""

    text: str
    start: int
    end: int
    kind: str


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` with the corpus's own splitter (engine/core/chunking.py), stripped."""
    return [s.strip() for s in _split(text) if s and s.strip()]


def context_sentences(context: str) -> list[str]:
    """Sentences of an answer step's context, one passage (a blank-line-separated chunk) at a time:
    a chunk cut in mid-sentence (a window of a long document) never runs on into the next chunk's
    title and text, so a sentence is never "about" an entity another chunk names."""
    return [s for para in re.split(r"\n\s*\n", context) for s in split_sentences(para)]


def is_cap(tok: str) -> bool:
    return bool(tok) and (tok[0].isupper() or (tok[0].isdigit() and any(c.isalpha() for c in tok)))


def find_spans(sentence: str, kinds: tuple[str, ...] = ("quote", "date", "name", "number")) -> list[Span]:
    """Named spans in order of position; quotes and dates win over names that overlap them."""
    taken: list[Span] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s.start or a >= s.end for s in taken)

    if "quote" in kinds:
        for m in re.finditer(r"[\"“]([^\"”]{2,80})[\"”]", sentence):
            taken.append(Span(m.group(1).strip(), m.start(1), m.end(1), "quote"))
    if "date" in kinds:
        for m in DATE_RE.finditer(sentence):
            if free(m.start(), m.end()):
                taken.append(Span(m.group(0), m.start(), m.end(), "date"))
    if "name" in kinds:
        for a, b in _name_ranges(sentence):
            if free(a, b):
                taken.append(Span(sentence[a:b], a, b, "name"))
    if "number" in kinds:
        for m in NUMBER_RE.finditer(sentence):
            if free(m.start(), m.end()):
                taken.append(Span(m.group(0), m.start(), m.end(), "number"))
    return sorted(taken, key=lambda s: s.start)


def _name_ranges(sentence: str) -> list[tuple[int, int]]:
    """Runs of capitalised tokens, joined by connectors ("of", "van") only when a capital follows.

    "and" never joins two names: "Nolan and Kalathil" are two people, not one.
    """
    toks = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\w[\w'’.\-&]*\w|\w", sentence)]

    def joined(j: int) -> bool:  # token j directly follows token j-1 with one space or a hyphen
        gap = sentence[toks[j - 1][2] : toks[j][1]]
        initial = len(toks[j - 1][0]) == 1 and toks[j - 1][0].isupper() and gap == ". "
        return gap in (" ", "-") or initial

    def name_tok(j: int) -> bool:
        return is_cap(toks[j][0]) and toks[j][0] not in FUNCTION_CAPS

    ranges, i = [], 0
    while i < len(toks):
        if not name_tok(i):
            i += 1
            continue
        j = i + 1
        while j < len(toks) and joined(j):
            if name_tok(j) or (toks[j][0].isdigit() and len(toks[j][0]) <= 3):
                j += 1
                continue
            k = j
            while k < len(toks) and toks[k][0] in NAME_CONNECTORS and joined(k):
                k += 1
            if j < k < len(toks) and joined(k) and name_tok(k):
                j = k + 1
                continue
            break
        if j == i + 1 and toks[i][0] in NOT_INITIAL:  # "Two examples were ..." names nothing
            i = j
            continue
        a, b = toks[i][1], toks[j - 1][2]
        if sentence[max(0, a - 4) : a] == "The " and (a == 4 or sentence[a - 5] in ' "('):
            a -= 4  # "The Beatles": keep the article that belongs to the name
        text = sentence[a:b].rstrip(".")
        ranges.append((a, a + len(text)))
        i = j
    return ranges


def strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(), flags=re.I)


def clean_object(text: str, max_words: int = 10) -> str:
    """Cut a copula object at its first clause boundary and drop its article."""
    text = re.split(r",|;|:|\s[-–—]\s|\s(?:that|which|who|whom|whose|where|when|while|but)\s", text, maxsplit=1)[0]
    text = PASSIVE_RE.split(text, maxsplit=1)[0]
    text = re.sub(r"\s+(?:and|or)$", "", text.strip().rstrip("."))
    text = strip_article(text)
    words = text.split()
    return " ".join(words) if 0 < len(words) <= max_words else ""


def clean_title(title: str) -> str:
    """ "Lilu (mythology)" -> "Lilu": the disambiguation suffix is not part of the name."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def place_text(span: Span, spans: list[Span], sentence: str) -> str:
    """A place name with its comma-joined parents: "Columbus, Ohio", "Leland, North Carolina"."""
    parts, end = [span.text], span.end
    for nxt in spans:
        if nxt.start == end + 2 and sentence[end : nxt.start] == ", " and nxt.kind == "name" and len(parts) < 2:
            parts.append(nxt.text)
            end = nxt.end
    return ", ".join(parts)
