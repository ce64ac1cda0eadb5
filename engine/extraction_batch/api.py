"""The OpenAI-compatible batch endpoints (files + batches) through litellm's wrappers
(`create_file`, `create_batch`, `retrieve_batch`, `list_batches`, `file_content`), each request
through the one door every provider request passes (engine.llm.litellm_call.call_litellm):

* the endpoint policy is checked before every request: a key from the server's environment goes
  only to the provider's default endpoint or an API base the operator configured; any other base
  needs a key passed in (`api_key`), else the request is refused before anything is sent;
* each request is bounded in time; the key is held in memory only and is scrubbed (with every
  key-shaped value of the environment) from error messages and from downloaded output files.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from typing import Any

from engine.llm.base import LLMError
from engine.llm.litellm_call import EndpointPolicy, call_litellm, env_secrets, normalize_base, scrub

#: providers whose default endpoint serves the batch API (others need an explicit API base)
DEFAULT_BASES = {"openai": "https://api.openai.com/v1"}
#: a batch in one of these states will not change again
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
_KINDS = {401: "auth", 403: "auth", 404: "not_found", 429: "rate_limit"}


@dataclass(frozen=True)
class BatchInfo:
    id: str
    status: str
    input_file_id: str
    output_file_id: str = ""
    error_file_id: str = ""
    errors: str = ""  # batch-level errors (why a batch failed validation)

    @classmethod
    def of(cls, data: dict[str, Any]) -> BatchInfo:
        errs = (data.get("errors") or {}).get("data") or []
        return cls(
            id=str(data.get("id") or ""),
            status=str(data.get("status") or ""),
            input_file_id=str(data.get("input_file_id") or ""),
            output_file_id=str(data.get("output_file_id") or ""),
            error_file_id=str(data.get("error_file_id") or ""),
            errors="; ".join(str(e.get("message", e)) for e in errs if isinstance(e, dict))[:500],
        )


def wire_model(model: str) -> str:
    """`openai/gpt-4o-mini` -> `gpt-4o-mini`: the model name the endpoint itself knows."""
    return model.split("/", 1)[1] if "/" in model else model


class BatchAPI:
    """Files and batches of one OpenAI-compatible endpoint for `model`."""

    def __init__(
        self,
        model: str,
        api_base: str = "",
        api_key: str | None = None,
        *,
        policy: EndpointPolicy | None = None,
        timeout: float = 120.0,
        attempts: int = 3,
    ):
        provider = model.split("/", 1)[0].lower() if "/" in model else "openai"
        self.base = normalize_base(api_base) or DEFAULT_BASES.get(provider, "")
        if not self.base:
            raise LLMError(
                f"{model}: batch extraction needs an OpenAI-compatible batch endpoint; give --api-base "
                "(the server's /v1 URL) or use an openai/ model",
                kind="bad_request",
            )
        self.model, self.api_base, self.policy = model, api_base, policy
        self._session_key = api_key or None
        self._key = api_key or os.environ.get(f"{provider.upper()}_API_KEY") or ""
        self.timeout, self.attempts = timeout, max(1, attempts)

    def __repr__(self) -> str:  # never show the key
        return f"BatchAPI(model={self.model!r}, base={self.base!r})"

    def _scrub(self, text: str) -> str:
        return scrub(" ".join(text.split()), (self._key,) + env_secrets())

    def _call(self, fn: str, *, attempts: int | None = None, **kw: Any) -> Any:
        """`litellm.<fn>` through the one door (engine.llm.litellm_call.call_litellm: the endpoint
        policy, the time bound), retried here (never inside the SDK, see `create`) on rate limits and
        server errors, errors classified and scrubbed."""
        tries = attempts or self.attempts
        for attempt in range(1, tries + 1):
            try:
                return call_litellm(
                    fn,
                    model=self.model,
                    api_base=self.api_base,
                    api_key=self._session_key,
                    policy=self.policy,
                    custom_llm_provider="openai",  # the OpenAI-compatible files + batches endpoints
                    timeout=self.timeout,
                    max_retries=0,  # the SDK would repeat a create whose reply was lost: a second batch
                    **kw,
                )
            except LLMError:
                raise  # refused at the trust boundary: nothing was sent
            except Exception as exc:  # noqa: BLE001 - every provider error is classified
                err = self._classify(fn, exc)
                del exc  # the provider's exception holds the request, key header included
            if not err.retryable or attempt == tries:
                raise err
            time.sleep(min(10.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _classify(self, fn: str, exc: Exception) -> LLMError:
        status = getattr(exc, "status_code", None)
        text = f"{fn} at {self.base}: {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(status, int):
            low = text.lower()
            kind = "unreachable" if "connect" in low else ("timeout" if "timeout" in low else "error")
            return LLMError(self._scrub(text), kind=kind, retryable=kind == "timeout")
        kind = _KINDS.get(status, "server" if status >= 500 else "bad_request")
        return LLMError(self._scrub(text), kind=kind, retryable=kind in ("rate_limit", "server"))

    def upload(self, jsonl: bytes, name: str = "extraction.jsonl") -> str:
        """Upload a batch input file (purpose "batch"); returns its file id."""
        return str(self._call("create_file", file=(name, jsonl), purpose="batch").id)

    def create(self, input_file_id: str, metadata: dict[str, str] | None = None) -> BatchInfo:
        """Create the batch of `input_file_id`. A failed create may have made the batch all the same
        (the reply lost, a timeout): before trying again, the batch list is asked for one made
        from this file, so a retry never makes a second batch (a second bill)."""
        for attempt in range(1, self.attempts + 1):
            try:
                made = self._call(
                    "create_batch",
                    attempts=1,
                    input_file_id=input_file_id,
                    endpoint="/v1/chat/completions",
                    completion_window="24h",
                    metadata=metadata or {},
                )
                return BatchInfo.of(_as_dict(made))
            except LLMError as err:
                if err.kind == "auth":  # refused, here or by the provider: nothing was made
                    raise
                found = self.find_by_input(input_file_id)
                if found is not None:
                    return found
                if not err.retryable or attempt == self.attempts:
                    raise
            time.sleep(min(10.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def retrieve(self, batch_id: str) -> BatchInfo:
        info = BatchInfo.of(_as_dict(self._call("retrieve_batch", batch_id=batch_id)))
        return replace(info, errors=self._scrub(info.errors))

    def find_by_input(self, input_file_id: str) -> BatchInfo | None:
        """The batch created from `input_file_id`, if any (how a run killed between creating a
        batch and storing its id finds it again instead of creating a second one)."""
        after = ""
        while True:
            kw: dict[str, Any] = {"limit": 100, **({"after": after} if after else {})}
            page = _as_dict(self._call("list_batches", **kw))
            items = [_as_dict(b) for b in page.get("data") or []]
            for item in items:
                if item.get("input_file_id") == input_file_id:
                    return BatchInfo.of(item)
            if not page.get("has_more") or not items:
                return None
            after = str(items[-1].get("id") or "")

    def content(self, file_id: str) -> list[dict[str, Any]]:
        """The JSON lines of an output or error file, with key-shaped text scrubbed out (an endpoint
        may echo a request's Authorization header, as chat replies are scrubbed for)."""
        raw = self._call("file_content", file_id=file_id).content
        text = scrub(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw), (self._key,) + env_secrets())
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _as_dict(obj: Any) -> dict[str, Any]:
    """litellm's reply objects (openai SDK types) as plain dicts."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dict(dump())
    return {k: getattr(obj, k) for k in ("id", "status", "data", "has_more") if hasattr(obj, k)}
