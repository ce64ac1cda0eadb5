"""Tokens a method needs do not depend on a warm cache; what the run was billed does."""

from __future__ import annotations

from engine.llm.base import LLMCall
from engine.methods import build_method
from engine.methods.base import Usage
from engine.reasoners import make_reasoner
from tests._app_helpers import build_small_corpus


def test_usage_counts_cache_hits_as_needed_not_billed():
    calls = [
        LLMCall(job="solve", model="m", prompt_tokens=100, completion_tokens=10, cost=0.01, latency=0.5, cached=False),
        LLMCall(job="solve", model="m", prompt_tokens=100, completion_tokens=10, cost=0.0, latency=0.0, cached=True),
    ]
    u = Usage.from_calls(calls, total_time=1.0)
    assert (u.prompt_tokens, u.completion_tokens) == (200, 20)
    assert (u.billed_prompt_tokens, u.billed_completion_tokens) == (100, 10)
    assert u.cached_calls == 1 and u.cost == 0.01


def test_cold_and_warm_cache_give_equal_token_totals_and_different_cost(tmp_path, embedder, loopback_llm):  # noqa: F811
    from engine.store import Workspace

    build_small_corpus(tmp_path / "ws", "c", questions=1, embedder=embedder)
    corpus = Workspace(tmp_path / "ws", embedder=embedder).open("c")
    q = corpus.questions()[0]
    cache = tmp_path / "cache.sqlite"
    runs = []
    for _ in range(2):  # cold, then warm: the same prompts come back from the cache
        reasoner = make_reasoner(
            "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-test-usage-1", cache_path=cache
        )
        runs.append(build_method("t2rag", reasoner).answer(q.question, corpus).usage)
    cold, warm = runs
    assert cold.calls == warm.calls > 0 and warm.cached_calls == warm.calls and cold.cached_calls == 0
    assert (cold.prompt_tokens, cold.completion_tokens) == (warm.prompt_tokens, warm.completion_tokens)
    assert cold.billed_prompt_tokens == cold.prompt_tokens > 0 and warm.billed_prompt_tokens == 0
    assert cold.cost != warm.cost and warm.cost == 0.0
