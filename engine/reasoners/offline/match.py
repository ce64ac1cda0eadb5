"""Matching helpers of the offline reasoner: fuzzy entities, relation similarity, values, dates.

Kept apart from `offline.py` so the four jobs read as plain steps. All scores are in [0, 1].
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.core.textnorm import normalize_entity
from engine.reasoners.offline.spans import MONTHS, NUMBER_RE, STOPWORDS, YEAR_RE, find_spans

#: Question relations -> how paragraphs state them. The embedding alone rates "performer" vs
#: "performed by" at 0.49, under the binding threshold; these forms are what the extractor writes.
RELATION_FORMS = {
    "director": ["directed by"],
    "directed": ["directed by"],
    "writer": ["written by"],
    "author": ["written by"],
    "wrote": ["written by"],
    "performer": ["performed by", "sung by", "recorded by"],
    "singer": ["sung by", "performed by"],
    "producer": ["produced by"],
    "publisher": ["published by"],
    "developer": ["developed by"],
    "creator": ["created by"],
    "founder": ["founded by"],
    "composer": ["composed by", "music by"],
    "designer": ["designed by"],
    "owner": ["owned by"],
    "born": ["born on", "born in"],
    "birth": ["born on", "born in"],
    "birthplace": ["born in"],
    "died": ["died on", "died in"],
    "death": ["died on"],
    "formed": ["formed in", "founded in", "established in"],
    "founded": ["founded in", "formed in", "established in"],
    "established": ["established in", "founded in", "formed in"],
    "released": ["released in", "released on"],
    "published": ["published in", "published on"],
    "opened": ["opened in", "opened on"],
    "date": ["born on", "founded in", "formed in", "established in", "released in", "published in", "opened in"],
    "location": ["located in", "based in"],
    "located": ["located in", "based in"],
    "based": ["based in"],
    "headquarters": ["headquartered in", "based in"],
    "spouse": ["married"],
    "population": ["had a population of"],
    # whole phrases, looked up before their last word
    "place of death": ["died in"],
    "place of birth": ["born in"],
    "date of birth": ["born on"],
    "date of death": ["died on"],
}
#: Relations whose value is the demonym inside a copula object ("is an English film director").
NATIONALITY = {"nationality", "country", "citizenship", "origin"}
DATE_RELATIONS = {
    "born",
    "birth",
    "died",
    "death",
    "date",
    "formed",
    "founded",
    "established",
    "released",
    "published",
    "opened",
    "created",
    "built",
    "started",
    "launched",
}


@dataclass(frozen=True)
class Fact:
    """A triplet the reasoner can match, with the text it came from (shown as the binding's source)."""

    subject: str
    predicate: str
    object: str
    source: str


def entity_score(query: str, candidate: str) -> float:
    """1.0 for the same normalized entity; 0.9 when one's words all occur in the other
    ("Nolan" / "Christopher Edward Nolan"); else the word overlap when it covers most of the query."""
    a, b = normalize_entity(query), normalize_entity(candidate)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    wa, wb = set(a.split()) - STOPWORDS, set(b.split()) - STOPWORDS
    if not wa or not wb:
        return 0.0
    if wa <= wb or wb <= wa:
        # a single shared word out of many is weak evidence ("King" vs "Mark King")
        return 0.9 if min(len(wa), len(wb)) >= 2 or max(len(wa), len(wb)) <= 2 else 0.7
    # partial overlap: "Alexandria International Airport" must not match "Watertown International Airport"
    overlap = len(wa & wb) / len(wa | wb)
    return 0.6 if overlap >= 0.75 else 0.0


def relation_key(predicate: str) -> str:
    words = [w for w in re.findall(r"[a-z]+", predicate.lower()) if w not in STOPWORDS]
    return words[-1] if words else ""


#: relation phrases ("born in", "full name") recur across questions: their vectors are kept per
#: embedder for the whole process (each question builds its own reasoner), at most this many
PHRASE_CACHE_SIZE = 20_000
_PHRASES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _BoundedCache(dict):
    """A dict that forgets its oldest half when it passes `PHRASE_CACHE_SIZE` entries."""

    def __setitem__(self, key, value) -> None:
        if len(self) >= PHRASE_CACHE_SIZE:
            for old in list(self)[: len(self) // 2]:
                self.pop(old, None)
        super().__setitem__(key, value)


def _phrase_cache(embedder) -> dict[str, np.ndarray]:
    """The phrase vectors of this embedder object, shared by every reasoner over it (the app's
    embedder is one per process); gone with the embedder."""
    if embedder is None:
        return {}
    try:
        return _PHRASES.setdefault(embedder, _BoundedCache())
    except TypeError:  # an embedder that cannot be weakly referenced keeps a cache per reasoner
        return _BoundedCache()


class RelationScorer:
    """Similarity of a question relation to a fact predicate: embedding cosine over the relation and
    its usual surface forms, or word overlap when no embedder is given. Encodings are memoised.

    `sentence_vectors` (optional): a callable giving the stored vectors of context sentences
    (`Corpus.sentence_vectors`, embedded once when their chunks were added), so ranking a context's
    sentences embeds only the question; without it every sentence is embedded per question."""

    def __init__(self, embedder=None, sentence_vectors: Callable[[list[str]], np.ndarray] | None = None):
        self.embedder = embedder
        self.sentence_vectors = sentence_vectors
        self._cache = _phrase_cache(embedder)

    def _vecs(self, texts: list[str]) -> np.ndarray:
        # read into a local dict: the shared cache may evict an entry meanwhile (another question's phrases)
        have = {t: v for t in dict.fromkeys(texts) if (v := self._cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in have]
        if missing:
            for t, v in zip(missing, self.embedder.encode(missing)):
                have[t] = self._cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([have[t] for t in texts])

    def forms(self, relation: str) -> list[str]:
        rel = relation.strip().lower()
        return [rel] + RELATION_FORMS.get(rel, RELATION_FORMS.get(relation_key(rel), []))

    def score(self, relation: str, predicates: list[str]) -> list[float]:
        if not predicates:
            return []
        forms = self.forms(relation)
        lows = [p.lower().strip() for p in predicates]
        exact = [1.0 if p in forms else 0.0 for p in lows]
        if self.embedder is None:
            qw = set(re.findall(r"[a-z]+", " ".join(forms))) - STOPWORDS
            sims = []
            for p in lows:
                pw = set(re.findall(r"[a-z]+", p)) - STOPWORDS
                sims.append(len(qw & pw) / max(1, len(pw)) if pw else (1.0 if p in forms else 0.0))
        else:
            q = self._vecs(forms)
            c = self._vecs(lows)
            sims = (c @ q.T).max(axis=1).tolist()
        return [max(e, float(s)) for e, s in zip(exact, sims)]

    def sentence_scores(self, query: str, sentences: list[str]) -> list[float]:
        """Question-to-sentence similarity for picking an answer sentence from free context."""
        if not sentences:
            return []
        if self.embedder is None:
            qw = set(re.findall(r"[a-z0-9]+", query.lower())) - STOPWORDS
            return [len(qw & set(re.findall(r"[a-z0-9]+", s.lower()))) / max(1, len(qw)) for s in sentences]
        if self.sentence_vectors is not None:
            question = np.asarray(self.embedder.encode([query]), np.float32)[0]
            return (self.sentence_vectors(sentences) @ question).tolist()
        vecs = self.embedder.encode([query] + sentences)
        return (vecs[1:] @ vecs[0]).tolist()


def demonym(value: str) -> str:
    """ "English-American film director" -> "English-American": the nationality inside a copula object."""
    m = re.match(r"(?:\d{4}\s+)?((?:[A-Z][a-z]+-)*[A-Z][a-z]+(?:an|ian|ese|ish|i|ch|ic))\b", value.strip())
    return m.group(1) if m else ""


def same_value(a: str, b: str) -> bool:
    na, nb = normalize_entity(a), normalize_entity(b)
    if not na or not nb:
        return False
    if na == nb:
        return True
    pa, pb = set(re.split(r"[\s\-]+", na)), set(re.split(r"[\s\-]+", nb))
    return bool(pa & pb) and (pa <= pb or pb <= pa)


def parse_date(text: str) -> tuple[int, int, int] | None:
    """(year, month, day) of the first date in `text`; month/day 0 when not given."""
    spans = [s for s in find_spans(text, ("date",))]
    for s in spans:
        y = YEAR_RE.search(s.text)
        if not y:
            continue
        month = next((i % 12 + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m}\b", s.text)), 0)
        day = re.search(r"\b(\d{1,2})\b", s.text.replace(y.group(1), ""))
        return int(y.group(1)), month, int(day.group(1)) if day else 0
    return None


def parse_number(text: str) -> float | None:
    m = NUMBER_RE.search(text)
    if not m:
        return None
    raw = m.group(0)
    scale = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "hundred": 1e2}
    mult = next((v for k, v in scale.items() if raw.endswith(k)), 1.0)
    digits = raw.split()[0].replace(",", "")
    try:
        return float(digits) * mult
    except ValueError:
        return None


def split_proposition(prop: str, entity: str) -> tuple[str, str, str] | None:
    """Recover (s, p, o) from a proposition "s p o" that starts or ends with `entity`.

    Propositions lose the part boundaries, so the predicate is taken as the lowercase words right
    after the subject and the object as what follows; a proposition that does not start or end with
    the entity is not split (returns None) rather than guessed."""
    words = prop.split()
    ent_n = normalize_entity(entity)
    n = len(ent_n.split())
    for k in range(max(1, n - 1), min(len(words), n + 4) + 1):
        head = " ".join(words[:k])
        if entity_score(entity, head) >= 0.9 and k < len(words):
            rest = words[k:]
            j = 0
            while j < len(rest) and rest[j][:1].islower() and not rest[j][:1].isdigit():
                j += 1
            if j == len(rest):  # all lowercase: "lilu is masculine akkadian word" -> first word is the verb
                j = 1
            if 0 < j < len(rest):
                return head, " ".join(rest[:j]), " ".join(rest[j:])
    for k in range(max(1, n - 1), min(len(words), n + 4) + 1):
        tail = " ".join(words[-k:])
        if entity_score(entity, tail) >= 0.9 and k < len(words):
            rest = words[:-k]
            j = 0
            while j < len(rest) and not rest[j][:1].islower():
                j += 1
            if 0 < j < len(rest):
                return " ".join(rest[:j]), " ".join(rest[j:]), tail
    return None
