"""How T2RAG's presets depart from its paper, with the reasons: what the badge, the trace,
the CLI's preset line and docs/methods.md's generated table say (engine/methods/presets.py reads
them from the method class: `preset_reasons`, `preset_fixes`, `run_departures`)."""

from __future__ import annotations

from engine.methods.departure import Departure

#: setting -> why `tuned` departs from the paper there: one line, shown beside the value
REASONS: dict[str, str] = {
    "prompts": "ours: JSON replies that name the proposition or passage (P1, C1) each value was "
    "read from, so every binding can be checked; the reference's free-text clues name none (not yet measured "
    "against the reference prompts with an LLM)",
    "adopt_proposed": "ours: a triplet that rewrites no question triplet is unverified, so it is shown, "
    "not searched with (not yet measured against the reference's choice)",
    "forced_context": "ours: at a forced stop the answer step also sees the unresolved lines and "
    "every round's passages (SPEC: the last round's), evidence the solver saw but could not bind (not yet "
    "measured with an LLM)",
    "tolerant_replies": "ours: a model's markdown or numbered reply (a bold 'Fully Resolved Clue 1:', "
    "'1. Subject: ...') loses every clue in the reference's line parser (tests/engine/methods/test_parity_t2rag.py); "
    "it matters only with the reference prompts and a model (not measured here: no model on this machine)",
    "decompose_retry": "ours (SPEC step 1): a question whose decomposition fails still gets a round with "
    "the question as its query and an answer, where the reference ends it with an error and nothing retrieved "
    "(never triggered by the offline reasoner on the shared sets: recall unchanged, issue 40)",
    "retrieve_when_resolved": "ours: a question with nothing to fill (a yes/no check of stated facts) "
    "is answered from retrieved passages, not from the model's memory of its own clues (never triggered by the "
    "offline reasoner on the shared sets: recall unchanged, issue 40)",
    "chunk_channel": "ours: a proposition is one extracted fact, so a chunk whose facts the extractor "
    "missed (or stated like every other chunk's) is reached late by the walk, while its own text finds it; "
    "the round's k chunks fuse the walk's order with a dense and a BM25 chunk search (reciprocal rank), the "
    "walk still picks the propositions. Measured with the offline reasoner (issue 42, R@5 off -> on): "
    "HotpotQA 0.635 -> 0.815, MuSiQue (GPT-3.5 triplets) 0.567 -> 0.647, 2Wiki 0.750 -> 0.875, long "
    "documents 0.558 -> 0.626 (MuSiQue) and 0.454 -> 0.848 (HotpotQA), each >= dense and BM25 at 5 chunks",
    "early_stop": "SPEC step 6: a round that produced no new searchable triplet ends the loop. Measured "
    "with the offline reasoner (issue 40): running on to N adds a round of chunks (HotpotQA 7.1 -> 12.0 per "
    "question, MuSiQue 8.7 -> 13.1) for recall 0.715 -> 0.765 and 0.645 -> 0.723, and a solver call per round",
}

#: SPEC's named bug fixes of the authors' code (kind "fix"), and engine behaviour every preset
#: shares (kind "engine"): kept by every preset, listed so nothing is hidden
FIXES: tuple[Departure, ...] = (
    Departure(
        "all source chunks",
        "a proposition keeps every chunk that states it",
        "only the last chunk",
        "the same fact stated twice must lead to both passages",
        "fix",
    ),
    Departure(
        "wh-words as whole words",
        "'who', 'what', ... removed as whole words",
        "substring removal",
        "the reference turned 'show' into 's'",
        "fix",
    ),
    Departure(
        "unreturned triplets kept",
        "a triplet the solver did not return stays in its queue",
        "silently dropped",
        "an unanswered hop must not vanish from the state",
        "fix",
    ),
    # not bug fixes SPEC names, but engine behaviour both presets share: listed so nothing is hidden
    Departure(
        "deterministic propagation",
        "a binding ?x = v is substituted into every triplet holding ?x (SPEC step 5, ours)",
        "only what the LLM rewrites",
        "a value found once fills every hop that needs it",
        "engine",
    ),
    Departure(
        "a query is asked once",
        "a round asks only queries not asked before; when nothing is new, unseen chunks",
        "re-asks the same triplet",
        "the reference sent byte-identical solve prompts (all 3 rounds on the Leland question)",
        "engine",
    ),
    Departure(
        "no repeated evidence",
        "a round that would show the solver exactly what it saw before stops (no_new_evidence)",
        "calls the solver again",
        "its answer cannot change; it would only cost a call",
        "engine",
    ),
    Departure(
        "fix-up asked once",
        "a decomposition that fails is asked once more with the fix-up prompt, then the question ends",
        "its error handler sends the identical fix-up prompt a second time before raising",
        "the same prompt at temperature 0 gives the same reply",
        "engine",
    ),
    Departure(
        "prompts in tagged sections",
        "the authors' prompt text as one user message, with the question, clues and evidence inserted in "
        "tagged sections and a system line saying tagged text is data",
        "f-strings inserting the raw text (and their indentation)",
        "an instruction written in a document must not pose as the prompt's own",
        "engine",
    ),
)

#: what a run cannot do as the paper does, whatever its settings (kind "run"): the trace names the
#: one that applied
RUN_DEPARTURES: tuple[Departure, ...] = ()
