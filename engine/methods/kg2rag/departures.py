"""How KG2RAG's presets depart from its paper, with the reasons: what the badge, the trace,
the CLI's preset line and docs/methods.md's generated table say (engine/methods/presets.py reads
them from the method class: `preset_reasons`, `preset_fixes`, `run_departures`)."""

from __future__ import annotations

from engine.methods.departure import Departure

#: setting -> why `tuned` departs from the paper there: one line, shown beside the value
REASONS: dict[str, str] = {
    "seeds": "BM25 + dense fused by reciprocal rank beats dense seeds on both shared sets "
    "(docs/benchmarks.md, issue 16)",
    "expansion_cap": "a hub entity ('United States') floods a pooled corpus with chunks; the cap "
    "keeps the most similar and the trace lists the rest",
    "max_entity_edges": "follow at most this many triplets of one entity per hop, so a hub cannot flood the candidates",
    "max_entity_reads": "reading every edge of a hub made a question's cost grow with the corpus (docs/scaling.md)",
    "tree_score": "without a cross-encoder, the mean of a tree's best proposition and best chunk "
    "cosine ranked best on both shared sets",
    "overflow": "the top tree held a gold paragraph in 92 of 100 MuSiQue questions with a median of "
    "19 chunks: skipping it lost 61 gold seeds",
    "seed_trees": "seeds with no triplet were lost unless the k/2 fill triggered (17 of 200 gold HotpotQA paragraphs)",
    "fill": "SPEC step 7: under k/2, the best remaining seeds; the authors' rerank of every remaining "
    "candidate adds nothing on top of tuned (paragraph recall HotpotQA 0.880 both, MuSiQue 0.737 -> 0.733; "
    "docs/benchmarks.md, issue 40)",
    "tree_form": "SPEC step 6 (the paper's text): a cross-encoder scores the tree's triplet form; the "
    "authors' distractor script scores its chunks' text (not measured: no cross-encoder on this machine)",
    "expansion": "SPEC steps 2-3: an expanded chunk weighs its own similarity to the question, and the "
    "graph holds the triplets the walk reached; the authors' entity-averaged scores and title completion "
    "cost recall on top of tuned (HotpotQA 0.880 -> 0.845, MuSiQue 0.737 -> 0.669; docs/benchmarks.md, issue 40)",
    "question_links": "SPEC step 4: trees from the triplets alone; the authors' weight-0 links between "
    "the question's entities: HotpotQA recall 0.880 both (R@5 0.755 -> 0.785), MuSiQue 0.737 -> 0.722 "
    "(docs/benchmarks.md, issue 40)",
    "seed_guard": "a seed more similar to the question than every expanded chunk in the context "
    "is never dropped for one: the graph stage adds recall to its own seeds instead of costing it "
    "(docs/benchmarks.md, issue 25)",
    "keep_seeds": "the expansion's neighbours may take the place of the first stage's weaker half only: "
    "a seed the first stage ranks high but the question's cosine ranks below an expanded chunk (a BM25 hit, "
    "or one of many alike windows of one long document) was cut out of its tree; window recall against "
    "hybrid at the same n, long documents: HotpotQA 0.917 -> 0.932 (hybrid 0.927), MuSiQue 0.735 -> 0.747 "
    "(docs/benchmarks.md, issue 42)",
    "answer_prompt": "ours: the zero-shot short-answer prompt every other method uses, so answers "
    "differ by retrieval alone (not yet measured against the authors' prompt with an LLM)",
}

#: SPEC's named bug fixes of the authors' code (kind "fix"), and engine behaviour every preset
#: shares (kind "engine"): kept by every preset, listed so nothing is hidden
FIXES: tuple[Departure, ...] = (
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
)

#: what a run cannot do as the paper does, whatever its settings (kind "run"): the trace names the
#: one that applied
RUN_DEPARTURES: tuple[Departure, ...] = ()
