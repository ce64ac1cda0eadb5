"""The landing showcase's captions, computed from runs.

A caption says what Compare will show on a showcase question (who is right, by which route), so it
is computed by running that comparison: the offline reasoner (free, deterministic; a model would
cost money on every landing view) and the settings Compare runs (the session's, `tuned` until
changed). Each caption is cached per process by the corpus's contents and the settings, so a
changed preset or a rebuilt corpus computes it again; the server's warm-up computes the default
settings' captions before the first visitor (components/shell/warmup.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Showcase:
    corpus: str
    qid: str
    shape: str  # what the question asks, in a few words: no outcome (that is computed, showcase.py)


#: Chosen on hotpotqa-sample (docs/ui.md has the survey). The first is the "Start here" question.
#: What each shows (who is right, by which route) is not written here: the card runs it
#: (components/shell/showcase.py) and tests/app/test_claims_from_runs.py checks the words.
SHOWCASE = (
    Showcase("hotpotqa-sample", "5ac3983a554299657fa290f5", "Three hops: athlete → home town → its census figure"),
    Showcase("hotpotqa-sample", "5ae3b0005542992f92d82341", "Two hops: player → team → the team's state"),
    Showcase("hotpotqa-sample", "5a7c1f325542996dd594b892", "A comparison: which of two bands was formed first"),
)
#: the shape of a question this corpus suggests when it holds no showcase question


def showcase_questions(corpus) -> list:
    """The showcase questions `corpus` holds (corpus `Question`s), in the card's order."""
    by_id = {q.qid: q for q in corpus.questions()}
    return [by_id[s.qid] for s in SHOWCASE if s.corpus == corpus.name and s.qid in by_id]


#: (corpus path, name, counts, qid, methods' settings) -> caption
_CACHE: dict[tuple, str] = {}
_LOCK = threading.Lock()


def _key(corpus, qid: str, settings: dict[str, Any]) -> tuple:
    c = corpus.counts()
    return (
        str(getattr(corpus, "path", "")),
        corpus.name,
        (c.documents, c.chunks, c.triplets, c.extracted, c.questions),
        qid,
        tuple(sorted((m, repr(s)) for m, s in settings.items())),
    )


def run_showcase(corpus, question, settings: dict[str, Any]):
    """The comparison of `question` as Compare runs it (the methods of `settings`), with the offline
    reasoner; its `CompareVerdict`."""
    from engine.reasoners import make_reasoner
    from engine.session import Session
    from engine.verdict import chunk_ids_of, compare_verdict, gold_spec

    reasoner = make_reasoner("", embedder=corpus.embedder)
    session = Session(workspace=Path(getattr(corpus, "path", ".")).parent)  # no budget: a free offline run
    results = session.answer_all(list(settings), question.question, corpus, settings=settings, reasoner=reasoner)
    return compare_verdict(results, gold_spec(corpus, question, chunk_ids_of(results)))


def cached_caption(corpus, question, settings: dict[str, Any]) -> str | None:
    with _LOCK:
        return _CACHE.get(_key(corpus, question.qid, settings))


def showcase_caption(corpus, question, settings: dict[str, Any]) -> str:
    """What Compare shows on `question` with `settings` (method -> settings), in one line."""
    from engine.verdict.showcase import caption

    key = _key(corpus, question.qid, settings)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    text = caption(run_showcase(corpus, question, settings))
    with _LOCK:
        _CACHE[key] = text
    return text


def default_settings() -> dict[str, Any]:
    """Compare's methods at their default presets (what a new session runs)."""
    from engine.methods.presets import preset_settings
    from engine.methods.registry import COMPARED

    return {m: preset_settings(m, "tuned") for m in COMPARED}


def warm_captions(corpus) -> int:
    """Compute the default settings' captions of the showcase questions `corpus` holds (the
    server's warm-up); how many."""
    settings = default_settings()
    picked = showcase_questions(corpus)
    for q in picked:
        showcase_caption(corpus, q, settings)
    return len(picked)
