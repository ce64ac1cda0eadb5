"""What a run was fed, recorded with its result (`Result.inputs`): the corpus's embedder, where its
triplets came from, the reranker the method's settings name, and the reasoner. The screen, the
export and the eval summary set it beside the method's paper (engine/methods/inputs.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.embed import BUNDLED_SPEC
from engine.methods.inputs import NO_RERANKER, RunInputs, triplet_source


def run_inputs(corpus: Any, settings: Any, reasoner: str) -> RunInputs:
    """The inputs of a run over `corpus` with `settings` (a method with no `reranker` setting has no
    reranker step: ""; an empty one ranks by embedding cosine)."""
    embedder = getattr(getattr(corpus, "settings", None), "embedder", "") or getattr(
        getattr(corpus, "embedder", None), "spec", ""
    )
    if embedder == "bundled":
        embedder = BUNDLED_SPEC
    sources = getattr(corpus, "triplet_sources", None)
    triplets = triplet_source(sources()) if callable(sources) else ""
    reranker = ""
    if settings is not None and dataclasses.is_dataclass(settings) and hasattr(settings, "reranker"):
        reranker = str(settings.reranker or "") or NO_RERANKER
    return RunInputs(embedder=embedder, triplets=triplets, reranker=reranker, reasoner=reasoner)
