"""The inputs a run used, beside the ones its paper used: the "inputs line" on every result, badge,
Compare column, export and eval summary.

A preset names the method's own settings; the inputs are what the method was fed: the embedder,
where the triplets came from, the reranker and the reasoner. A `paper` preset run with MiniLM and
offline-rule triplets is not the paper's experiment, and the screen must say so:

    inputs = RunInputs("bundled:all-MiniLM-L6-v2", "offline rules", reranker="", reasoner="offline-rules")
    differing(inputs, T2RAG.paper_inputs)   # [("embedder", "bundled:all-MiniLM-L6-v2", "nvidia/NV-Embed-v2"), ...]

A leaf of `engine.methods`: each method class names its paper's inputs (`paper_inputs`); the session
records a run's (`Result.inputs`); the screen and the export compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

#: what the reranker field says when no cross-encoder ranked anything
NO_RERANKER = "cosine: no cross-encoder configured"
#: the fields of the line, in the order it shows them, with the word a reader sees
FIELDS = (("embedder", "embedder"), ("triplets", "triplets"), ("reranker", "reranker"), ("reasoner", "reasoner"))


@dataclass(frozen=True)
class PaperInputs:
    """What the paper's experiments (its authors' code) fed the method: the model ids each input was,
    any one of them counting as the paper's (T2RAG ran GPT-4o-mini and Gemini 2.5 Flash). `triplets`
    names the model that extracted them; `reranker` () = the paper ranks with none (not compared)."""

    embedder: tuple[str, ...]
    triplets: tuple[str, ...]
    reranker: tuple[str, ...] = ()
    reasoner: tuple[str, ...] = ()
    source: str = ""  # where in the authors' code these are set

    def shown(self, name: str) -> str:
        return " or ".join(getattr(self, name)) or "none"


@dataclass(frozen=True)
class RunInputs:
    """What a run here was fed. `reranker` "" = the method ranks with no reranker step at all."""

    embedder: str = ""
    triplets: str = ""
    reranker: str = ""
    reasoner: str = ""

    def line(self) -> str:
        return " · ".join(f"{label} {getattr(self, name)}" for name, label in FIELDS if getattr(self, name))


def differing(run: RunInputs | None, paper: PaperInputs | None) -> list[tuple[str, str, str]]:
    """(field, this run's, the paper's) for every input that is not the paper's; a field the paper
    does not use is not compared. Model ids compare without their provider or path
    (`openai/gpt-4o-mini` is the paper's `gpt-4o-mini`)."""
    if run is None or paper is None:
        return []
    out = []
    for name, _ in FIELDS:
        mine, theirs = getattr(run, name), getattr(paper, name)
        if theirs and model_id(mine) not in {model_id(t) for t in theirs}:
            out.append((name, mine or "none", paper.shown(name)))
    return out


def describe(run: RunInputs | None, paper: PaperInputs | None) -> str:
    """The inputs line: what the run was fed, each input beside its paper's ("as the paper" when the
    same); "" without a run's inputs."""
    if run is None:
        return ""
    theirs = {name: was for name, _, was in differing(run, paper)}
    parts = []
    for name, label in FIELDS:
        mine = getattr(run, name)
        if not mine:
            continue
        if name in theirs:
            parts.append(f"{label} {mine} (paper: {theirs[name]})")
        elif paper is not None and getattr(paper, name):
            parts.append(f"{label} {mine} (as the paper)")
        else:
            parts.append(f"{label} {mine}")
    return "Inputs: " + " · ".join(parts)


def model_id(spec: str) -> str:
    """`litellm:openai/text-embedding-3-small` -> `text-embedding-3-small`, `ollama/llama3:8b` ->
    `llama3:8b`, `ce:/models/bge-reranker-large` -> `bge-reranker-large`: a model's own name."""
    spec = (spec or "").strip()
    for prefix in ("litellm:", "st:", "ce:", "cross-encoder:", "bundled:"):
        if spec.startswith(prefix):
            spec = spec[len(prefix) :]
    return spec.rstrip("/").rsplit("/", 1)[-1].lower()


def triplet_source(models: dict[str, int]) -> str:
    """A corpus's triplet source from its extraction records ({model: chunks}): "offline rules",
    "openai/gpt-4o-mini", "imported file", or several with their chunk counts."""
    named = {_SOURCE.get(m, m): n for m, n in models.items() if n}
    if not named:
        return "none extracted"
    if len(named) == 1:
        return next(iter(named))
    return ", ".join(f"{m} ({n} chunks)" for m, n in sorted(named.items(), key=lambda mn: -mn[1]))


_SOURCE = {"offline-rules": "offline rules", "import": "imported file", "": "unknown"}
