"""KG2RAG's settings and typed trace: what a user sees of every step of one question."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from engine.llm.base import LLMCall
from engine.methods.departure import Departure
from engine.methods.hooks import LossReport, UnitsOf
from engine.methods.kg2rag.graph import GraphEdge, Hop, ScoredChunkId, Tree
from engine.methods.kg2rag.rank import TREE_SCORES
from engine.methods.kg2rag.select import FILL, OVERFLOW
from engine.methods.story import Stage

SEED_STAGES = ("dense", "hybrid")
ANSWER_PROMPTS = ("paper", "tuned")
#: What a cross-encoder reads of a tree (`KG2RAGSettings.tree_form`).
TREE_FORMS = ("triplets", "text")
#: How the expansion scores and completes its chunks (`KG2RAGSettings.expansion`).
EXPANSIONS = ("walk", "authors")


@dataclass(frozen=True)
class KG2RAGSettings:
    k: int = 10
    """Seed chunks retrieved by similarity, and the most chunks the answer context may hold."""

    hops: int = 1
    """Breadth-first hops over the entity graph from the seeds' entities (the paper's m)."""

    expansion_cap: int = 50
    """At most this many chunks added by the expansion (the most similar ones); the trace lists the
    rest. -1 = no cap (the paper)."""

    max_entity_edges: int = 30
    """Per hop, follow at most this many new triplets from one entity (its best), so a hub such as
    a country name cannot flood the candidates. -1 = no per-entity cap."""

    max_entity_reads: int = 64
    """Per hop, read at most this many edges of one entity from the corpus before scoring them (its
    first by triplet id, the order the facts were stored), so a hub's cost stays bounded in a large
    corpus: the best `max_entity_edges` are then chosen among these. -1 = read every edge."""

    reranker: str = ""
    """Tree ranker: "" = embedding cosine from stored vectors (`tree_score`); `ce:/local/cross-encoder`
    or `litellm:<rerank model>` score each tree's `tree_form`."""

    tree_form: str = "triplets"
    """What a cross-encoder (`reranker`) scores of each tree: `triplets` = its triplet form, one
    "h r t" line per kept edge (the paper's text, SPEC step 6), or `text` = the text of its edges'
    chunks in walk order, concatenated (the authors' distractor script: `use_tpt=False`, which also
    ranks the fill). Without a cross-encoder, `tree_score` is the stand-in."""

    tree_score: str = "max+chunk"
    """With the cosine ranker, what a tree is scored by (engine.methods.kg2rag.rank): `max` (its
    best proposition), `mean`, `centroid`, `chunk-max` / `chunk-mean` (its chunks' similarity),
    `text` (its chunks' mean vector), `seed-sum` (the seeds it holds) or `max+chunk` (the mean of
    `max` and `chunk-max`: the best on both shared sets, docs/benchmarks.md). `text` is the stand-in
    for a cross-encoder reading the tree's text (the paper preset), `max` for one reading its triplets."""

    expansion: str = "walk"
    """How expanded chunks are scored: `walk` = each by its own similarity to the question, the
    graph built from the triplets the walk reached (SPEC steps 2-3); `authors` = the authors'
    distractor script (engine/methods/kg2rag/authors.py): each by `(ent_score + avg) / (count + 1)`
    of the entity it joined through, the top-2 "highly related" seed documents completed with all
    their chunks, and the graph built from every triplet the candidates state. The score is the
    edge weight the spanning trees keep."""

    question_links: bool = False
    """Join every two entities the question mentions (character 3-grams, as the authors' script
    matches them) by a weight-0 edge before the spanning trees, so their components merge into one
    tree (the authors' "cooccurrence" edges). Off: the trees come from the triplets alone (SPEC)."""

    overflow: str = "cut-share"
    """A tree bigger than the room left: `cut` it to fit in walk order, `cut-heaviest` (keep its
    heaviest chunks with their paths to the walk root), `cut-share` (the same, but only chunks
    as similar as the next tree's best, leaving the rest of the room to the next trees) or
    `skip` it and try the next (SPEC step 7)."""

    fill: str = "half"
    """Chunks appended after the trees: `half` = the best remaining seeds, only when the trees gave
    fewer than k/2 (SPEC step 7); `room` = the best remaining seeds whenever the trees left room
    under k; `none` = never; `rerank` = the authors' script: under k//2 chunks, every remaining
    candidate (seeds and expanded chunks) ranked against the question (the cross-encoder on its
    text, else its cosine), best first up to k."""

    seed_trees: bool = True
    """A seed chunk with no triplet cannot join any tree; with this on it competes in the ranking
    as a one-chunk tree scored by its own similarity instead of waiting for the fill rule."""

    seed_guard: bool = True
    """Selection never drops a seed chunk more similar to the question than every chunk the
    expansion brought into the context: such a seed replaces the least similar expanded chunk (ours:
    the graph stage then adds recall to its first stage instead of costing it, docs/benchmarks.md;
    the paper has no such rule)."""

    keep_seeds: int = 5
    """The first stage's best this many seed chunks (at most k) are never left out of the context:
    each one the trees and the fill did not take replaces the least similar chunk the expansion
    brought in (ours; 0: none, the paper). The graph stage then trades only the first stage's
    weaker seeds for its neighbours."""

    seeds: str = "hybrid"
    """First stage: `dense` (the paper: cosine top-k) or `hybrid` (BM25 and dense fused by
    reciprocal rank, as the hybrid baseline; ours, measured better on both shared sets); edge
    weights stay the chunks' cosine either way."""

    answer_prompt: str = "tuned"
    """The answer step's prompt: `paper` = the authors' few-shot "think step by step but give a
    short factoid answer" prompt (kg_rag_distractor.py), `tuned` = our zero-shot short answer."""

    @classmethod
    def paper(cls, **overrides) -> KG2RAGSettings:
        """The `paper` preset (engine/methods/presets.py), the authors' distractor pipeline: dense
        seeds, no caps, their expansion scores and title completion, the question's entities linked,
        trees ranked on their text (a cross-encoder when configured, else the cosine of their mean
        chunk vector), a misfit tree skipped (SPEC's fix), their reranked fill, no one-chunk trees for
        seeds without triplets, their answer prompt."""
        base: dict = dict(
            seeds="dense",
            expansion_cap=-1,
            max_entity_edges=-1,
            max_entity_reads=-1,
            tree_score="text",
            tree_form="text",
            expansion="authors",
            question_links=True,
            overflow="skip",
            fill="rerank",
            seed_trees=False,
            answer_prompt="paper",
            seed_guard=False,
            keep_seeds=0,
        )
        return cls(**{**base, **overrides})

    def __post_init__(self):
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.hops < 0:
            raise ValueError(f"hops must be 0 or more, got {self.hops}")
        if self.expansion_cap < -1:
            raise ValueError(f"expansion_cap must be -1 (no cap) or more, got {self.expansion_cap}")
        if self.keep_seeds < 0:
            raise ValueError(f"keep_seeds must be 0 or more (more than k keeps every seed), got {self.keep_seeds}")
        if self.max_entity_reads < -1:
            raise ValueError(f"max_entity_reads must be -1 (read all) or more, got {self.max_entity_reads}")
        for name, value, allowed in (
            ("tree_score", self.tree_score, TREE_SCORES),
            ("overflow", self.overflow, OVERFLOW),
            ("fill", self.fill, FILL),
            ("seeds", self.seeds, SEED_STAGES),
            ("answer_prompt", self.answer_prompt, ANSWER_PROMPTS),
            ("tree_form", self.tree_form, TREE_FORMS),
            ("expansion", self.expansion, EXPANSIONS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


@dataclass
class SeedChunk:
    chunk_id: str
    title: str
    score: float  # cosine similarity to the question
    n_triplets: int  # triplets this chunk states (0 = it contributes no entity)
    triplet_ids: list[int] = field(default_factory=list)  # the triplets it states: the expansion's start
    #: with hybrid seeds, the reciprocal-rank fusion score that ordered them (None: dense seeds,
    #: ordered by `score`)
    fused_score: float | None = None


@dataclass
class KG2RAGTrace:
    """Every KG2RAG step for one question, in order. Trees are listed in rank order; each
    tree's `nodes` is its connected component of the weighted graph."""

    question: str
    settings: KG2RAGSettings
    seeds: list[SeedChunk] = field(default_factory=list)
    seed_entities: list[str] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)
    #: `expansion="authors"`: the seed documents completed with all their chunks (normalized titles)
    #: and the chunks that added, with their scores
    completed_titles: list[str] = field(default_factory=list)
    completed: list[ScoredChunkId] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)  # every edge, parallel ones included
    trees: list[Tree] = field(default_factory=list)
    ranker: str = ""
    selected_tree_ids: list[int] = field(default_factory=list)
    tree_chunk_ids: list[str] = field(default_factory=list)  # chunks from the selected trees
    fill_chunk_ids: list[str] = field(default_factory=list)  # added after the trees by the `fill` rule
    context: str = ""  # exactly as sent to the reasoner
    call: LLMCall | None = None
    answer: str = ""
    note: str = ""  # e.g. the seeds hold no triplets, so the answer used the seeds only
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, plus total
    #: the settings' preset (paper / tuned / custom) and how they depart from the paper
    #: (engine.methods.presets): SPEC's named bug fixes first, then every setting that differs
    preset: str = ""
    departures: list[Departure] = field(default_factory=list)

    def recall_loss(self, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
        """Where a missed gold unit was lost (engine/methods/hooks.py; the reasons: loss.py)."""
        from engine.methods.kg2rag.loss import recall_loss

        return recall_loss(self, units_of, gold, found, missing)

    def chunk_ids(self) -> list[str]:
        """Every chunk id the trace mentions (seeds, hops, edges, selected and fill), each once."""
        ids = [x.chunk_id for x in self.seeds]
        ids += [c.chunk_id for h in self.hops for c in h.chunks_added + h.cut_by_total_cap]
        ids += [c.chunk_id for c in self.completed]
        ids += [e.chunk_id for e in self.edges if e.chunk_id] + list(self.tree_chunk_ids) + list(self.fill_chunk_ids)
        return list(dict.fromkeys(ids))

    verdict_story: ClassVar[str] = "expansion"

    def verdict_stages(self) -> list[Stage]:
        """Seeds, each hop (the chunks it added), graph, ranking, context, answer: the view's steps."""
        out = [Stage("its seeds", tuple(x.chunk_id for x in self.seeds))]
        out += [Stage(f"hop {h.hop}", tuple(c.chunk_id for c in h.chunks_added)) for h in self.hops]
        if self.completed:
            out.append(Stage("the completed documents", tuple(c.chunk_id for c in self.completed)))
        return out + [
            Stage("the weighted graph"),
            Stage("the tree ranking"),
            Stage("the context", context=True),
            Stage("the answer"),
        ]
