"""How HippoRAG 2's presets depart from its paper, with the reasons: what the badge, the trace,
the CLI's preset line and docs/methods.md's generated table say (engine/methods/presets.py reads
them from the method class: `preset_reasons`, `preset_fixes`, `run_departures`)."""

from __future__ import annotations

from engine.methods.departure import Departure

#: setting -> why `tuned` departs from the paper there: one line, shown beside the value
REASONS: dict[str, str] = {
    "hybrid_facts": "facts are matched word for word as well as by cosine: a small embedder (MiniLM, not "
    "NV-Embed-v2) blurs the names a question asks about, and the facts retrieved seed the whole walk; "
    "R@5 MuSiQue 0.667 -> 0.714, HotpotQA 0.730 -> 0.775 (docs/benchmarks.md, issue 42)",
    "dense_first": "the two passages dense retrieval ranks first open the context and the walk orders the "
    "rest: fact seeds weigh far more than passage seeds, so sparse or noisy facts (offline triplets) could "
    "push the best-matching passages out; with hybrid_facts, R@5 at or above dense on every set measured "
    "(docs/benchmarks.md, issue 42)",
}

#: SPEC's named bug fixes of the authors' code (kind "fix"), and engine behaviour every preset
#: shares (kind "engine"): kept by every preset, listed so nothing is hidden
FIXES: tuple[Departure, ...] = (
    Departure(
        "triplets as stored",
        "the corpus's stored triplets (its extractor's), facts embedded as 'subject predicate object' by the "
        "corpus embedder, no query instructions",
        "OpenIE by an LLM at indexing (the code's default: gpt-4o-mini), NV-Embed-v2 with its query_to_fact / "
        "query_to_passage instructions, facts "
        "embedded as str(tuple)",
        "one corpus, one embedder and one set of triplets for every method, so they differ by method alone",
        "engine",
    ),
    Departure(
        "answer prompt",
        "the zero-shot short-answer prompt every method uses, over the top qa_top_k passages",
        "rag_qa_musique: one-shot, 'Thought: ... Answer:'",
        "answers differ by retrieval alone (not yet measured against the authors' prompt with an LLM)",
        "engine",
    ),
    Departure(
        "filter call",
        "the reasoner's call: temperature 0, up to 2,048 reply tokens, no JSON mode",
        "max_completion_tokens=512, the LLM's configured response format",
        "one call path for every method's LLM calls (limits, cache, usage); a filter reply is a few facts",
        "engine",
    ),
    Departure(
        "filter reply read whole",
        "a reply without the [[ ## fact_after_filter ## ]] marker is read whole as the facts",
        "parse_filter returns no fact, so the run falls back to dense retrieval",
        "a model answering with the bare JSON has still filtered",
        "engine",
    ),
    Departure(
        "PageRank by power iteration",
        "numpy/scipy power iteration to an L1 change < 1e-12, isolated nodes' mass back through the reset vector",
        "igraph's PRPACK",
        "python-igraph is not available here; the same equations: scores agree with networkx's PageRank "
        "to a relative 1e-6 (tests/engine/methods/test_parity_hipporag2.py)",
        "engine",
    ),
    Departure(
        "equal scores normalized",
        "min-max normalization of equal scores gives all ones",
        "divides by zero (NaN scores, dropped by its PageRank)",
        "one fact or one passage must still seed the graph",
        "fix",
    ),
)

#: what a run cannot do as the paper does, whatever its settings (kind "run"): the trace names the
#: one that applied
RUN_DEPARTURES: tuple[Departure, ...] = (
    Departure(
        "recognition memory skipped",
        "every retrieved fact kept (the offline reasoner cannot filter)",
        "an LLM keeps the facts relevant to the question (DSPyFilter)",
        "the offline rules write no free text; choose a model to run the filter",
        "run",
    ),
)
