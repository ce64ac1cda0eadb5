"""Sentence-level triplet rules for the offline reasoner (the spans they read are in spans.py).

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

import functools
import re

from engine.core.textnorm import normalize_entity
from engine.reasoners.offline.spans import (
    COMMON_VERBS,
    COPULAS,
    DATE_RE,
    FUNCTION_CAPS,
    LOCATIVE_RE,
    PASSIVE_RE,
    POSSESSIVES,
    PRONOUNS,
    STOPWORDS,
    TITLE_NOUNS,
    clean_object,
    clean_title,
    find_spans,
    is_cap,
    place_text,
    split_sentences,
)


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
    if pm and all(is_cap(w.strip('"')) for w in pm.group(1).split()) and pm.group(1).split()[0] not in FUNCTION_CAPS:
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

    Memoised per (title, text): the offline answer and solve steps read the triplets of every
    paragraph of their context, and the same paragraphs come back across questions, rounds and
    methods (the rules cost ~1 ms a sentence: most of the answer step once sentences are not embedded).
    """
    return list(_extract_memo(title, text))


@functools.lru_cache(maxsize=8192)
def _extract_memo(title: str, text: str) -> tuple[tuple[str, str, str], ...]:
    lower_words = set(re.findall(r"(?<![.!?]\s)(?<!^)\b([a-z][a-z\-]+)\b", text))
    out: list[tuple[str, str, str]] = []
    for sent in split_sentences(text):
        for s, p, o in extract_sentence(sent, title):
            if len(s.split()) > 8 or len(o.split()) > 12:
                continue
            if " " not in s and s.lower() in lower_words and s != clean_title(title):
                continue
            out.append((s, p, o))
    return tuple(out)
