"""HippoRAG 2's settings (the authors' defaults) and its trace: facts retrieved, facts kept by
recognition memory, seed nodes, Personalized PageRank scores, ranked passages, context, answer call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.core.phrases import SYNONYM_THRESHOLD, SYNONYM_TOPK
from engine.llm.base import LLMCall
from engine.methods.departure import Departure
from engine.methods.hooks import LossReport, UnitsOf

#: What the trace says (and the screen shows) when recognition memory did not run.
FILTER_SKIPPED_OFFLINE = "recognition memory skipped (offline reasoner)"
FILTER_SWITCHED_OFF = "recognition memory switched off"


@dataclass(frozen=True)
class HippoRAG2Settings:
    """The authors' defaults (OSU-NLP-Group/HippoRAG, `src/hipporag/utils/config_utils.py`
    `BaseConfig`); every field keeps the paper's name. `paper()` is the authors' configuration;
    the defaults are `tuned` (engine/methods/presets.py names where they differ, and why)."""

    linking_top_k: int = 5
    """Facts retrieved for the recognition-memory filter, facts kept after it, and phrase seeds
    (`linking_top_k`)."""

    qa_top_k: int = 5
    """Passages (best PPR score first) sent to the answer step (`qa_top_k`)."""

    retrieval_top_k: int = 200
    """Passages the ranking keeps (`retrieval_top_k`): the trace lists these."""

    damping: float = 0.5
    """Personalized PageRank damping: the probability of following an edge (`damping`)."""

    passage_node_weight: float = 0.05
    """Passage seeds are min-max normalized dense scores times this (`passage_node_weight`)."""

    synonymy_edge_topk: int = SYNONYM_TOPK
    """Nearest phrase nodes looked at per phrase for synonym edges (`synonymy_edge_topk`)."""

    synonymy_edge_sim_threshold: float = SYNONYM_THRESHOLD
    """Cosine at or above which two phrase nodes get a synonym edge (`synonymy_edge_sim_threshold`)."""

    recognition_memory: bool = True
    """Filter the retrieved facts with the LLM (the paper's recognition memory). The offline
    reasoner cannot: it keeps every retrieved fact, and the trace says the filter was skipped."""

    hybrid_facts: bool = True
    """Score each fact by the mean of its min-max normalized cosine and its min-max normalized BM25
    score against the question (ours); off: cosine alone (the paper). A name the embedder blurs is
    matched word for word."""

    dense_first: int = 2
    """The passages dense retrieval ranks first that open the ranking, ahead of the PageRank order
    (ours); 0: the PageRank order alone (the paper). Fact seeds weigh far more than passage seeds, so
    a fact retrieved for one word of the question could otherwise push the best-matching passage out."""

    rank_fusion: int = 0
    """Reciprocal-rank fusion of the PageRank passage order with the dense passage order, with this
    constant (score 1/(k + rank) in each order, summed); 0: the PageRank order alone (the paper)."""

    def __post_init__(self) -> None:
        for name in ("linking_top_k", "qa_top_k", "retrieval_top_k", "synonymy_edge_topk"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.dense_first < 0:
            raise ValueError(
                f"dense_first must be 0 or more (above qa_top_k: every passage read is dense's), got {self.dense_first}"
            )
        if self.rank_fusion < 0:
            raise ValueError(f"rank_fusion is the fusion's rank constant (0: off), got {self.rank_fusion}")
        if not 0.0 < self.damping < 1.0:
            raise ValueError(f"damping must be between 0 and 1 (the chance of following an edge), got {self.damping}")
        if self.passage_node_weight < 0:
            raise ValueError(f"passage_node_weight must be 0 or more, got {self.passage_node_weight}")
        if not -1.0 <= self.synonymy_edge_sim_threshold <= 1.0:
            raise ValueError(
                f"synonymy_edge_sim_threshold is a cosine (-1 to 1), got {self.synonymy_edge_sim_threshold}"
            )

    @classmethod
    def paper(cls, **overrides: Any) -> HippoRAG2Settings:
        """The authors' `BaseConfig` defaults (with `overrides` on top)."""
        return cls(
            **{
                "linking_top_k": 5,
                "qa_top_k": 5,
                "retrieval_top_k": 200,
                "damping": 0.5,
                "passage_node_weight": 0.05,
                "synonymy_edge_topk": SYNONYM_TOPK,
                "synonymy_edge_sim_threshold": SYNONYM_THRESHOLD,
                "recognition_memory": True,
                "hybrid_facts": False,
                "dense_first": 0,
                "rank_fusion": 0,
                **overrides,
            }
        )


@dataclass
class Fact:
    """A triplet as a HippoRAG 2 fact: lower-cased, non-alphanumerics as spaces (the authors'
    `text_processing`), with the stored triplet it came from and its min-max normalized score."""

    subject: str
    predicate: str
    object: str
    score: float = 0.0
    triplet_id: int | None = None
    chunk_ids: list[str] = field(default_factory=list)
    #: `hybrid_facts`: its min-max normalized BM25 score (None: cosine alone scored it)
    lexical: float | None = None

    @property
    def line(self) -> str:
        return f"({self.subject}, {self.predicate}, {self.object})"


@dataclass
class SeedNode:
    """A node of the PPR reset vector: a phrase (from a kept fact) or a passage (dense score)."""

    node: str  # phrase text, or the chunk id of a passage
    kind: str  # "phrase" | "passage"
    weight: float


@dataclass
class PPRNode:
    node: str
    kind: str  # "phrase" | "passage"
    score: float
    seed: float = 0.0  # its reset weight (0 when it was no seed)


@dataclass
class PPREdge:
    source: str
    target: str
    weight: float  # as the PPR walks it (a fact edge counts once per direction, as the authors' graph)
    kind: str  # "fact" | "synonym" | "passage"
    label: str = ""  # a fact edge's predicate (the first of its facts; "+n" when more join the pair)


@dataclass
class ChunkRef:
    """A chunk the trace mentions, named for a reader without the corpus at hand."""

    title: str
    position: int = 0


@dataclass
class RankedPassage:
    chunk_id: str
    title: str
    score: float  # PPR score (dense score when the run fell back to dense retrieval)
    dense: float = 0.0  # min-max normalized dense score
    dense_first: bool = False  # placed ahead of the PageRank order by `dense_first`


@dataclass
class HippoRAG2Trace:
    question: str = ""
    settings: HippoRAG2Settings = field(default_factory=HippoRAG2Settings)
    preset: str = ""
    departures: list[Departure] = field(default_factory=list)
    graph: dict[str, int] = field(default_factory=dict)  # phrase / passage nodes, edges by kind
    index: str = ""  # how the graph was had: read from the corpus, or built / updated now (and how long)
    facts_retrieved: list[Fact] = field(default_factory=list)
    facts_kept: list[Fact] = field(default_factory=list)
    filter_call: LLMCall | None = None
    filter_skipped: str = ""  # why recognition memory did not run; "" when it ran
    fallback: str = ""  # set when no fact was kept: the passages are ranked by dense retrieval alone
    seeds: list[SeedNode] = field(default_factory=list)
    ppr_top: list[PPRNode] = field(default_factory=list)
    ppr_edges: list[PPREdge] = field(default_factory=list)  # edges among `ppr_top`
    ranked: list[RankedPassage] = field(default_factory=list)
    context: str = ""  # exactly as sent
    call: LLMCall | None = None
    answer: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    chunks: dict[str, ChunkRef] = field(default_factory=dict)  # every chunk id mentioned above -> its title

    def recall_loss(self, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
        """Where a missed gold unit was lost (engine/methods/hooks.py; the reasons: loss.py)."""
        from engine.methods.hipporag2.loss import recall_loss

        return recall_loss(self, units_of, gold, found, missing)

    def chunk_ids(self) -> list[str]:
        """The passages the answer step read, best first."""
        return [p.chunk_id for p in self.ranked[: self.settings.qa_top_k]]

    def calls(self) -> list[LLMCall]:
        return [c for c in (self.filter_call, self.call) if c is not None]

    def run_departures(self) -> list[Departure]:
        """How this run departed from the paper whatever its settings said: recognition memory
        skipped because the reasoner cannot write free text (the offline rules)."""
        from engine.methods.hipporag2.departures import RUN_DEPARTURES

        skipped = self.filter_skipped == FILTER_SKIPPED_OFFLINE
        return [d for d in RUN_DEPARTURES if d.name == "recognition memory skipped" and skipped]
