"""KG2RAG as the authors' distractor script does it, where the paper leaves the choice open: the
`paper` preset's expansion scores, title completion, question links and fill ranking.

Restated from nju-websoft/KG2RAG `code/util/kg_post_processor.py` (used by `code/kg_rag_distractor.py`),
on our entity graph: an entity is a normalized string (SPEC's fix of the authors' title-only
matching), a document is a corpus document, and "the chunks of an entity" are the chunks our walk
reached through it (engine/methods/kg2rag/graph.py `Expansion.via`).

* `entity_scores`: `KGRetrievePostProcessor`'s bookkeeping. Each seed chunk adds its similarity to
  its document's title and to every entity of its triplets (seed titles excepted); each hop adds,
  to every entity it reaches, the mean score of the entity it was reached from. An expanded chunk
  then scores `(ent_score + avg) / (ent_count + 1)` (avg: the seeds' mean similarity), and that is
  its edge weight in the spanning trees. Its "highly related" titles (the top 2 by mean seed score,
  and any title holding two of the first k/2 seeds) are completed with all their chunks.
* `question_links`: `GraphFilterPostProcessor`'s weight-0 "cooccurrence" edges between every two
  entities the question mentions (3-gram overlap >= 0.9, then one pass over the candidates'
  triplets whose relation the question also mentions), so the spanning trees join them.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.core.textnorm import normalize_entity
from engine.methods.kg2rag.graph import Expansion
from engine.methods.kg2rag.records import GraphEdge, ScoredChunkId, Tree
from engine.methods.kg2rag.trace import KG2RAGTrace
from engine.store.protocol import CorpusView

#: The predicate of a question link (the authors' `rel='cooccurrence'`).
COOCCURRENCE = "cooccurrence"
MENTION_THRESHOLD = 0.90  # the authors' overlap threshold for "the question mentions it"


def ngram_overlap(span: str, sent: str, n: int = 3) -> float:
    """The authors' `ngram_overlap`: the share of `span`'s character n-grams (spaces and lone
    punctuation tokens removed, lower-cased) found in `sent`'s, smoothed by 0.01."""
    while len(span) < n or len(sent) < n:
        n -= 1
    if n <= 0:
        return 0.0
    a_text = "".join(t for t in span.lower().split() if t not in string.punctuation)
    b_text = "".join(t for t in sent.lower().split() if t not in string.punctuation)
    a = {a_text[i : i + n] for i in range(len(a_text) - n + 1)}
    b = {b_text[i : i + n] for i in range(len(b_text) - n + 1)}
    return float((len(a & b) + 0.01) / (len(a) + 0.01))


@dataclass
class EntityScores:
    """The authors' entity bookkeeping for one question."""

    count: dict[str, int] = field(default_factory=dict)
    score: dict[str, float] = field(default_factory=dict)
    seed_titles: list[str] = field(default_factory=list)  # normalized, in seed order
    highly_related: list[str] = field(default_factory=list)  # normalized seed titles to complete
    avg: float = 0.0  # the seeds' mean similarity

    def bump(self, entity: str, by: float) -> None:
        self.count[entity] = self.count.get(entity, 0) + 1
        self.score[entity] = self.score.get(entity, 0.0) + by

    def mean(self, entity: str) -> float:
        return self.score[entity] / self.count[entity] if self.count.get(entity) else 0.0

    def chunk_score(self, entity: str) -> float:
        """`(ent_score + avg) / (ent_count + 1)` of the entity a chunk joined through (0 when unscored)."""
        if entity not in self.count:
            return 0.0
        return (self.score[entity] + self.avg) / (self.count[entity] + 1)


def entity_scores(
    seeds: list[tuple[str, float, str]],
    seed_entities: dict[str, list[tuple[str, str]]],
    links: Iterable[tuple[int, str, str]],
) -> EntityScores:
    """`seeds`: (chunk id, similarity, title) best first; `seed_entities`: chunk id -> the
    (subject, object) of each triplet it states, normalized; `links`: (hop, from, reached) per
    followed triplet, in hop order (`Expansion.links`)."""
    out = EntityScores()
    if not seeds:
        return out
    half = len(seeds) // 2
    for i, (_, sc, title) in enumerate(seeds):
        t = normalize_entity(title)
        if i < half and t in out.seed_titles and t not in out.highly_related:
            out.highly_related.append(t)  # two of the first k/2 seeds from one document
        if t not in out.seed_titles:
            out.seed_titles.append(t)
        out.bump(t, sc)
    titles = set(out.seed_titles)
    # Python's sort is stable: equal means keep seed order, as the authors' sorted() does
    for t in sorted(out.seed_titles, key=out.mean, reverse=True)[:2]:
        if t not in out.highly_related:
            out.highly_related.append(t)
    related = set(titles)
    for cid, sc, _ in seeds:
        for pair in seed_entities.get(cid, []):
            for x in pair:
                if x and x not in titles:
                    out.bump(x, sc)
                    related.add(x)
    hop, reached = 0, set[str]()
    for h, frm, x in links:
        if h != hop:
            related |= reached
            hop, reached = h, set()
        if x not in related:
            out.bump(x, out.mean(frm))
            reached.add(x)
    out.avg = sum(sc for _, sc, _ in seeds) / len(seeds)
    return out


