"""The `LLM` implementation over litellm: any provider litellm knows, plus a persistent cache.

    client = LiteLLMClient("openai/gpt-4o-mini", api_key=key, cache=ResponseCache(ws / "llm_cache.sqlite"))
    c = client.complete([{"role": "user", "content": "..."}])   # -> Completion

Model strings are litellm's (`openai/...`, `anthropic/...`, `gemini/...`, `azure/...`,
`ollama/...`, `hosted_vllm/...`); `api_base` points any of them at an OpenAI-compatible server.

The API key is held in memory only. It is never part of the cache key, never logged, and it is
scrubbed from every reply and error message, because providers sometimes echo the request back.
Every request goes through `engine.llm.litellm_call.call_litellm`, the trust boundary: the
server's environment keys only reach endpoints the operator configured.
litellm is imported on the first call: importing it takes seconds and most commands never need it.
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import time
import urllib.request
from pathlib import Path
from typing import Any

from engine.llm import deadline
from engine.llm.base import Completion, LLMError
from engine.llm.cache import ResponseCache
from engine.llm.cached import CachedLLM

# The shared door to litellm (trust boundary, scrubbing); re-exported here for older imports.
from engine.llm.litellm_call import EndpointPolicy, call_litellm, import_litellm, scrub
from engine.llm.litellm_call import env_secrets as _env_secrets  # noqa: F401

log = logging.getLogger(__name__)


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "unknown provider"


class LiteLLMClient(CachedLLM):
    """Chat completions through litellm with retries, backoff, cost accounting and a cache.

    Retried: timeouts, 429, 5xx, malformed response bodies, an unreachable server (twice), and an
    empty reply. A reply cut by `max_tokens` is retried once with twice the budget. Not retried:
    authentication failures, an unknown model or provider, and other rejected requests; these
    raise `LLMError` at once, naming the provider and what to check.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str = "",
        api_key: str | None = None,
        cache: ResponseCache | Path | str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 20.0,
        extra_params: dict[str, Any] | None = None,
        policy: EndpointPolicy | None = None,
    ):
        if not model.strip():
            raise ValueError("a model string is required (e.g. openai/gpt-4o-mini)")
        self.model = model.strip()
        self.api_base = api_base.strip()
        self._api_key = api_key or None  # memory only
        self.cache_error = ""
        if isinstance(cache, (str, Path)):
            try:
                cache = ResponseCache(cache)
            except (sqlite3.Error, OSError) as exc:
                # a damaged cache file must not stop the run; it only costs the cache hits
                self.cache_error = f"LLM response cache {cache} unusable ({exc}); running without it"
                log.warning(self.cache_error)
                cache = None
        self.cache = cache
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.extra_params = dict(extra_params or {})
        self.policy = policy  # None: the process's policy (engine.llm.litellm_call.set_policy)

    def __repr__(self) -> str:  # never show the key
        return f"LiteLLMClient(model={self.model!r}, api_base={self.api_base!r})"

    # -- the LLM protocol: CachedLLM.complete around these two ----------------------------------
    def _params(self, temperature: float, max_tokens: int | None, json_mode: bool) -> dict[str, Any]:
        # extra provider params decide the reply too; anything named like a key stays out
        extra = {k: v for k, v in self.extra_params.items() if "key" not in k.lower()}
        return {**super()._params(temperature, max_tokens, json_mode), **extra}

    def _forward(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        return self._with_retries(messages, params["temperature"], params["max_tokens"], params["json_mode"])

    def _with_retries(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int | None, json_mode: bool
    ) -> Completion:
        """The provider's reply after the retries the class docstring lists; every answered
        attempt is billed, so tokens and cost add up over the attempts."""
        prompt_tokens = completion_tokens = 0
        cost: float | None = 0.0
        latency = 0.0
        budget = max_tokens
        bumped = False
        text = ""
        attempt = 0
        while True:
            attempt += 1
            t0 = time.perf_counter()
            resp, err, retry_after = self._attempt(messages, temperature, budget, json_mode, attempt)
            latency += time.perf_counter() - t0
            if err is not None:
                limit = min(self.max_attempts, 2) if err.kind == "unreachable" else self.max_attempts
                if not err.retryable or attempt >= limit:
                    err.attempts = attempt  # type: ignore[attr-defined]
                    # raised outside the except block: no __context__ pointing at the original
                    raise err
                self._sleep(attempt, retry_after)
                continue
            text, finish, p, c = _unpack(resp)
            # every answered request is billed, including an empty one we retry
            prompt_tokens += p
            completion_tokens += c
            one = self._cost(resp)
            cost = None if (cost is None or one is None) else cost + one
            if not text.strip() and attempt < self.max_attempts:
                self._sleep(attempt)
                continue
            if finish == "length" and budget is not None and not bumped and attempt < self.max_attempts:
                budget, bumped = budget * 2, True
                continue
            break
        return Completion(
            text=text,
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            latency=latency,
            cached=False,
            attempts=attempt,
        )

    # -- internals ---------------------------------------------------------------------------
    def _attempt(
        self, messages, temperature, budget, json_mode, attempt: int
    ) -> tuple[Any, LLMError | None, float | None]:
        """One provider request: (response, None, None), or (None, the classified error, the
        provider's retry-after seconds when it sent one)."""
        try:
            timeout = deadline.clamp(self.timeout)  # the question's deadline bounds every attempt
        except LLMError as exc:
            exc.attempts = attempt - 1  # type: ignore[attr-defined]
            raise exc from None
        try:
            return self._call(messages, temperature, budget, json_mode, timeout), None, None
        except LLMError as exc:  # refused at the trust boundary: nothing was sent
            return None, exc, None
        except Exception as exc:  # noqa: BLE001 - every provider error is classified
            err, retry_after = self._classify(exc, attempt), _retry_after(exc)
            del exc  # the provider's exception holds the request, key header included
            return None, err, retry_after

    def _call(self, messages, temperature, max_tokens, json_mode, timeout: float | None = None):
        kw: dict[str, Any] = {
            "messages": messages,
            "temperature": temperature,
            "timeout": timeout or self.timeout,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
        }  # a provider without e.g. response_format still answers
        if max_tokens is not None:
            kw["max_tokens"] = max_tokens
        if json_mode:
            kw["response_format"] = {"type": "json_object"}
        kw.update({k: v for k, v in self.extra_params.items() if k not in ("api_key", "model")})
        return call_litellm(
            "completion", model=self.model, api_base=self.api_base, api_key=self._api_key, policy=self.policy, **kw
        )

    def probe(self) -> tuple[bool, str]:
        """One minimal request (no cache, no retries): (ok, one line for the Settings page)."""
        try:
            self._call([{"role": "user", "content": "ping"}], 0.0, 1, False)
        except LLMError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001
            err = self._classify(exc, 1)
            what = {
                "auth": "authentication failed",
                "not_found": "model not found",
                "unreachable": "unreachable",
                "timeout": "no reply in time",
            }.get(err.kind, "request failed")
            return False, f"{what}: {err}"
        return True, f"{self.model} answered" + (f" at {self.api_base}" if self.api_base else "")

    def _sleep(self, attempt: int, retry_after: float | None = None) -> None:
        delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        if retry_after is not None:
            delay = min(self.max_backoff, max(delay, retry_after))
        d = deadline.current()
        if d is not None:  # never sleep past the deadline: the next attempt reports it instead
            delay = min(delay, max(0.0, d.remaining()))
        # jitter keeps many worker threads from retrying in lockstep
        time.sleep(delay * random.uniform(0.5, 1.0))

    def _cost(self, resp) -> float | None:
        """Dollars from litellm's price table; None when the model has no price there."""
        # litellm already priced the reply while returning it; reading that saves a second lookup
        hidden = getattr(resp, "_hidden_params", None) or {}
        if isinstance(hidden, dict) and isinstance(hidden.get("response_cost"), (int, float)):
            return float(hidden["response_cost"])
        litellm = import_litellm()
        try:
            value = litellm.completion_cost(completion_response=resp, model=self.model)
        except Exception:  # noqa: BLE001 - "model isn't mapped yet" and friends
            return None
        return float(value) if value is not None else None

    def _classify(self, exc: Exception, attempt: int) -> LLMError:
        """The provider's exception as an `LLMError`: its kind, whether a retry may help, and a
        message naming the provider and what to check (the key scrubbed out)."""
        provider = provider_of(self.model)
        where = (
            f"{provider} model {self.model!r}" if "/" in self.model else f"model {self.model!r} (no provider prefix)"
        ) + (f" at {self.api_base}" if self.api_base else "")
        detail = " ".join(f"{type(exc).__name__}: {str(exc)[:400]}".split())  # one line for logs and the CLI
        detail = scrub(detail, (self._api_key or "",) + _env_secrets())
        case = _case_of(exc, import_litellm().exceptions)
        kind, retryable, template = _CASES[case]
        what = template.format(
            provider=provider.upper(),
            timeout=self.timeout,
            tries=f"after {attempt} attempt{'s' if attempt > 1 else ''}",
            target=self.api_base or f"the {provider} API",
        )
        return LLMError(f"{where}: {what} [{detail}]", kind=kind, retryable=retryable)


#: case -> (LLMError kind, retryable, message after "<provider model>: "), in `_case_of`'s order
_CASES: dict[str, tuple[str, bool, str]] = {
    "auth": (
        "auth",
        False,
        "authentication failed. Check the API key (entered, or the provider's environment variable such as "
        "{provider}_API_KEY).",
    ),
    "not_found": (
        "not_found",
        False,
        "unknown model or provider. Check the model string: it needs a provider prefix such as openai/, "
        "anthropic/, gemini/, azure/, ollama/ or hosted_vllm/, and a model name the provider serves.",
    ),
    "timeout": ("timeout", True, "no reply within {timeout:g}s {tries}."),
    "rate_limit": ("rate_limit", True, "rate limited {tries}. Lower the concurrency or wait."),
    "unreachable": (
        "unreachable",
        True,
        "server unreachable {tries}. Check that {target} is running and reachable from this machine.",
    ),
    "context_window": ("bad_request", False, "the prompt is longer than the model's context window."),
    "server": ("server", True, "provider error {tries}."),
    "bad_request": ("bad_request", False, "the provider rejected the request."),
    "error": ("error", False, "call failed."),
}


def _case_of(exc: Exception, ex: Any) -> str:
    """Which of `_CASES` a provider exception is (`ex`: litellm.exceptions); the first test that
    matches wins, so the order matters (an APIConnectionError that cannot connect is "unreachable",
    any other one a server error)."""
    low = str(exc).lower()
    if isinstance(exc, (ex.AuthenticationError, ex.PermissionDeniedError)):
        return "auth"
    if (
        "llm provider not provided" in low
        or isinstance(exc, ex.NotFoundError)
        or ("model" in low and "not found" in low)
    ):
        return "not_found"
    if isinstance(exc, ex.Timeout):
        return "timeout"
    if isinstance(exc, ex.RateLimitError):
        return "rate_limit"
    if (
        "connection error" in low
        or "connection refused" in low
        or isinstance(exc, ex.APIConnectionError)
        and ("connect" in low)
    ):
        return "unreachable"
    if isinstance(exc, ex.ContextWindowExceededError):
        return "context_window"
    status = getattr(exc, "status_code", None)
    if isinstance(
        exc, (ex.InternalServerError, ex.ServiceUnavailableError, ex.BadGatewayError, ex.APIConnectionError)
    ) or (isinstance(status, int) and status >= 500):
        return "server"
    if isinstance(exc, ex.BadRequestError):
        return "bad_request"
    return "error"


def _unpack(resp) -> tuple[str, str, int, int]:
    choice = resp.choices[0] if getattr(resp, "choices", None) else None
    text = (choice.message.content or "") if choice is not None and choice.message is not None else ""
    finish = (getattr(choice, "finish_reason", "") or "") if choice is not None else ""
    usage = getattr(resp, "usage", None)
    p = int(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0
    c = int(getattr(usage, "completion_tokens", 0) or 0) if usage else 0
    return text, finish, p, c


def _retry_after(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


def list_ollama_models(base: str = "http://127.0.0.1:11434", timeout: float = 0.5) -> list[str]:
    """Models a local Ollama serves, as litellm model strings (`ollama/llama3:latest`); [] if none.

    Never raises: no Ollama running is the common case, not an error.
    """
    try:
        with urllib.request.urlopen(base.rstrip("/") + "/api/tags", timeout=timeout) as r:
            data = json.loads(r.read().decode("utf-8"))
    except Exception:  # noqa: BLE001
        return []
    names = [m.get("name") or m.get("model") for m in data.get("models", []) if isinstance(m, dict)]
    return [f"ollama/{n}" for n in names if n]
