"""KG2RAG's trace records of the graph steps: expansion hops, weighted edges, spanning trees.

Plain dataclasses (the trace serializes them); `graph.py` builds them and re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- trace records ---------------------------------------------------------------------------


@dataclass
class ScoredChunkId:
    chunk_id: str
    score: float


@dataclass
class EntityCap:
    """A high-degree entity whose expansion was capped: only its best `kept` edges were followed."""

    entity: str
    #: the entity's edges: its true degree in the corpus when the read cap (`max_entity_reads`) cut
    #: it, else the unseen edges at this entity in this hop
    degree: int
    kept: int
    cut_triplet_ids: list[int] = field(default_factory=list)  # edges read, then cut
    #: edges never read (the read cap: each entity's first `max_entity_reads` by triplet id)
    unread: int = 0


@dataclass
class Hop:
    """One breadth-first hop over the entity graph."""

    hop: int
    frontier: list[str]  # entities expanded from
    entities_reached: list[str]  # entities first reached in this hop
    triplet_ids: list[int]  # triplets followed (within reach) in this hop
    chunks_added: list[ScoredChunkId]  # new candidate chunks, best first
    entity_caps: list[EntityCap] = field(default_factory=list)
    cut_by_total_cap: list[ScoredChunkId] = field(default_factory=list)  # over `expansion_cap`


@dataclass
class GraphEdge:
    """An edge of the weighted graph: triplet `triplet_id` as stated by `chunk_id`.

    `u` / `v` are the normalized subject / object (the graph's nodes); `weight` is s(q, chunk).
    """

    u: str
    v: str
    subject: str
    predicate: str
    object: str
    triplet_id: int
    chunk_id: str
    weight: float

    @property
    def sort_key(self) -> tuple[float, str, int, str, str]:
        # Heaviest first; equal weights fall back to ids so the result never depends on
        # dict or set iteration order.
        return (-self.weight, self.chunk_id, self.triplet_id, self.u, self.v)

    @property
    def line(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"

    @property
    def is_question_link(self) -> bool:
        """A weight-0 edge between two entities the question mentions (the authors' "cooccurrence"
        edges, `KG2RAGSettings.question_links`): no triplet, no chunk."""
        return self.triplet_id < 0 and not self.chunk_id


@dataclass
class PrunedEdge:
    edge: GraphEdge
    reason: str  # parallel (a heavier edge joins the same entities) | cycle | self-loop


@dataclass
class Tree:
    """The maximum spanning tree of one connected component, arranged for the prompt."""

    tree_id: int
    nodes: list[str]
    kept_edges: list[GraphEdge]  # in walk order
    pruned_edges: list[PrunedEdge]
    chunk_ids: list[str]  # text form: each edge's chunk in walk order, each once
    triplet_form: str  # one "h r t" line per kept edge, in walk order
    root: str = ""  # the entity the depth-first walk starts from (the heaviest edge's subject)
    kind: str = "tree"  # tree | self-loops (only self-loop edges: its best chunk) | seed (a seed with no triplet)
    rank_score: float | None = None
    selected: bool = False
    cut_chunk_ids: list[str] = field(default_factory=list)  # left out when the tree was cut to fit k
    note: str = ""  # why it was skipped or cut, when it was
