"""Entity shuffling (KG2RAG's Shuffle-HotpotQA idea): rename every entity consistently.

An LLM that has read Wikipedia can answer many HotpotQA questions without retrieval. Renaming
every entity (a person to another person of the corpus, a place to another place, a year to
another year, a number to another number) across documents, questions, answers and triplets
keeps every question answerable from its evidence while making memory useless.

Entities come from three places: triplet subjects/objects, document titles, and capitalized
spans in the text (runs of capitalized words, "of"/"de"/"von"... allowed inside). Kinds are
heuristic: votes from triplet predicates ("born in" -> its object is a place, its subject a
person), from the text around a mention ("in X", "X (born"), and from place words ("River",
"County"). Years are renamed inside full dates too ("June 3, 1942" -> "June 3, 1967"), so a
question answered by "1942" stays answerable.

The result is checked: every question whose answer appeared in its supporting text before must
still find its (renamed) answer there. A renaming that breaks that (a longer entity swallowing
the answer, "Paris" inside "Paris Hilton") is undone for the entities involved, and the mapping
rebuilt, until the corpus is consistent.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from typing import Any

from engine.core.chunking import make_doc_id
from engine.core.types import Document, Question
from engine.eval.metrics import normalize_answer
from engine.store import Corpus, CorpusError, Workspace

PERSON, PLACE, NAME, YEAR, NUMBER = "person", "place", "name", "year", "number"

_CONNECT = r"(?:of|the|de|da|del|der|di|du|van|von|la|le|y|&)"
_CAP_WORD = r"[A-Z][\w'’.\-]*[\w]|[A-Z]"
_SPAN = re.compile(rf"(?<![\w])(?:{_CAP_WORD})(?:\s+(?:{_CONNECT}\s+)?(?:{_CAP_WORD}))*")
_YEAR = re.compile(r"(?<![\w.,])(1[0-9]{3}|20[0-9]{2})(?![\w]|[.,]\d)")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w]|[.,]\d)|(?<![\w.,])\d+(?:\.\d+)?(?![\w]|[.,]\d)")
_DIGIT = re.compile(r"\d")
# Capitalized words that start sentences or are not entities on their own.
_STOP = frozenset(
    """
the a an he she it they we i you his her its their our this that these those there here in on at
of for from by with after before during when while however but and or as if also then thus later
today yes no not one two three first second new old who what which where when how why whose whom
is are was were did does do has have had can could would will shall should may might
january february march april may june july
august september october november december monday tuesday wednesday thursday friday saturday sunday
""".split()
)
_PLACE_WORDS = frozenset(
    """city county river island islands lake mountain mountains state province kingdom