def question_links(question: str, edges: list[GraphEdge], titles: Iterable[str]) -> list[GraphEdge]:
    """Weight-0 edges between every two entities the question mentions that no edge joins yet.

    Mentioned: a candidate's title or a triplet's subject or object whose 3-grams the question
    holds (`ngram_overlap` >= 0.9); then one pass over the triplets: the other end of a triplet
    whose relation the question mentions too joins them."""
    names = {e.subject.strip(): e.u for e in edges} | {e.object.strip(): e.v for e in edges}
    for t in titles:
        names.setdefault(t.strip(), normalize_entity(t))
    names = {raw: node for raw, node in names.items() if raw and node}
    mentioned = {node for raw, node in names.items() if ngram_overlap(raw, question) >= MENTION_THRESHOLD}
    rels = {e.predicate.strip() for e in edges if ngram_overlap(e.predicate.strip(), question) >= MENTION_THRESHOLD}
    for e in edges:
        if e.predicate.strip() in rels:
            if e.u in mentioned:
                mentioned.add(e.v)
            elif e.v in mentioned:
                mentioned.add(e.u)
    joined = {frozenset((e.u, e.v)) for e in edges}
    raw_of = {node: raw for raw, node in sorted(names.items(), reverse=True)}
    ordered = sorted(mentioned)
    out = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if frozenset((a, b)) not in joined:
                out.append(GraphEdge(a, b, raw_of.get(a, a), COOCCURRENCE, raw_of.get(b, b), -1, "", 0.0))
    return out


# --- wiring the authors' steps to a corpus and a trace (engine/methods/kg2rag/method.py calls these) ---


def chunk_text(c) -> str:
    """A chunk as the authors' script writes it: "title: text"."""
    text = c.text.strip()
    return text if not c.title or text.startswith(c.title) else f"{c.title}: {text}"


def text_chunk_ids(t: Tree) -> list[str]:
    """The chunks of a tree's text form as the authors' script concatenates them: one per kept edge
    (a chunk stating two kept triplets comes twice), question links left out."""
    ids = [e.chunk_id for e in t.kept_edges if not e.is_question_link]
    return ids or list(t.chunk_ids)


def authors_expansion(
    corpus: CorpusView, tr: KG2RAGTrace, exp: Expansion, seed_trips, chunk_scores: dict[str, float]
) -> None:
    """`expansion="authors"` (engine/methods/kg2rag/authors.py): each expanded chunk rescored by the
    entity it joined through, the highly related seed documents completed; `chunk_scores` and the
    trace's hop records get the new scores (the spanning trees' weights)."""
    seed_ids = {x.chunk_id for x in tr.seeds}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for t in seed_trips:
        for cid in t.chunk_ids:
            if cid in seed_ids:
                pairs.setdefault(cid, []).append((normalize_entity(t.subject), normalize_entity(t.object)))
    es = entity_scores([(x.chunk_id, x.score, x.title) for x in tr.seeds], pairs, exp.links)
    for h in tr.hops:
        rescored = [
            ScoredChunkId(c.chunk_id, max((es.chunk_score(e) for e in exp.via.get(c.chunk_id, ())), default=0.0))
            for c in h.chunks_added
        ]
        h.chunks_added = sorted(rescored, key=lambda c: (-c.score, c.chunk_id))
        chunk_scores.update({c.chunk_id: c.score for c in rescored})
    seeds = corpus.get_chunks([x.chunk_id for x in tr.seeds])
    docs = list(dict.fromkeys(c.doc_id for c in seeds if normalize_entity(c.title) in es.highly_related))
    tr.completed_titles = [t for t in es.highly_related if any(normalize_entity(c.title) == t for c in seeds)]
    for doc in docs:
        for c in corpus.chunks(doc_id=doc):
            if c.chunk_id not in chunk_scores:
                sc = es.chunk_score(normalize_entity(c.title))
                tr.completed.append(ScoredChunkId(c.chunk_id, sc))
                chunk_scores[c.chunk_id] = sc


def candidate_edges(corpus: CorpusView, chunk_scores: dict[str, float]) -> list[GraphEdge]:
    """The authors' weighted graph: every triplet a candidate chunk states, one edge per (triplet,
    candidate stating it), weighted by that candidate's score."""
    out: list[GraphEdge] = []
    for t in corpus.triplets(chunk_ids=list(chunk_scores)) if chunk_scores else []:
        u, v = normalize_entity(t.subject), normalize_entity(t.object)
        if not u or not v:
            continue
        for cid in dict.fromkeys(t.chunk_ids):
            if cid in chunk_scores:
                out.append(
                    GraphEdge(
                        u, v, t.subject, t.predicate, t.object, int(t.triplet_id or 0), cid, float(chunk_scores[cid])
                    )
                )
    return out
