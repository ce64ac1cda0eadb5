"""Named presets for every method, in one registry: `paper` and `tuned`.

    settings = preset_settings("kg2rag", "paper")          # the paper and the authors' code
    preset_name("kg2rag", settings)                          # "paper"
    departures("kg2rag", tuned)                              # [Departure("seeds", "hybrid", "dense", ...), ...]

* `paper` is the paper and its authors' code, with SPEC's documented bug fixes only (`FIXES`, each
  named: every preset keeps them, and the trace lists them as departures of kind "fix").
* `tuned` is our measured default (docs/benchmarks.md): the settings dataclasses' own defaults.

A settings object that is neither (a preset with `--set k=8` on top, a Settings form edit) is
`custom`; its departures from `paper` are listed all the same. `reranker` is configuration, not a
choice of the preset (a cross-encoder is used when one is configured, in both), so it is never a
departure. The trace records the preset and its departures (`trace.preset`, `trace.departures`),
the screen names the preset on a badge and lists the departures in one click, and
docs/methods.md's tables are checked against `REASONS` and `FIXES` (tests/engine/methods/test_presets.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.methods.departure import Departure

PRESETS = ("paper", "tuned")
CUSTOM = "custom"
#: Fields that configure the run rather than choose a method variant: never a departure.
NEUTRAL = frozenset({"reranker"})

#: A method with a paper of its own has a settings class with a `paper()` constructor
#: (`T2RAGSettings.paper`, `KG2RAGSettings.paper`, `HippoRAG2Settings.paper`); every other method (the
#: baselines, IRCoT) has one form, so its `paper` and `tuned` are its settings class's defaults.

#: (method, setting) -> why `tuned` departs from the paper there: one line, shown beside the value.
REASONS: dict[tuple[str, str], str] = {
    ("t2rag", "prompts"): "ours: JSON replies that name the proposition or passage (P1, C1) each value was "
    "read from, so every binding can be checked; the reference's free-text clues name none (not yet measured "
    "against the reference prompts with an LLM)",
    ("t2rag", "adopt_proposed"): "ours: a triplet that rewrites no question triplet is unverified, so it is shown, "
    "not searched with (not yet measured against the reference's choice)",
    ("t2rag", "forced_context"): "ours: at a forced stop the answer step also sees the unresolved lines and "
    "every round's passages (SPEC: the last round's), evidence the solver saw but could not bind (not yet "
    "measured with an LLM)",
    ("t2rag", "tolerant_replies"): "ours: a model's markdown or numbered reply (a bold 'Fully Resolved Clue 1:', "
    "'1. Subject: ...') loses every clue in the reference's line parser (tests/engine/methods/test_parity_t2rag.py); "
    "it matters only with the reference prompts and a model (not measured here: no model on this machine)",
    ("t2rag", "decompose_retry"): "ours (SPEC step 1): a question whose decomposition fails still gets a round with "
    "the question as its query and an answer, where the reference ends it with an error and nothing retrieved "
    "(never triggered by the offline reasoner on the shared sets: recall unchanged, issue 40)",
    ("t2rag", "retrieve_when_resolved"): "ours: a question with nothing to fill (a yes/no check of stated facts) "
    "is answered from retrieved passages, not from the model's memory of its own clues (never triggered by the "
    "offline reasoner on the shared sets: recall unchanged, issue 40)",
    ("t2rag", "early_stop"): "SPEC step 6: a round that produced no new searchable triplet ends the loop. Measured "
    "with the offline reasoner (issue 40): running on to N adds a round of chunks (HotpotQA 7.1 -> 12.0 per "
    "question, MuSiQue 8.7 -> 13.1) for recall 0.715 -> 0.765 and 0.645 -> 0.723, and a solver call per round",
    ("kg2rag", "seeds"): "BM25 + dense fused by reciprocal rank beats dense seeds on both shared sets "
    "(docs/benchmarks.md, issue 16)",
    ("kg2rag", "expansion_cap"): "a hub entity ('United States') floods a pooled corpus with chunks; the cap "
    "keeps the most similar and the trace lists the rest",
    ("kg2rag", "max_entity_edges"): "follow at most this many triplets of one entity per hop, so a hub cannot "
    "flood the candidates",
    ("kg2rag", "max_entity_reads"): "reading every edge of a hub made a question's cost grow with the corpus "
    "(docs/scaling.md)",
    ("kg2rag", "tree_score"): "without a cross-encoder, the mean of a tree's best proposition and best chunk "
    "cosine ranked best on both shared sets",
    ("kg2rag", "overflow"): "the top tree held a gold paragraph in 92 of 100 MuSiQue questions with a median of "
    "19 chunks: skipping it lost 61 gold seeds",
    ("kg2rag", "seed_trees"): "seeds with no triplet were lost unless the k/2 fill triggered (17 of 200 gold "
    "HotpotQA paragraphs)",
    ("kg2rag", "fill"): "SPEC step 7: under k/2, the best remaining seeds; the authors' rerank of every remaining "
    "candidate adds nothing on top of tuned (paragraph recall HotpotQA 0.880 both, MuSiQue 0.737 -> 0.733; "
    "docs/benchmarks.md, issue 40)",
    ("kg2rag", "tree_form"): "SPEC step 6 (the paper's text): a cross-encoder scores the tree's triplet form; the "
    "authors' distractor script scores its chunks' text (not measured: no cross-encoder on this machine)",
    ("kg2rag", "expansion"): "SPEC steps 2-3: an expanded chunk weighs its own similarity to the question, and the "
    "graph holds the triplets the walk reached; the authors' entity-averaged scores and title completion "
    "cost recall on top of tuned (HotpotQA 0.880 -> 0.845, MuSiQue 0.737 -> 0.669; docs/benchmarks.md, issue 40)",
    ("kg2rag", "question_links"): "SPEC step 4: trees from the triplets alone; the authors' weight-0 links between "
    "the question's entities: HotpotQA recall 0.880 both (R@5 0.755 -> 0.785), MuSiQue 0.737 -> 0.722 "
    "(docs/benchmarks.md, issue 40)",
    ("kg2rag", "seed_guard"): "a seed more similar to the question than every expanded chunk in the context "
    "is never dropped for one: the graph stage adds recall to its own seeds instead of costing it "
    "(docs/benchmarks.md, issue 25)",
    ("kg2rag", "answer_prompt"): "ours: the zero-shot short-answer prompt every other method uses, so answers "
    "differ by retrieval alone (not yet measured against the authors' prompt with an LLM)",
}

#: SPEC's named bug fixes of the authors' code (marked "(ours)" there): kept by every preset.
FIXES: dict[str, list[Departure]] = {
    "t2rag": [
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
    ],
    "kg2rag": [
        Departure(
            "normalized entity matching",
            "entities matched as normalized strings (case, punctuation, articles)",
            "raw strings against document titles only",
            "most triplet entities are not document titles",
            "fix",
        ),
        Departure(
            "depth-first walk",
            "each tree's chunks in walk order from its heaviest edge (the paper)",
            "ordered by title and sentence index",
            "the paper's organization step; the code skipped it",
            "fix",
        ),
        Departure(
            "skip a misfit tree",
            "a tree that does not fit is skipped and the next is tried",
            "stops at the first misfit",
            "with one big tree the reference selected nothing",
            "fix",
        ),
        Departure(
            "reranked fill reads what it ranked",
            "the `rerank` fill adds the remaining candidates in the order it ranked them",
            "ranks the remaining candidates, then reads each rank position from the unfiltered candidate "
            "list (kg_post_processor.py ~427)",
            "once a tree's chunk preceded them, it added the wrong chunks, or fewer",
            "fix",
        ),
        # not bug fixes SPEC names, but how the engine runs the authors' steps: listed so nothing is hidden
        Departure(
            "entities, not titles, carry the expansion",
            "an entity's chunks are those stating a triplet the walk followed from it; the authors' title "
            "completion adds the rest of a seed's document",
            "an entity's chunks are the document of that title (every entity is a title)",
            "one entity graph serves any corpus, whose entities are mostly not document titles",
            "engine",
        ),
    ],
    # HippoRAG 2 (engine/methods/hipporag2): what the engine does differently for any settings (its
    # settings are the authors' BaseConfig; the filter prompt is theirs, filter_prompt.py)
    "hipporag2": [
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
    ],
}


#: What a run cannot do as the paper does whatever its settings, and when (kind "run"): the trace
#: names the one that applied (`HippoRAG2Trace.run_departures`), the badge and the export show it.
RUN_DEPARTURES: dict[str, list[Departure]] = {
    "hipporag2": [
        Departure(
            "recognition memory skipped",
            "every retrieved fact kept (the offline reasoner cannot filter)",
            "an LLM keeps the facts relevant to the question (DSPyFilter)",
            "the offline rules write no free text; choose a model to run the filter",
            "run",
        )
    ],
}


def has_presets(method: str) -> bool:
    """True for a method with a paper of its own (T2RAG, KG2RAG, HippoRAG 2): its settings class
    has a `paper()` constructor, so its `paper` and `tuned` presets can differ."""
    return callable(getattr(_settings_cls(method), "paper", None))


def _settings_cls(method: str) -> Any:
    from engine.methods.registry import settings_class

    return settings_class(method)


def preset_settings(method: str, preset: str, **overrides: Any) -> Any:
    """The method's settings under `preset` ("paper" or "tuned"), with `overrides` on top."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    cls = _settings_cls(method)
    base = cls.paper() if preset == "paper" and has_presets(method) else cls()
    return dataclasses.replace(base, **overrides) if overrides else base


