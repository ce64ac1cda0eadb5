"""LightRAG's settings (the library's query defaults) and its trace: the storage it read, the
keywords, the entities, relations and chunks its retrieval returned, the context, the answer call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.llm.base import LLMCall
from engine.methods.departure import Departure

MODES = ("local", "global", "hybrid", "mix")
ANSWER_STEPS = ("shared", "lightrag")

#: How the keywords were found (`LightRAGTrace.keywords_from`).
KEYWORDS_LLM = "llm"  # LightRAG's keyword-extraction prompt, through the reasoner
KEYWORDS_RULES = "rules"  # the offline reasoner's question rules (a named departure)
KEYWORDS_QUESTION = "question"  # the rules found nothing: the whole question as the low-level keyword


@dataclass(frozen=True)
class LightRAGSettings:
    """LightRAG's query defaults (lightrag-hku 1.5.7, `QueryParam` and `lightrag.constants`); every
    field keeps the library's name. Only `answer_step` is ours, and its default departs (below)."""

    mode: str = "mix"
    """Retrieval mode: `local` (entities matched by the low-level keywords, with their relations and
    chunks), `global` (relations matched by the high-level keywords, with their entities and
    chunks), `hybrid` (both, merged in turn), `mix` (hybrid plus chunks found by vector search of
    the question). `mix` is `QueryParam`'s default; the paper's experiments ran `hybrid` (mix came
    later)."""

    top_k: int = 40
    """Entities (local) and relations (global) retrieved by vector search of the keywords (`top_k`)."""

    chunk_top_k: int = 20
    """Chunks kept in the context after merging the vector, entity and relation chunks (`chunk_top_k`)."""

    max_entity_tokens: int = 6000
    """Token budget of the entity table in the context (`max_entity_tokens`)."""

    max_relation_tokens: int = 8000
    """Token budget of the relation table in the context (`max_relation_tokens`)."""

    max_total_tokens: int = 30000
    """Token budget of the whole context, prompt included; chunks get what is left (`max_total_tokens`)."""

    answer_step: str = "shared"
    """`shared`: the short-answer step every method uses reads LightRAG's context, so answers differ
    by retrieval alone (a named departure). `lightrag`: LightRAG's own `rag_response` prompt through
    the same LLM door, answering in `response_type` (needs a model: the offline reasoner always uses
    the shared step, and says so)."""

    response_type: str = "Multiple Paragraphs"
    """The answer form LightRAG's own prompt asks for (`response_type`; used by `answer_step="lightrag"`)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"LightRAG mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.answer_step not in ANSWER_STEPS:
            raise ValueError(f"answer_step must be one of {', '.join(ANSWER_STEPS)}, not {self.answer_step!r}")
        for name in ("top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"LightRAG's {name} must be a whole number of at least 1, not {value!r}")


@dataclass
class Entity:
    """An entity LightRAG's retrieval put in the context (a triplet subject or object)."""

    name: str
    type: str = ""
    description: str = ""
    chunk_ids: list[str] = field(default_factory=list)  # the corpus's chunks stating it


@dataclass
class Relation:
    """A relation LightRAG's retrieval put in the context: the triplets joining two entities."""

    source: str
    target: str
    keywords: str = ""  # the triplets' predicates
    description: str = ""  # the triplets, "subject predicate object"
    weight: float = 0.0  # chunks stating it
    chunk_ids: list[str] = field(default_factory=list)


@dataclass
class RetrievedChunk:
    """A chunk of the context, in LightRAG's order (vector, entity and relation chunks merged in turn)."""

    chunk_id: str  # the corpus's chunk id
    title: str = ""
    lightrag_id: str = ""  # LightRAG's id for it (an MD5 of the text)


@dataclass
class LightRAGTrace:
    question: str = ""
    settings: LightRAGSettings = field(default_factory=LightRAGSettings)
    preset: str = ""
    departures: list[Departure] = field(default_factory=list)
    storage: dict[str, int] = field(default_factory=dict)  # chunks, entities, relations in LightRAG's storage
    storage_note: str = (
        ""  # "built in 3.1 s" / "loaded from lightrag/ in 0.4 s" / "reused (... earlier in this process)"
    )
    keywords_from: str = ""  # KEYWORDS_LLM | KEYWORDS_RULES | KEYWORDS_QUESTION
    high_level: list[str] = field(default_factory=list)  # themes: matched against relations
    low_level: list[str] = field(default_factory=list)  # names: matched against entities
    keyword_call: LLMCall | None = None  # LightRAG's extraction prompt, or the rules' decompose step
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    chunks: list[RetrievedChunk] = field(default_factory=list)
    found: dict[str, int] = field(default_factory=dict)  # LightRAG's processing_info (before/after its budgets)
    no_context: str = ""  # why LightRAG built no context ("" when it did)
    context: str = ""  # exactly as the answer step read it
    call: LLMCall | None = None
    #: any other call LightRAG made through the model function (none in 1.5.7's query path: one
    #: keyword call, one answer call); kept so the usage counts every call
    other_calls: list[LLMCall] = field(default_factory=list)
    answer: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def chunk_ids(self) -> list[str]:
        """The context's chunks, in LightRAG's order."""
        return list(dict.fromkeys(c.chunk_id for c in self.chunks))

    def calls(self) -> list[LLMCall]:
        return [c for c in (self.keyword_call, self.call) if c is not None] + list(self.other_calls)