republic street park valley bay sea ocean district village town airport station university college
""".split()
)
_PERSON_PRED = re.compile(
    r"\b(born|died|married|spouse|wife|husband|son|daughter|child|father|mother|"
    r"actor|actress|singer|author|directed|director|starring|played|wrote|written|"
    r"composer|member|brother|sister|nationality|occupation)\b"
)
_PLACE_PRED = re.compile(
    r"\b(located|born in|capital|country|city|headquarter\w*|based in|situated|"
    r"flows|borders|county|state|region)\b"
)


@dataclass
class ShuffleReport:
    corpus: str
    seed: int
    entities: dict[str, int] = field(default_factory=dict)  # kind -> how many were renamed
    frozen: list[str] = field(default_factory=list)  # entities left as they were to keep answers findable
    unchecked: list[str] = field(default_factory=list)  # qids whose answer was not in the text even before
    inconsistent: list[str] = field(default_factory=list)  # qids still failing (should stay empty)
    mapping: dict[str, str] = field(default_factory=dict)


# --- entity discovery -------------------------------------------------------------------------------


def _clean_span(span: str) -> str:
    words = span.split()
    while words and words[0].lower() in _STOP:
        words = words[1:]
    while words and words[-1].lower() in _STOP:
        words = words[:-1]
    s = re.sub(r"['’]s?$", "", " ".join(words).rstrip("."))  # "Carolina's" -> "Carolina"
    return s if len(s) > 1 and not _DIGIT.search(s) else ""


def _title_base(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()


_PERSON_LEAD = re.compile(
    r"\((?:born|died|c\.|\d)|\b(?:is|was) an? (?:[\w-]+ ){0,4}(?:actor|actress|singer|"
    r"director|writer|author|politician|player|musician|poet|rapper|composer|producer|"
    r"journalist|businessman|businesswoman|artist|painter|scientist|footballer|comedian|"
    r"novelist|philosopher|lawyer|judge|king|queen|prince|princess|guitarist|drummer|"
    r"model|film ?maker|screenwriter|coach|general|officer|priest|bishop)\b"
)
_PLACE_LEAD = re.compile(
    r"\b(?:is|was) (?:a|an|the) (?:[\w-]+ ){0,4}(?:city|town|village|county|country|state|"
    r"river|lake|island|mountain|region|province|district|suburb|borough|municipality|"
    r"neighborhood|capital|airport|park|valley|bay|peninsula|commune|census)\b"
)


def _title_kind(title: str, text: str) -> str:
    """Wikipedia-style lead sentences say what a page is about: "X (born 1970) is a director"."""
    lead = text[:300]
    if _PLACE_LEAD.search(lead):
        return PLACE
    pronouns = len(re.findall(r"\b(?:he|she|his|her|him)\b", text, re.IGNORECASE))
    if _PERSON_LEAD.search(lead) or pronouns >= 2:
        return PERSON
    return ""


def _kind_of_name(s: str) -> str:
    # one-word names ("Latin", "Oahu") swap among themselves, multi-word ones among themselves
    return NAME if " " not in s else NAME + "s"


def discover(
    texts: Iterable[str],
    titles: Iterable[str],
    triplets: Iterable[tuple[str, str, str]],
    title_texts: dict[str, str] | None = None,
) -> dict[str, str]:
    """Entity surface form -> kind. `title_texts` (title -> its document's text) lets a page's
    lead sentence decide the kind of its title entity."""
    votes: dict[str, Counter] = defaultdict(Counter)
    names: set[str] = set()
    initial_only: set[str] = set()  # one-word spans seen only at a sentence start ("Born", "Known")
    mid: set[str] = set()
    texts = list(texts)
    for t in texts:
        for m in _SPAN.finditer(t):
            s = _clean_span(m.group(0))
            if not s:
                continue
            names.add(s)
            at_start = m.group(0).startswith(s) and (
                m.start() == 0 or re.search(r"[.!?:;\"(]\s*$", t[max(0, m.start() - 3) : m.start()])
            )
            (initial_only if at_start and " " not in s else mid).add(s)
            before = t[max(0, m.start() - 6) : m.start()].lower()
            after = t[m.end() : m.end() + 12].lower()
            if re.search(r"\b(in|at|near|from)\s+$", before):
                votes[s][PLACE] += 1
            if after.startswith((" (born", " was born", " (died", " is an american", " (c.")):
                votes[s][PERSON] += 2
    names -= initial_only - mid
    for title in titles:
        s = _clean_span(_title_base(title))
        if s:
            names.add(s)
            kind = _title_kind(title, (title_texts or {}).get(title, ""))
            if kind:
                votes[s][kind] += 5
    for subj, pred, obj in triplets:
        p = pred.lower()
        for part, role in ((subj, "s"), (obj, "o")):
            s = _clean_span(part)
            if not s or s not in names:
                continue  # lower-case parts ("film director") are common nouns, not entities
            if _PLACE_PRED.search(p) and role == "o":
                votes[s][PLACE] += 2
            elif _PERSON_PRED.search(p) and (role == "s" or re.search(r"\bby\b", p)):
                votes[s][PERSON] += 2
    kinds: dict[str, str] = {}
    for s in names:
        v = votes.get(s, Counter())
        if set(w.lower() for w in s.split()) & _PLACE_WORDS:
            v[PLACE] += 2
        kinds[s] = PERSON if v[PERSON] > v[PLACE] else PLACE if v[PLACE] > v[PERSON] else _kind_of_name(s)
    for t in texts:
        for m in _YEAR.finditer(t):
            kinds[m.group(0)] = YEAR
        for m in _NUMBER.finditer(t):
            kinds.setdefault(m.group(0), NUMBER)
    return kinds


# --- renaming ---------------------------------------------------------------------------------------


def _trie_regex(words: Iterable[str]) -> re.Pattern | None:
    """One regex matching any of `words`, longest first (a trie, so 10k entities stay fast)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = True

    def build(node: dict) -> str:
        end = "" in node
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch != ""]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        # a greedy optional group tries the longer entity first and backtracks to the shorter one
        return f"(?:{body})?" if end else body

    if not trie:
        return None
    return re.compile(r"(?<![\w])" + build(trie) + r"(?![\w])")