def _compared(settings: Any) -> dict[str, Any]:
    if settings is None or not dataclasses.is_dataclass(settings):
        return {}
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name not in NEUTRAL}


def preset_name(method: str, settings: Any) -> str:
    """ "paper", "tuned" or "custom" (neither; e.g. a preset with a changed k)."""
    mine = _compared(settings)
    for preset in PRESETS:
        if mine == _compared(preset_settings(method, preset)):
            return preset
    return CUSTOM


def departures(method: str, settings: Any, *, fixes: bool = True) -> list[Departure]:
    """Every setting of `settings` that differs from the paper's (name, value, paper value, reason),
    after SPEC's named bug fixes (kind "fix") and the engine behaviour every preset shares (kind
    "engine") when `fixes`."""
    mine = _compared(settings)
    paper = _compared(preset_settings(method, "paper")) if mine else {}
    out = list(FIXES.get(method, [])) if fixes else []
    for name, value in mine.items():
        if name in paper and value != paper[name]:
            reason = REASONS.get((method, name), "changed in this session's settings")
            out.append(Departure(name, _show(value), _show(paper[name]), reason))
    return out


def _show(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value == -1:
        return "-1 (no limit)"
    return str(value)


def describe(method: str, settings: Any) -> tuple[str, list[Departure]]:
    """The preset name and the departures list, as a trace records them."""
    return preset_name(method, settings), departures(method, settings)


def prompted(reasoner: Any, prompt_set: str) -> Any:
    """`reasoner` building its prompts from `prompt_set` ("tuned", "t2rag-paper", "kg2rag-paper");
    a reasoner without prompts (the offline rules) is returned as it is."""
    variant = getattr(reasoner, "with_prompt_set", None)
    return variant(prompt_set) if callable(variant) else reasoner


# --- docs/methods.md's preset tables are generated here (tests/engine/methods/test_presets.py keeps them in step) ---

DOCS_BEGIN, DOCS_END = (
    "<!-- presets:{method} (generated: python -m engine.methods.presets --write-docs) -->",
    ("<!-- /presets:{method} -->"),
)


#: Methods whose preset table docs/methods.md holds (generated between its markers).
DOCUMENTED = ("t2rag", "kg2rag", "hipporag2")


def docs_table(method: str) -> str:
    """The method's presets as a markdown table: every setting, its paper and tuned value, and why
    tuned departs; then SPEC's named bug fixes that both keep."""
    paper, tuned = preset_settings(method, "paper"), preset_settings(method, "tuned")
    rows = ["| setting | `paper` | `tuned` | why `tuned` departs |", "|---|---|---|---|"]
    for f in dataclasses.fields(paper):
        a, b = getattr(paper, f.name), getattr(tuned, f.name)
        why = "" if a == b else REASONS.get((method, f.name), "")
        if f.name in NEUTRAL:
            why = "configuration, not a preset choice: when set, a cross-encoder ranks in both"
        rows.append(f"| `{f.name}` | {_show(a)} | {_show(b)} | {why} |")
    rows += ["", "SPEC's bug fixes of the authors' code (and engine behaviour), kept by both presets:", ""]
    rows += [
        f"- **{d.name}**{' (engine)' if d.kind == 'engine' else ''}: {d.value} (reference code: {d.paper}); {d.reason}"
        for d in FIXES.get(method, [])
    ]
    if RUN_DEPARTURES.get(method):
        rows += ["", "A run's own departures, whatever its settings (the trace and the badge name them):", ""]
        rows += [f"- **{d.name}**: {d.value} (paper: {d.paper}); {d.reason}" for d in RUN_DEPARTURES[method]]
    return "\n".join(rows)


def docs_block(method: str) -> str:
    return "\n".join([DOCS_BEGIN.format(method=method), docs_table(method), DOCS_END.format(method=method)])


def write_docs(path: str) -> None:
    """Rewrite each generated block of `path` (docs/methods.md) from the registry."""
    import re
    from pathlib import Path

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    for method in DOCUMENTED:
        begin = re.escape(DOCS_BEGIN.format(method=method))
        end = re.escape(DOCS_END.format(method=method))
        block = docs_block(method)
        text = re.sub(f"{begin}.*?{end}", lambda _m: block, text, flags=re.DOTALL)  # noqa: B023 - used at once
    p.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--write-docs"]:
        write_docs(sys.argv[2] if len(sys.argv) > 2 else "docs/methods.md")
    else:
        print("\n\n".join(docs_block(m) for m in DOCUMENTED))
