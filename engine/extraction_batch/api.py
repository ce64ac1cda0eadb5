"""The OpenAI-compatible batch endpoints (files + batches) over httpx, behind the same trust
boundary as every other provider request (engine.llm.litellm_call):

* the endpoint policy is checked before every request: a key from the server's environment goes
  only to the provider's default endpoint or an API base the operator configured; any other base
  needs a key passed in (`api_key`), else the request is refused before anything is sent;
* the key travels only in the Authorization header, is held in memory, and is scrubbed (with every
  key-shaped value of the environment) from every error message.

Plain httpx instead of `litellm.create_file`/`create_batch`: the four calls are simple REST, and
this way the API base, the key and the policy are exactly the ones the chat requests use.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from typing import Any

from engine.llm.base import LLMError
from engine.llm.litellm_call import EndpointPolicy, current_policy, env_secrets, normalize_base, scrub

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

    def _request(self, method: str, path: str, **kw: Any):
        import httpx

        (self.policy or current_policy()).check(self.model, self.api_base, self._session_key)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        for attempt in range(1, self.attempts + 1):
            try:
                r = httpx.request(method, self.base + path, headers=headers, timeout=self.timeout, **kw)
            except httpx.HTTPError as exc:
                err = LLMError(
                    self._scrub(f"{self.base}{path}: unreachable ({type(exc).__name__}: {exc})"),
                    kind="unreachable",
                )
            else:
                if r.status_code < 400:
                    return r
                kind = _KINDS.get(r.status_code, "server" if r.status_code >= 500 else "bad_request")
                err = LLMError(
                    self._scrub(f"{method} {self.base}{path}: HTTP {r.status_code}: {r.text[:300]}"),
                    kind=kind,
                    retryable=kind in ("rate_limit", "server"),
                )
            if not err.retryable or attempt == self.attempts:
                raise err
            time.sleep(min(10.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def upload(self, jsonl: bytes, name: str = "extraction.jsonl") -> str:
        """Upload a batch input file (purpose "batch"); returns its file id."""
        r = self._request("POST", "/files", data={"purpose": "batch"}, files={"file": (name, jsonl)})
        return str(r.json()["id"])

    def create(self, input_file_id: str, metadata: dict[str, str] | None = None) -> BatchInfo:
        body = {
            "input_file_id": input_file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": metadata or {},
        }
        return BatchInfo.of(self._request("POST", "/batches", json=body).json())

    def retrieve(self, batch_id: str) -> BatchInfo:
        info = BatchInfo.of(self._request("GET", f"/batches/{batch_id}").json())
        return replace(info, errors=self._scrub(info.errors))

    def find_by_input(self, input_file_id: str) -> BatchInfo | None:
        """The batch created from `input_file_id`, if any (how a run killed between creating a
        batch and storing its id finds it again instead of creating a second one)."""
        after = ""
        while True:
            page = self._request("GET", "/batches", params={"limit": 100, **({"after": after} if after else {})}).json()
            for item in page.get("data") or []:
                if item.get("input_file_id") == input_file_id:
                    return BatchInfo.of(item)
            if not page.get("has_more") or not page.get("data"):
                return None
            after = str(page["data"][-1].get("id") or "")

    def content(self, file_id: str) -> list[dict[str, Any]]:
        """The JSON lines of an output or error file, with key-shaped text scrubbed out (an endpoint
        may echo a request's Authorization header, as chat replies are scrubbed for)."""
        text = scrub(self._request("GET", f"/files/{file_id}/content").text, (self._key,) + env_secrets())
        return [json.loads(line) for line in text.splitlines() if line.strip()]
