"""Text patterns for the offline reasoner: named spans, dates, and sentence-level triplet rules.

Everything here is plain regular expressions and word lists, no model. The rules favour precision:
a sentence that matches no rule yields no triplet rather than a guess. What they recognise:

* copula        "Christopher Nolan is an English film director"  -> (Christopher Nolan, is, English film director)
* birth         "X (born 30 July 1970)", "X was born in London"   -> (X, born on, 30 July 1970), (X, born in, London)
* life span     "X (5 May 1900 - 3 June 1980)"                    -> (X, born on, ...), (X, died on, ...)
* passive       "Inception is a film directed by Christopher Nolan" -> (Inception, directed by, Christopher Nolan)
* verb link     "Nolan married Emma Thomas"                        -> (Nolan, married, Emma Thomas)
* possessive    "Her father was Roger Miller"                      -> (<title>, father, Roger Miller)
* apposition    "Oxford, a city in England, ..."                   -> (Oxford, is, city in England)

A sentence starting with a pronoun (he/she/it/they/his/her/its/their) or with "The film/song/band..."
is taken to be about the chunk's title, the way encyclopedia paragraphs are written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.textnorm import normalize_entity

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
    """Sentences of `text`: the shared splitter when it exists, else a small regex one.

    The regex one breaks after . ! ? followed by a space and an upper-case letter or a quote,
    except after a single initial ("J. R. R.") or a common abbreviation.
    """
    try:  # engine.chunking is written in parallel; fall back until it provides split_sentences
        from engine.chunking import split_sentences as shared

        out = shared(text)
        if isinstance(out, list):
            return [s.strip() for s in out if s and s.strip()]
    except (ImportError, NotImplementedError, AttributeError):
        pass
    return _regex_sentences(text)


_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "st",
    "jr",
    "sr",
    "vs",
    "no",
    "mt",
    "ft",
    "co",
    "inc",
    "ltd",
    "u.s",
    "e.g",
    "i.e",
    "c",
    "ca",
    "approx",
    "gen",
    "col",
    "lt",
    "sgt",
    "prof",
    "rev",
    "hon",
    "fr",
}


def _regex_sentences(text: str) -> list[str]:
    out, start = [], 0
    for m in re.finditer(r"[.!?][\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])", text):
        prev = re.search(r"(\S+)$", text[start : m.start() + 1])
        word = prev.group(1).rstrip(".").lower() if prev else ""
        if word in _ABBREV or (len(word) == 1 and word.isalpha()):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def _is_cap(tok: str) -> bool:
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
        return _is_cap(toks[j][0]) and toks[j][0] not in FUNCTION_CAPS

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


def _resolve_subject(sentence: str, title: str) -> tuple[str, str]:
    """Replace a leading pronoun / "The film" by the title. Returns (new sentence, subject or "")."""
    m = re.match(r"(\w+)\b", sentence)
    first = m.group(1).lower() if m else ""
    title = clean_title(title)
    if m and first in PRONOUNS:
        return title + sentence[m.end() :], title
    if m and first in POSSESSIVES:
        return f"{title}'s" + sentence[m.end() :], title
    m2 = re.match(r"(?:The|This) ([a-z]+)\b", sentence)
    if m2 and m2.group(1) in TITLE_NOUNS:
        return title + sentence[m2.end() :], title
    # 'Nicholas Lofton "Nick" Hexum (born ...)': a capitalised run up to the parenthesis is one name
    pm = re.match(r"([^(),;]{2,60}?)\s*\(", sentence)
    if pm and all(_is_cap(w.strip('"')) for w in pm.group(1).split()) and pm.group(1).split()[0] not in FUNCTION_CAPS:
        return sentence, pm.group(1)
    spans = find_spans(sentence, ("quote", "name"))
    if spans and spans[0].start <= 1:
        return sentence, spans[0].text
    # "A lilu or lilû is ..." in the paragraph titled "Lilu (mythology)": the title is the subject
    head = re.match(r"(.{1,60}?) (?:is|was|are|were) ", sentence)
    short = clean_title(title)
    if head and short and re.search(rf"\b{re.escape(short.lower())}\b", head.group(1).lower()):
        return short + sentence[head.end(1) :], short
    return sentence, ""


def _same_person(subject: str, title: str) -> bool:
    """Is `subject` another way of writing the title's name? "Christopher Edward Nolan", "Nolan" and
    "Edward Davis Wood Jr." are (titles "Christopher Nolan", "Ed Wood"); "Jonathan Nolan" is not."""
    sw = [w.lower() for w in re.findall(r"\w+", subject)]
    tw = [w.lower() for w in re.findall(r"\w+", title)]
    if not sw or not tw or len(tw) < 2:
        return False
    if set(tw) <= set(sw):  # all of the title's words, plus middle names
        return True
    if sw == tw[-1:]:  # the surname alone
        return True
    # same surname and the same initial: "Edward Davis Wood Jr" / "Ed Wood"
    return tw[-1] in sw and sw[0][0] == tw[0][0] and sw[0] != tw[-1]


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


def _add(out: list[tuple[str, str, str]], s: str, p: str, o: str) -> None:
    s, p, o = s.strip(" ,.;:\"'"), p.strip(" ,.;:"), o.strip(" ,.;:\"'")
    if s and p and o and s.lower() != o.lower():
        out.append((s, p, o))


def extract_sentence(sentence: str, title: str) -> list[tuple[str, str, str]]:
    """All rule triplets of one sentence. `title` stands in for pronouns and "The film"."""
    out: list[tuple[str, str, str]] = []
    sentence, subject = _prepare(sentence, title, out)
    spans = find_spans(sentence)
    who = subject or clean_title(title)
    _subject_rules(out, sentence, subject)
    _birth_rules(out, sentence, spans, who)
    _locative_rules(out, sentence, spans, who)
    _passive_rules(out, sentence, spans, subject or title)
    _verb_between_names(out, sentence, spans)
    return out


def _prepare(sentence: str, title: str, out: list[tuple[str, str, str]]) -> tuple[str, str]:
    """The sentence with its subject resolved (pronouns, the title's short name) and parentheticals
    dropped, after reading the birth/death dates and full name they state into `out`."""
    sentence = sentence.strip().replace("“", '"').replace("”", '"').replace("’", "'")
    sentence, subject = _resolve_subject(sentence, title)
    short = clean_title(title)
    full_name = ""
    if subject and short and subject != short and _same_person(subject, short):
        # "Edward Davis Wood Jr. (...) was ..." in the paragraph "Ed Wood": questions use the title's
        # name, so the triplets do too, and one triplet keeps the full name
        full_name, subject = subject, short
        sentence = short + sentence[len(full_name) :] if sentence.startswith(full_name) else sentence
        # only a biography's opening "Full Name (born ...)" states a full name
        if (
            len(full_name.split()) > len(short.split())
            and re.match(r"\s*\(", sentence[len(short) :])
            and normalize_entity(full_name) != normalize_entity(short)
        ):  # "The Rialto Bridge" is no full name
            out.append((short, "full name", full_name.rstrip(".")))

    # parentheticals right after the subject: birth dates and life spans, then drop them all
    if subject and sentence.startswith(subject):
        par = re.match(r"\s*\(([^()]*)\)", sentence[len(subject) :])
        if par:
            inner = par.group(1)
            dates = [d.group(0) for d in DATE_RE.finditer(inner)]
            if re.search(r"\bborn\b", inner) and dates:
                _add(out, subject, "born on", dates[0])
            elif len(dates) == 2 and re.search(r"[-–—]", inner):
                _add(out, subject, "born on", dates[0])
                _add(out, subject, "died on", dates[1])
    sentence = re.sub(r"\s*\([^()]*\)", "", sentence)
    sentence = re.sub(r"\s+", " ", sentence).strip()
    if not subject:
        spans = find_spans(sentence, ("quote", "name"))
        subject = spans[0].text if spans and spans[0].start <= 1 else ""
    return sentence, subject


def _subject_rules(out: list[tuple[str, str, str]], sentence: str, subject: str) -> None:
    """What the sentence says of its subject: possessive, copula and appositive."""
    if not (subject and sentence.startswith(subject)):
        return
    rest = sentence[len(subject) :]
    # possessive subject: "Nolan's father was X", "<title>'s daughter is X"
    pm = re.match(r"'s? ([a-z]+(?: [a-z]+)?) (?:is|was|are|were) (.+)", rest)
    if pm:
        obj_spans = [s for s in find_spans(pm.group(2)) if s.start == 0]
        if obj_spans:
            _add(out, subject, pm.group(1), obj_spans[0].text)
    cm = re.match(r" (is|was|are|were)(?: (?:also|once|currently|now|still|formerly))? (.+)", rest)
    if cm and not re.match(r"born\b", cm.group(2)):
        obj = clean_object(cm.group(2))
        if obj and not PASSIVE_RE.match(cm.group(2)):
            _add(out, subject, cm.group(1), obj)
    am = re.match(r", (?:a|an|the) ([^,]{3,60}),", rest)
    if am:
        obj = clean_object(am.group(1), max_words=7)
        if obj:
            _add(out, subject, "is", obj)


def _birth_rules(out: list[tuple[str, str, str]], sentence: str, spans: list, who: str) -> None:
    # birth: "X was born in London", "X was born on 5 May 1950 in Leeds"
    for bm in re.finditer(r"\bborn (?:(in|on|at) )?", sentence):
        after = [s for s in spans if s.start >= bm.end() and s.start - bm.end() <= 14]
        if not bm.group(1):  # "born Kerry Saxby" is a birth name, not a place
            after = [s for s in after if s.kind == "date"]
        for s in after[:1]:
            rel = "born on" if s.kind == "date" and not re.fullmatch(r"\d{4}", s.text) else "born in"
            _add(out, who, rel, place_text(s, spans, sentence) if s.kind == "name" else s.text)


def _locative_rules(out: list[tuple[str, str, str]], sentence: str, spans: list, who: str) -> None:
    # "based in Columbus, Ohio", "founded in 2005", "located in Jefferson County, New York"
    for lm in LOCATIVE_RE.finditer(sentence):
        after = [s for s in spans if s.start == lm.end()]
        if after:
            _add(out, who, f"{lm.group(1)} {lm.group(2)}", place_text(after[0], spans, sentence))


def _passive_rules(out: list[tuple[str, str, str]], sentence: str, spans: list, who: str) -> None:
    # passive "directed by X": the thing directed is the sentence's subject (or the title)
    for pm in PASSIVE_RE.finditer(sentence):
        agents = [s for s in spans if s.start >= pm.end() and s.kind in ("name", "quote")]
        if not agents or agents[0].start != pm.end():
            continue
        targets = [agents[0].text]
        tail = sentence[agents[0].end :]
        more = re.match(r"(?:,| and) ", tail)
        if more and len(agents) > 1 and agents[1].start == agents[0].end + more.end():
            targets.append(agents[1].text)
        for verb in re.split(r",\s*|\s+and\s+|\s+", pm.group(1)):
            if verb:
                for t in targets:
                    _add(out, who, f"{verb} by", t)


def _verb_between_names(out: list[tuple[str, str, str]], sentence: str, spans: list) -> None:
    # verb between two named spans: "Nolan married Emma Thomas"
    for a, b in zip(spans, spans[1:]):
        gap = sentence[a.end : b.start].strip()
        gap = re.sub(r"^,?\s*(?:who|which)\s+", "", gap)
        gap = re.sub(r"\s+(?:the|a|an)$", "", gap)
        if not re.fullmatch(r"[a-z]+(?: [a-z]+){0,3}", gap) or LOCATIVE_RE.match(gap + " in "):
            continue
        words = gap.split()
        first = words[0]
        if first in COPULAS | STOPWORDS and not (first in ("has", "had") and len(words) > 1):
            continue
        if a.kind == "number" or " and " in f" {gap} " or " or " in f" {gap} ":
            continue
        if not (first in COMMON_VERBS or re.search(r"(?:ed|es|s)$", first)) or first.endswith("ss"):
            continue
        if gap.endswith(" by"):
            continue  # handled by the passive rule
        _add(out, a.text, gap, b.text)


def extract_triplets(title: str, text: str) -> list[tuple[str, str, str]]:
    """Rule triplets of a chunk, unfiltered and in sentence order (duplicates possible).

    Two chunk-level checks keep noise out: a part longer than a name or a short phrase (flattened
    tables run names together), and a one-word subject that the chunk also writes in lower case
    ("Released ..." / "released") - a capitalised common word, not a name.
    """
    lower_words = set(re.findall(r"(?<![.!?]\s)(?<!^)\b([a-z][a-z\-]+)\b", text))
    out: list[tuple[str, str, str]] = []
    for sent in split_sentences(text):
        for s, p, o in extract_sentence(sent, title):
            if len(s.split()) > 8 or len(o.split()) > 12:
                continue
            if " " not in s and s.lower() in lower_words and s != clean_title(title):
                continue
            out.append((s, p, o))
    return out
