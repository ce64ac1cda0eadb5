"""The offline reasoner's tests share one reasoner over the session's embedder, and the real
questions of the shared sets (copied into tests/fixtures/qa with their attribution)."""

from __future__ import annotations

import json

import pytest

from engine.reasoners.offline import OfflineReasoner


@pytest.fixture(scope="module")
def reasoner(embedder):
    return OfflineReasoner(embedder)


@pytest.fixture(scope="module")
def real_questions(shared_data) -> set[str]:
    hp = json.loads((shared_data / "hotpotqa_hipporag_train100" / "hotpotqa_train.json").read_text(encoding="utf-8"))
    mq = json.loads((shared_data / "musique_kag_100" / "musique_qa_100.json").read_text(encoding="utf-8"))
    return {r["question"] for r in hp} | {r["question"] for r in mq}