def build_mapping(kinds: dict[str, str], frozen: set[str], seed: int) -> dict[str, str]:
    """A seeded cyclic permutation inside each kind (no entity maps to itself when its kind has 2+)."""
    rng = random.Random(seed)
    mapping: dict[str, str] = {}
    for kind in sorted(set(kinds.values())):
        pool = sorted(e for e, k in kinds.items() if k == kind and e not in frozen)
        rng.shuffle(pool)
        for i, e in enumerate(pool):
            mapping[e] = pool[(i + 1) % len(pool)]
    return mapping


class Renamer:
    def __init__(self, mapping: dict[str, str]):
        self.mapping = {k: v for k, v in mapping.items() if k != v}
        self.regex = _trie_regex(self.mapping)

    def __call__(self, text: str) -> str:
        if not text or self.regex is None:
            return text
        return self.regex.sub(lambda m: self.mapping.get(m.group(0), m.group(0)), text)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        return [] if self.regex is None else [(m.start(), m.end(), m.group(0)) for m in self.regex.finditer(text)]


# --- the shuffled corpus ----------------------------------------------------------------------------


def _support_text(q: Question, docs_by_title: dict[str, list[Document]]) -> str:
    titles = list(q.supporting_titles) or [t for t, _ in q.supporting_facts]
    return "\n".join(d.text for t in titles for d in docs_by_title.get(t, []))


def _answers_in(text: str, answers: Iterable[str]) -> bool:
    norm = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in norm for a in answers if normalize_answer(a))


def _conflicts(answer: str, text: str, renamer: Renamer) -> set[str]:
    """Entities whose renaming makes `answer` unfindable in `text`: those matched inside the answer
    and those overlapping one of its occurrences in the text."""
    bad = {s for _, _, s in renamer.spans(answer)}
    # the text may write the answer differently ("Come with Me( Pure" for "Come With Me (Pure"):
    # compare normalized words too
    na = f" {normalize_answer(answer)} "
    for e in renamer.mapping:
        ne = normalize_answer(e)
        if ne and (f" {ne} " in na or (na.strip() and na in f" {ne} ")):
            bad.add(e)
    low = text.lower()
    spans = renamer.spans(text)
    start = low.find(answer.lower())
    while start >= 0 and answer:
        end = start + len(answer)
        bad |= {s for a, b, s in spans if a < end and b > start}
        start = low.find(answer.lower(), start + 1)
    return bad


def plan_shuffle(
    docs: list[Document],
    questions: list[Question],
    triplets: list[tuple[str, str, str]],
    seed: int = 0,
    max_rounds: int = 8,
) -> tuple[Renamer, ShuffleReport]:
    """Find a renaming under which every checkable question stays answerable from its support."""
    kinds = discover(
        [d.text for d in docs] + [q.question for q in questions],
        [d.title for d in docs],
        triplets,
        {d.title: d.text for d in docs},
    )
    by_title: dict[str, list[Document]] = defaultdict(list)
    for d in docs:
        by_title[d.title].append(d)
    report = ShuffleReport(corpus="", seed=seed)
    checks = []
    for q in questions:
        golds = [a for a in q.answers if normalize_answer(a) not in ("", "yes", "no", "noanswer")]
        if not golds:
            continue  # yes/no answers survive any renaming
        text = _support_text(q, by_title)
        if not _answers_in(text, golds):
            report.unchecked.append(q.qid)
            continue
        checks.append((q, golds, text))
    frozen: set[str] = set()
    for _ in range(max_rounds):
        renamer = Renamer(build_mapping(kinds, frozen, seed))
        failing = [(q, g, t) for q, g, t in checks if not _answers_in(renamer(t), [renamer(a) for a in g])]
        if not failing:
            break
        grew = False
        for _q, golds, text in failing:
            for a in golds:
                new = _conflicts(a, text, renamer) - frozen
                frozen |= new
                grew = grew or bool(new)
        if not grew:
            break
    report.inconsistent = [q.qid for q, g, t in checks if not _answers_in(renamer(t), [renamer(a) for a in g])]
    report.frozen = sorted(frozen)
    report.mapping = dict(renamer.mapping)
    report.entities = dict(Counter(kinds[e] for e in renamer.mapping))
    return renamer, report


