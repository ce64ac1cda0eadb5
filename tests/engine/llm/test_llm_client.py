"""The real litellm path against the loopback OpenAI-compatible server: usage, cost, retries,
timeouts, malformed replies, clear errors, the response cache and key hygiene."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading

import pytest

from engine.llm.base import LLMError
from engine.llm.cache import ResponseCache
from engine.llm.litellm_client import LiteLLMClient, import_litellm, list_ollama_models, scrub

KEY = "sk-test-SECRET-4f9a8b7c6d5e"
MSG = [{"role": "user", "content": "Who directed the film Alien?"}]


def client(srv, model="openai/gpt-4o-mini", **kw) -> LiteLLMClient:
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 5.0)
    return LiteLLMClient(model, api_base=srv.base_url, api_key=KEY, **kw)


def test_usage_and_price_come_from_the_reply_and_litellms_table(loopback_llm):
    loopback_llm.reply = lambda messages, body: "Ridley Scott"
    c = client(loopback_llm).complete(MSG)
    assert c.text == "Ridley Scott"
    assert (c.prompt_tokens, c.completion_tokens) == (5, 2)  # the server's whitespace counts
    p, q = import_litellm().cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=5, completion_tokens=2)
    assert c.cost == pytest.approx(p + q) and c.cost > 0
    assert c.cached is False and c.attempts == 1 and c.latency > 0
    # the key reached the server as a bearer token
    assert loopback_llm.headers[-1]["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("model", ["hosted_vllm/my-local-model", "openai/not-a-priced-model"])
def test_unpriced_model_reports_unknown_cost_not_zero(loopback_llm, model):
    c = client(loopback_llm, model=model).complete(MSG)
    assert c.text.startswith("echo:")
    assert c.cost is None


def test_retries_429_and_500_then_succeeds(loopback_llm):
    loopback_llm.faults.extend(["429", "500", "503"])
    c = client(loopback_llm).complete(MSG)
    assert c.text.startswith("echo:")
    assert c.attempts == 4
    assert len(loopback_llm.chat_requests()) == 4


def test_rate_limit_that_never_ends_gives_up_after_max_attempts(loopback_llm):
    loopback_llm.fail_after, loopback_llm.fail_mode = 0, "429"
    with pytest.raises(LLMError) as info:
        client(loopback_llm, max_attempts=3).complete(MSG)
    assert info.value.kind == "rate_limit"
    assert "after 3 attempts" in str(info.value) and "concurrency" in str(info.value)
    assert len(loopback_llm.chat_requests()) == 3


def test_a_hanging_server_times_out_and_the_retry_succeeds(loopback_llm):
    loopback_llm.hang_seconds = 3.0
    loopback_llm.faults.append("hang")
    c = client(loopback_llm, timeout=0.5).complete(MSG)
    assert c.text.startswith("echo:") and c.attempts == 2


def test_timeout_on_every_attempt_is_a_timeout_error(loopback_llm):
    loopback_llm.hang_seconds = 3.0
    loopback_llm.faults.extend(["hang", "hang"])
    with pytest.raises(LLMError) as info:
        client(loopback_llm, timeout=0.4, max_attempts=2).complete(MSG)
    assert info.value.kind == "timeout" and "0.4s" in str(info.value)


def test_truncated_json_body_is_retried(loopback_llm):
    loopback_llm.faults.append("truncated")
    c = client(loopback_llm).complete(MSG)
    assert c.text.startswith("echo:") and c.attempts == 2


def test_empty_completion_is_retried_and_billed(loopback_llm):
    loopback_llm.faults.append("empty")
    c = client(loopback_llm).complete(MSG)
    assert c.text.startswith("echo:") and c.attempts == 2
    # both answered requests count: the empty one was billed too
    assert c.prompt_tokens == 10


def test_always_empty_reply_returns_empty_text_and_is_not_cached(loopback_llm, tmp_path):
    loopback_llm.reply = lambda m, b: ""
    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    c = client(loopback_llm, max_attempts=2, cache=cache).complete(MSG)
    assert c.text == "" and c.attempts == 2
    assert len(cache) == 0


def test_reply_cut_by_max_tokens_is_retried_with_a_larger_budget(loopback_llm):
    loopback_llm.faults.append("length")
    c = client(loopback_llm).complete(MSG, max_tokens=100)
    assert c.attempts == 2
    assert [r["max_tokens"] for r in loopback_llm.chat_requests()] == [100, 200]


def test_401_is_one_clear_auth_error_without_retries(loopback_llm):
    loopback_llm.faults.append("401")
    with pytest.raises(LLMError) as info:
        client(loopback_llm).complete(MSG)
    err = info.value
    assert err.kind == "auth"
    assert "openai" in str(err) and "API key" in str(err) and "OPENAI_API_KEY" in str(err)
    assert KEY not in str(err)
    assert len(loopback_llm.chat_requests()) == 1
    assert err.__cause__ is None and err.__context__ is None  # the provider's exception is not attached


def test_key_echoed_by_the_provider_is_scrubbed_from_the_error(loopback_llm):
    loopback_llm.faults.append("echo_key")
    with pytest.raises(LLMError) as info:
        client(loopback_llm).complete(MSG)
    assert info.value.kind == "bad_request"
    assert "Authorization" in str(info.value)  # the provider's message is kept...
    assert KEY not in str(info.value) and "SECRET" not in str(info.value)  # ...without the key
    assert KEY not in repr(info.value)


def test_unknown_provider_prefix_is_a_not_found_error_naming_the_fix(loopback_llm):
    with pytest.raises(LLMError) as info:
        LiteLLMClient("gpt-nonexistent-xyz", api_key=KEY).complete(MSG)
    assert info.value.kind == "not_found"
    assert "provider prefix" in str(info.value) and "openai/" in str(info.value)


def test_404_model_is_not_found(loopback_llm):
    loopback_llm.faults.append("404")
    with pytest.raises(LLMError) as info:
        client(loopback_llm).complete(MSG)
    assert info.value.kind == "not_found"


def test_unreachable_server_names_the_endpoint():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(LLMError) as info:
        LiteLLMClient("openai/gpt-4o-mini", api_base=base, api_key=KEY, backoff=0.01).complete(MSG)
    assert info.value.kind == "unreachable"
    assert base in str(info.value) and "running" in str(info.value)


def test_cache_hit_is_free_marked_and_skips_the_server(loopback_llm, tmp_path):
    path = tmp_path / "llm_cache.sqlite"
    first = client(loopback_llm, cache=path).complete(MSG)
    # a fresh client (another run, another key) over the same file
    again = LiteLLMClient(
        "openai/gpt-4o-mini", api_base=loopback_llm.base_url, api_key="sk-other-key-123456", cache=path
    ).complete(MSG)
    assert len(loopback_llm.chat_requests()) == 1
    assert again.cached and again.cost == 0.0 and again.latency == 0.0 and again.attempts == 0
    assert again.text == first.text
    assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
    # different parameters or endpoint are different entries
    client(loopback_llm, cache=path).complete(MSG, temperature=0.7)
    assert len(loopback_llm.chat_requests()) == 2


def test_the_key_never_reaches_the_cache_files(loopback_llm, tmp_path):
    path = tmp_path / "llm_cache.sqlite"
    c = client(loopback_llm, cache=path)
    for i in range(3):
        c.complete([{"role": "user", "content": f"question {i}"}])
    c.cache.close()
    blobs = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("llm_cache"))
    assert b"question 2" in blobs  # the replies are there
    assert KEY.encode() not in blobs and b"SECRET" not in blobs
    assert KEY not in repr(c)


def test_a_damaged_cache_file_costs_hits_not_the_run(loopback_llm, tmp_path):
    path = tmp_path / "llm_cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    c = client(loopback_llm, cache=path)
    assert c.cache is None and "unusable" in c.cache_error
    assert c.complete(MSG).text.startswith("echo:")


def test_cache_is_safe_under_threads_and_processes(tmp_path):
    path = tmp_path / "llm_cache.sqlite"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(__import__("engine").__path__[0] + "/..")!r})
        from engine.llm.cache import ResponseCache, CachedResponse
        c = ResponseCache({str(path)!r})
        for i in range(100):
            c.put(f"{{sys.argv[1]}}-{{i}}", CachedResponse(f"t{{i}}", "m", 1, 1))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, f"p{n}"]) for n in range(2)]
    cache = ResponseCache(path)
    from engine.llm.cache import CachedResponse

    def writer(n: int) -> None:
        for i in range(100):
            cache.put(f"t{n}-{i}", CachedResponse(f"x{i}", "m", 1, 1))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.wait(timeout=60) == 0 for p in procs)
    assert len(cache) == 600
    assert cache.get("p1-99").text == "t99" and cache.get("t3-42").text == "x42"


def test_scrub_removes_given_and_key_shaped_secrets():
    text = "auth failed for sk-abcdef1234567890 with Bearer abc.def-ghi_jkl and mykey-XYZ1234"
    out = scrub(text, ("mykey-XYZ1234",))
    assert "sk-abcdef" not in out and "abc.def-ghi" not in out and "mykey-XYZ1234" not in out
    assert out.startswith("auth failed for")


def test_list_ollama_models(loopback_llm):
    base = f"http://127.0.0.1:{loopback_llm.port}"
    assert list_ollama_models(base) == ["ollama/llama3:latest", "ollama/qwen2.5:7b"]
    loopback_llm.ollama_models = []
    assert list_ollama_models(base) == []


def test_list_ollama_models_without_a_server_is_empty():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert list_ollama_models(f"http://127.0.0.1:{port}", timeout=0.2) == []


def test_loopback_serves_deterministic_embeddings(loopback_llm):
    import litellm  # noqa: F401 - already imported by the client

    resp = import_litellm().embedding(
        model="openai/text-embedding-3-small", input=["a", "b", "a"], api_base=loopback_llm.base_url, api_key=KEY
    )
    vecs = [d["embedding"] for d in resp.data]
    assert len(vecs) == 3 and len(vecs[0]) == 8
    assert vecs[0] == vecs[2] and vecs[0] != vecs[1]
