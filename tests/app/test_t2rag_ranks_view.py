"""The T2RAG round view names each shown chunk's rank in the lists `chunk_channel` fused (issue 42),
and says nothing of ranks for a round the walk alone chose (the paper's)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from engine.methods.base import save_result
from engine.methods.t2rag import T2RAG, T2RAGSettings
from engine.reasoners.offline import OfflineReasoner
from tests._t2rag_helpers import HIDDEN_HOP_QUESTION, hidden_hop_corpus


def _round_one(path: str) -> None:
    from pathlib import Path

    from components.methods.base import show_step
    from engine.methods.base import load_result

    show_step(load_result(Path(path)), 1, None, [], frozenset())


@pytest.mark.parametrize("channel", [True, False])
def test_round_one_shows_each_chunks_rank_in_every_fused_list(channel, embedder, tmp_path):
    from components.methods.t2rag_graph import ranks_label

    corpus = hidden_hop_corpus(embedder)
    result = T2RAG(OfflineReasoner(embedder)).answer(HIDDEN_HOP_QUESTION, corpus, T2RAGSettings(chunk_channel=channel))
    save_result(result, tmp_path / "r.json")
    at = AppTest.from_function(_round_one, args=(str(tmp_path / "r.json"),), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join([str(el.value) for el in at.markdown] + [h.proto.body for h in at.get("html")])
    labels = [ranks_label(c.ranks) for c in result.trace.rounds[0].chunks]
    assert (("fused from the proposition walk" in shown) and all(x in shown for x in labels)) == channel
    if channel:  # the chunk no walk reaches: no walk rank, found by both searches
        orla = next(c for c in result.trace.rounds[0].chunks if c.chunk_id == "orla#0")
        assert ranks_label(orla.ranks).startswith("walk — · dense #") and "bm25 #" in ranks_label(orla.ranks)
    else:
        assert "walk #" not in shown