def shuffle_question(q: Question, rn: Renamer, doc_ids: dict[str, str] | None = None) -> Question:
    """`doc_ids`: old -> renamed document ids, so MuSiQue's gold paragraphs still point at their
    (renamed) documents."""
    doc_ids = doc_ids or {}
    return dc_replace(
        q,
        question=rn(q.question),
        answers=tuple(rn(a) for a in q.answers),
        supporting_facts=tuple((rn(t), i) for t, i in q.supporting_facts),
        supporting_titles=tuple(rn(t) for t in q.supporting_titles),
        supporting_docs=tuple(doc_ids.get(d, d) for d in q.supporting_docs),
        evidence=tuple(rn(e) for e in q.evidence),
    )


def shuffle_document(d: Document, rn: Renamer) -> Document:
    title, text = rn(d.title), rn(d.text)
    sents = tuple(rn(s) for s in d.sentences) if d.sentences is not None else None
    return Document(make_doc_id(title, text), title, text, d.source, d.kind, sents)


def shuffle_corpus(
    ws: Workspace, corpus: Corpus, name: str, *, seed: int = 0, replace: bool = True, on_progress: Any = None
) -> tuple[Corpus, ShuffleReport]:
    """A renamed copy of `corpus` named `name` (documents re-embedded, triplets renamed and re-linked).
    engine.eval.probes.shuffle_entities names the copy and is the entry point callers use."""
    if ws.exists(name):
        if not replace:
            raise CorpusError(f"corpus {name!r} already exists; drop it or pass replace=True")
        ws.drop(name)
    docs = [d for info in corpus.documents() if (d := corpus.get_document(info.doc_id)) is not None]
    questions = corpus.questions()
    triplets = corpus.triplets()
    rn, report = plan_shuffle(docs, questions, [t.key for t in triplets], seed=seed)
    report.corpus = name

    copy = ws.create(name, corpus.settings)
    new_docs = [shuffle_document(d, rn) for d in docs]
    kwargs = {"on_progress": on_progress} if on_progress else {}
    copy.add_documents(new_docs, **kwargs)
    renamed_ids = {old.doc_id: new.doc_id for old, new in zip(docs, new_docs)}
    copy.add_questions([shuffle_question(q, rn, renamed_ids) for q in questions])
    # a renamed chunk may be cut differently (word counts move); link by the sentence it starts at
    by_chunk: dict[str, list] = defaultdict(list)
    for t in triplets:
        for cid in t.chunk_ids:
            by_chunk[cid].append(t)
    rows = []
    for old, new in zip(docs, new_docs):
        new_chunks = copy.chunks(new.doc_id)
        by_start = {c.sent_start: c.chunk_id for c in new_chunks}
        for c in corpus.chunks(old.doc_id):
            target = by_start.get(c.sent_start) or next(
                (n.chunk_id for n in new_chunks if n.sent_start <= c.sent_start < max(n.sent_end, n.sent_start + 1)),
                None,
            )
            if target is None:
                continue
            for t in by_chunk.get(c.chunk_id, ()):
                rows.append((target, rn(t.subject), rn(t.predicate), rn(t.object)))
    if rows:
        copy.import_triplets(rows)
    return copy, report
