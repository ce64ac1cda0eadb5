"""T2RAG's settings and its typed trace: every step a user can inspect, as plain dataclasses.

The trace is what the app draws and what a saved result stores, so it holds the full story of a
question: the decomposition, each round's state before and after, the queries, every proposition
walked with its score and source chunks, the chunks the solver saw, the solver call, where each
binding came from, why the loop stopped, and the synthesis call. It round-trips through
`engine.core.serde` unchanged and never contains an API key (the reasoner's calls carry only messages,
replies and usage).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from engine.llm.base import LLMCall
from engine.methods.departure import Departure
from engine.methods.hooks import LossReport, PipelineFacts, UnitsOf
from engine.methods.story import Fill, Stage
from engine.reasoners.base import QueryTriplet

PROMPT_SETS = ("paper", "tuned")


@dataclass(frozen=True)
class T2RAGSettings:
    """T2RAG knobs: the paper's k = 5 unique chunks and N = 3 rounds; the defaults are the `tuned`
    preset (engine/methods/presets.py names the `paper` one)."""

    k: int = 5
    """Distinct source chunks covered per round: the proposition walk stops once it has this many."""

    rounds: int = 3
    """Round cap N: retrieve-and-solve rounds before a forced synthesis."""

    include_chunk_text: bool = True
    """Show the covered chunks' texts to the solver, not only the propositions (the paper's ablation:
    dropping chunk text costs up to 29% F1)."""

    question_query: bool = True
    """Also query with the question minus its wh-words (removed as whole words, so "show" stays)."""

    skip_seen_chunks: bool = False
    """Chunks shown to the solver in an earlier round neither count towards `k` nor are shown again,
    so a later round sees new evidence."""

    candidate_depth: int = 50
    """Propositions fetched from the index per query before they are merged into the global pool."""

    prompts: str = "tuned"
    """Decompose, solve and answer prompts: `paper` = the reference code's (TRAG.py: a reasoning
    step and examples, comparison included, then `s | p | o` lines; the solver returns "Fully
    Resolved" and "Newly Traceable" clues; the answer reads the clues only) or `tuned` (ours: JSON,
    each value naming the proposition or passage it was read from)."""

    adopt_proposed: bool = False
    """Triplets the solver returns that match no open triplet enter the state (one placeholder:
    searchable next round; none: resolved), as the reference code lets its "newly traceable" clues
    drive the next round. Off: they are shown in the trace only."""

    forced_context: str = "tuned"
    """What the answer step gets after a forced stop: `paper` = the resolved facts and the remaining
    searchable triplets; `tuned` = the resolved facts, the unresolved lines and every round's chunks
    (SPEC: the last round's; a round repeating its queries shows the chunks ranked below the best)."""

    tolerant_replies: bool = True
    """Read the free-text replies of the reference prompts (`prompts="paper"`) with our tolerant
    parser: code fences, markdown headings and bold, numbered items, a clue on one line, "None" for
    an empty list or part, stray prose skipped (engine/reasoners/free_text.py `parse_clues`). Off: the
    reference code's line parsing, restated (`parse_clues_paper`: a bold header or a numbered
    "1. Subject:" line is not read, so that clue is lost). JSON replies (the tuned prompts) are always
    read tolerantly."""

    decompose_retry: bool = False
    """A decomposition that yields no query triplet: on = ask once more with the reference code's
    fix-up prompt ("Extract 1-3 triples ..."; with the tuned prompts, the same prompt again), then end
    the question with an error when that fails too (the reference raises); off = go on with the
    question as the only query (SPEC step 1, ours)."""

    retrieve_when_resolved: bool = True
    """A decomposition with no placeholder (every triplet resolved, nothing to fill): on = one
    retrieval round with the question, and the answer step reads its passages (ours); off = no round
    at all, the answer from the decomposition's clues alone and no chunk counted as evidence (the
    reference code's loop does not start)."""

    chunk_channel: bool = True
    """Beside the proposition walk, search the chunks themselves with the question (dense and BM25)
    and show the round's `k` chunks from the three rankings fused by reciprocal rank (ours; the
    paper shows the walk's chunks only). The walk still picks the propositions the solver reads."""

    early_stop: bool = True
    """End the rounds early when a round produced no new searchable triplet and no fuzzy one is left
    (SPEC step 6); off = only a complete state or the round cap `rounds` ends them, as in the
    reference code (more rounds, more calls)."""

    @classmethod
    def paper(cls, **overrides) -> T2RAGSettings:
        """The `paper` preset (engine/methods/presets.py): the reference code's prompts and reply
        parsing, its fix-up retry of a decomposition that failed, no round for a question with
        nothing to fill, rounds until complete or N, its solver-proposed clues driving the next
        round, its clue-only answer at a forced stop."""
        base: dict = dict(
            prompts="paper",
            adopt_proposed=True,
            forced_context="paper",
            tolerant_replies=False,
            decompose_retry=True,
            retrieve_when_resolved=False,
            early_stop=False,
            chunk_channel=False,
        )
        return cls(**{**base, **overrides})

    def __post_init__(self) -> None:
        for name, value in (("prompts", self.prompts), ("forced_context", self.forced_context)):
            if value not in PROMPT_SETS:
                raise ValueError(f"{name} must be one of {', '.join(PROMPT_SETS)}, got {value!r}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1 chunk per round, got {self.k}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")
        if self.candidate_depth < 1:
            raise ValueError(f"candidate_depth must be at least 1, got {self.candidate_depth}")


@dataclass(frozen=True)
class StateTriplet:
    """A query triplet in the state, under an id (`t1`, `t2`, ...) that stays fixed while bindings
    rewrite its parts, so the trace can follow one triplet from fuzzy to searchable to resolved."""

    id: str
    subject: str
    predicate: str
    object: str

    @property
    def query(self) -> QueryTriplet:
        return QueryTriplet(self.subject, self.predicate, self.object)

    @property
    def placeholders(self) -> tuple[str, ...]:
        return self.query.placeholders

    def text(self) -> str:
        return self.query.text()


@dataclass
class StateSnapshot:
    """The three queues at one moment. Resolved triplets are the facts found so far."""

    resolved: list[StateTriplet] = field(default_factory=list)
    searchable: list[StateTriplet] = field(default_factory=list)
    fuzzy: list[StateTriplet] = field(default_factory=list)

    def counts(self) -> str:
        return f"{len(self.resolved)} resolved / {len(self.searchable)} searchable / {len(self.fuzzy)} fuzzy"


@dataclass
class DecompositionTrace:
    call: LLMCall
    triplets: list[StateTriplet] = field(default_factory=list)
    state: StateSnapshot = field(default_factory=StateSnapshot)
    #: why nothing usable came out (parse failure, provider error); the rounds then use the question
    failure: str = ""
    seconds: float = 0.0
    #: the reference code's fix-up call, made when the first reply gave no triplet (`decompose_retry`)
    retry_call: LLMCall | None = None


@dataclass
class RetrievalQuery:
    text: str
    #: triplet (known parts of a searchable triplet) | question (fallback) | question_stripped
    kind: str
    state_triplet_id: str = ""


@dataclass
class WalkedProposition:
    """One proposition taken from the global pool, in walk order (descending best score)."""

    triplet_id: int  # the corpus triplet behind the proposition
    text: str
    score: float  # best score over all queries
    query_index: int  # the query that gave that score
    chunk_ids: list[str] = field(default_factory=list)  # every chunk stating it
    #: the chunks this proposition added to the round's budget (empty: all already covered/seen)
    new_chunk_ids: list[str] = field(default_factory=list)


@dataclass
class ShownChunk:
    chunk_id: str
    title: str
    text: str
    #: its 1-based rank in each list that held it: "walk" (the proposition walk's chunk order), and
    #: with `chunk_channel` "dense" and "bm25" (the chunk searches fused with the walk's list);
    #: empty in a trace saved before ranks were recorded
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass
class BindingRecord:
    """A placeholder value the solver found, and where it came from when that is identifiable."""

    placeholder: str
    value: str
    #: bindings (the solver's binding map) | triplet (read off a triplet the solver rewrote)
    origin: str = "bindings"
    #: state triplets the value was substituted into (deterministic propagation)
    applied_to: list[str] = field(default_factory=list)
    proposition: str = ""  # the walked proposition supporting the value, if found
    proposition_triplet_id: int | None = None
    chunk_ids: list[str] = field(default_factory=list)
    note: str = ""  # e.g. why a binding was ignored
    #: the evidence the solver named for this value ("P2": 2nd proposition shown, "C1": 1st chunk)
    source: str = ""
    #: proposition | chunk: the solver named it; guessed: the solver named none, the engine matched the
    #: value in a walked proposition; unverified: the named source does not hold the value or names
    #: nothing shown; "" when nothing could be attributed
    source_kind: str = ""
    #: the sentence of the source (proposition or chunk) that states the value, when it is there
    quote: str = ""


@dataclass
class RoundTiming:
    """Seconds. `engine` is everything but the reasoner call; `llm` is the reasoner call's wall time."""

    retrieve: float = 0.0
    embed: float = 0.0
    search: float = 0.0
    solve: float = 0.0
    update: float = 0.0

    @property
    def engine(self) -> float:
        return self.retrieve + self.update

    @property
    def llm(self) -> float:
        return self.solve


@dataclass
class RoundTrace:
    index: int  # 1-based
    state_before: StateSnapshot
    queries: list[RetrievalQuery] = field(default_factory=list)
    pool_size: int = 0  # distinct propositions in the global pool
    walked: list[WalkedProposition] = field(default_factory=list)
    chunks: list[ShownChunk] = field(default_factory=list)
    solve_call: LLMCall | None = None
    solve_skipped: str = ""  # why no solve call was made (nothing left to fill)
    bindings: list[BindingRecord] = field(default_factory=list)
    #: triplets the solver returned that match no open triplet (kept for the user to see)
    unmatched: list[str] = field(default_factory=list)
    #: state ids of unmatched triplets taken into the state (`adopt_proposed`, the paper's
    #: "newly traceable" clues)
    adopted: list[str] = field(default_factory=list)
    newly_resolved: list[str] = field(default_factory=list)  # state triplet ids
    new_searchable: list[str] = field(default_factory=list)
    state_after: StateSnapshot = field(default_factory=StateSnapshot)
    timing: RoundTiming = field(default_factory=RoundTiming)


@dataclass
class SynthesisTrace:
    #: complete (all placeholders filled) | forced (answer from what is known plus the last chunks)
    mode: str
    facts: list[str] = field(default_factory=list)
    context: str = ""
    call: LLMCall | None = None
    answer: str = ""
    seconds: float = 0.0


#: Why the loop ended; `summarize` and the app show the sentence.
STOP_REASONS: dict[str, str] = {
    "complete": "every query triplet resolved",
    "early_stop": "the round produced no new searchable triplet and no fuzzy triplet is left",
    "round_cap": "round cap reached",
    "no_open_triplets": "the decomposition left nothing to fill: one retrieval with the question",
    "nothing_to_fill": "the decomposition left nothing to fill: no round ran, the answer reads its clues "
    "(the reference code)",
    "no_decomposition": "the decomposition gave no query triplet, nor did the fix-up prompt: the question "
    "ends (the reference code raises)",
    "no_new_evidence": "a new round would show the solver nothing new (every query asked, every chunk shown)",
    "llm_error": "the LLM provider failed",
    "no_triplets": "the corpus has no triplets: nothing to retrieve",
}


@dataclass
class T2RAGTrace:
    settings: T2RAGSettings
    reasoner: str
    question: str
    decomposition: DecompositionTrace | None = None
    rounds: list[RoundTrace] = field(default_factory=list)
    stop_reason: str = ""
    synthesis: SynthesisTrace | None = None
    total_seconds: float = 0.0
    #: the settings' preset (paper / tuned / custom) and how they depart from the paper
    #: (engine.methods.presets): SPEC's named bug fixes first, then every setting that differs
    preset: str = ""
    departures: list[Departure] = field(default_factory=list)

    def calls(self) -> list[LLMCall]:
        """Every reasoner call in order: decompose, one solve per round, answer."""
        out: list[LLMCall] = []
        if self.decomposition is not None:
            out.append(self.decomposition.call)
            if self.decomposition.retry_call is not None:
                out.append(self.decomposition.retry_call)
        out.extend(r.solve_call for r in self.rounds if r.solve_call is not None)
        if self.synthesis is not None and self.synthesis.call is not None:
            out.append(self.synthesis.call)
        return out

    def recall_loss(self, units_of: UnitsOf, gold: set, found: set, missing: set) -> LossReport:
        """Where a missed gold unit was lost (engine/methods/hooks.py; the reasons: loss.py)."""
        from engine.methods.t2rag.loss import recall_loss

        return recall_loss(self, units_of, gold, found, missing)

    def failure_facts(self) -> PipelineFacts:
        """What the eval's failure labels read (decomposition, retrieval, filling, synthesis)."""
        from engine.methods.t2rag.loss import failure_facts

        return failure_facts(self)

    def chunk_ids(self) -> list[str]:
        """Every chunk id the trace mentions (shown, walked, cited), each once, in order."""
        seen: dict[str, None] = {}
        for r in self.rounds:
            ids = [c.chunk_id for c in r.chunks] + [c for w in r.walked for c in w.chunk_ids]
            for cid in ids + [c for b in r.bindings for c in b.chunk_ids]:
                seen.setdefault(cid, None)
        return list(seen)

    verdict_story: ClassVar[str] = "fills"

    def verdict_stages(self) -> list[Stage]:
        """The decomposition, each round (chunks shown, placeholders filled), the answer."""
        out = [Stage("the decomposition")]
        for r in self.rounds:
            label = f"round {r.index}"
            fills = tuple(Fill(b.placeholder, b.value, b.source, label) for b in r.bindings if not b.note)
            out.append(Stage(label, tuple(c.chunk_id for c in r.chunks), fills))
        return out + [Stage("the answer", context=True)]

    def open_placeholders(self) -> tuple[str, ...]:
        if not self.rounds:
            return ()
        after = self.rounds[-1].state_after
        return tuple(sorted({p for t in [*after.searchable, *after.fuzzy] for p in t.placeholders}))

    def chunk_ids_shown(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rounds:
            for c in r.chunks:
                seen.setdefault(c.chunk_id, None)
        return list(seen)
