"""The bundled sample corpora, built on first use with the offline reasoner (no network, no key)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from engine.config import PROJECT_ROOT
from engine.progress import ProgressCallback, no_progress

SAMPLE_DIR = PROJECT_ROOT / "sample_corpora"
#: corpus name -> bundled dataset file; the first one is the app's default corpus
SAMPLES: dict[str, str] = {
    "hotpotqa-sample": "hotpotqa_30.json",
    "musique-sample": "musique_10.json",
}
DEFAULT_SAMPLE = "hotpotqa-sample"


def build_sample(workspace, name: str, on_progress: ProgressCallback = no_progress) -> str:
    """Create corpus `name` from its bundled file and extract its triplets offline."""
    from engine.extraction import run_extraction
    from engine.ingest import load_paths
    from engine.reasoners.offline import OfflineReasoner

    batch = load_paths([SAMPLE_DIR / SAMPLES[name]])
    if batch.errors:
        raise RuntimeError(f"bundled sample {SAMPLES[name]} did not load: {batch.errors[0][1]}")
    corpus = workspace.open(name) if workspace.exists(name) else workspace.create(name)
    corpus.add_documents(batch.documents, on_progress=on_progress)
    corpus.add_questions(batch.questions)
    run_extraction(corpus, OfflineReasoner(corpus.embedder), on_progress=on_progress)
    corpus.refresh_indexes(on_progress)
    c = corpus.counts()
    return f"{name}: {c.documents} documents, {c.chunks} chunks, {c.triplets} triplets, {c.questions} questions"


def ensure_sample_corpora(
    workspace, on_progress: ProgressCallback = no_progress, names: list[str] | None = None
) -> Iterator[str]:
    """Build each sample corpus that is missing or unfinished; report one line per corpus."""
    for name in names or list(SAMPLES):
        if workspace.exists(name):
            c = workspace.open(name).counts()
            if c.chunks and not c.pending and not c.failed:
                yield f"{name}: ready ({c.chunks} chunks, {c.triplets} triplets, {c.questions} questions)"
                continue
        yield "built " + build_sample(workspace, name, on_progress)


def sample_path(name: str) -> Path:
    return SAMPLE_DIR / SAMPLES[name]
