"""The one cache around every LLM (engine/llm/cached.py): the scripted client and the what-if replay
client answer a repeated request as the litellm client does (tests/engine/llm/test_llm_client.py covers it
over the loopback server): the reply's text and token counts again, $0, marked cached, and the
script or the provider not asked a second time."""

from __future__ import annotations

from engine.llm.base import LLMCall
from engine.llm.cache import ResponseCache
from engine.llm.scripted import ScriptedLLM
from engine.runs.whatif import ReplayLLM

PROMPT = [{"role": "user", "content": "Who performed Me and Bobby McGee?"}]


def test_a_scripted_llm_with_a_cache_is_asked_once_and_the_repeat_costs_nothing(tmp_path):
    llm = ScriptedLLM(["Janis Joplin", "not asked"], cost_per_call=0.01, cache=ResponseCache(tmp_path / "c.sqlite"))
    first = llm.complete(PROMPT)
    again = llm.complete(PROMPT)
    assert (first.text, first.cost, first.cached) == ("Janis Joplin", 0.01, False)
    assert (again.text, again.cost, again.cached, again.attempts) == ("Janis Joplin", 0.0, True, 0)
    assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
    assert llm.calls == 1  # the cache answered the repeat; the script's second reply is unused
    other = llm.complete(PROMPT, json_mode=True)  # a different request is not a hit
    assert other.text == "not asked" and llm.calls == 2


def test_the_replay_llm_answers_a_recorded_prompt_as_a_free_replayed_reply():
    recorded = LLMCall(
        job="answer",
        messages=PROMPT,
        response="Janis Joplin",
        model="openai/gpt-4o-mini",
        prompt_tokens=9,
        completion_tokens=2,
        cost=0.0004,
    )
    got = ReplayLLM([recorded]).complete(PROMPT)
    assert (got.text, got.model, got.prompt_tokens, got.completion_tokens) == (
        "Janis Joplin",
        "openai/gpt-4o-mini",
        9,
        2,
    )
    assert got.cost == 0.0 and got.cached and got.replayed and got.attempts == 0
