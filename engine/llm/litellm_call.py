"""The one door to litellm: every completion, embedding and rerank request passes `call_litellm`.

It enforces the trust boundary of a shared deployment. Credentials that come from the server's
environment (OPENAI_API_KEY and friends, which litellm reads itself) are sent only to endpoints the
operator configured: the provider's default endpoint for the model (no API base), or an API base
the operator listed (`TRIPLET_LENS_API_BASES`, `TRIPLET_LENS_API_BASE`) or the command line's user
named with a flag (engine.llm.endpoints holds that rule). A request naming any other API base must
bring its own key (typed into the session); with none it is refused here, before anything leaves
the machine. Endpoints read from disk never widen the rule (`endpoints.check_stored`).

It bounds each request in wall-clock time and size: the call runs in a worker thread the caller
waits for at most the request's timeout (already cut to the question's deadline), so a provider
that drips its reply a byte at a time (each byte resetting the HTTP read timeout) or resets the
connection mid-body cannot hold a question past its deadline; the worker is abandoned and its result
dropped. A reply longer than the reply cap (`TRIPLET_LENS_MAX_REPLY_MB`, default 4 MB) is refused
with an error naming the cap, so it never reaches a trace.

It also scrubs: the session's key and every key-shaped value of the environment are removed from
replies (a hostile or buggy endpoint may echo the request's Authorization header) and from errors.
"""

from __future__ import annotations

import contextvars
import os
import re
import threading
from typing import Any

from engine.llm import deadline
from engine.llm.base import LLMError
from engine.llm.endpoints import (  # the trust rule lives there; these names stay importable from here
    AMBIENT_CREDENTIAL_PROVIDERS,
    EndpointPolicy,
    current_policy,
    local_user_policy,
    normalize_base,
    set_policy,
)

__all__ = [
    "AMBIENT_CREDENTIAL_PROVIDERS",
    "EndpointPolicy",
    "call_litellm",
    "current_policy",
    "env_secrets",
    "import_litellm",
    "local_user_policy",
    "normalize_base",
    "scrub",
    "set_policy",
]

#: the longest reply accepted, in bytes (UTF-8 text of the completion); `set_reply_cap` changes it
DEFAULT_REPLY_CAP = 4 * 1024 * 1024
_reply_cap = DEFAULT_REPLY_CAP
#: how long past a request's timeout the worker is waited for (the HTTP client's own timeout,
#: which classifies a plain hang more precisely, usually fires first)
GRACE = 0.5


def set_reply_cap(limit_bytes: int) -> int:
    """Set the process's reply size cap (the session does, from AppSettings); returns the old one."""
    global _reply_cap
    previous, _reply_cap = _reply_cap, max(1, int(limit_bytes))
    return previous


_import_lock = threading.Lock()


def import_litellm():
    """litellm, set up once with the offline price table and without its console chatter. The
    module comes from `sys.modules` at every call, so a stand-in a test installs is honoured."""
    with _import_lock:
        # the bundled price table: no network fetch at import time, reproducible costs
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        if not getattr(litellm, "_triplet_lens_ready", False):
            litellm.suppress_debug_info = True
            litellm.telemetry = False
            litellm._triplet_lens_ready = True
    return litellm


# Long random-looking tokens that look like credentials, scrubbed even when we were not told them.
_SECRET_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=]{8,}"),
    re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{6,}"),
]


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove the given secrets and anything shaped like an API key from `text`."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    for pat in _SECRET_PATTERNS:
        text = pat.sub(lambda m: (m.group(1) if m.groups() else "") + "***", text)
    return text


def env_secrets() -> tuple[str, ...]:
    """Keys litellm may read from the environment itself: scrubbed wherever text comes back."""
    return tuple(
        v
        for k, v in os.environ.items()
        if (k.endswith("_API_KEY") or k.endswith("_TOKEN") or k.endswith("_SECRET")) and len(v) >= 8
    )


def missing_key(model: str, api_base: str, api_key: str | None) -> str:
    """The environment variable a provider's default endpoint needs and lacks ('' if none): a
    request without it would only fail after retries, so it is refused at once instead."""
    if api_key or api_base:
        return ""
    try:
        env = import_litellm().validate_environment(model=model)
    except Exception:  # noqa: BLE001 - unknown providers are judged by the request itself
        return ""
    if isinstance(env, dict) and not env.get("keys_in_environment", True):
        return ", ".join(env.get("missing_keys") or []) or "the provider's API key"
    return ""


def call_litellm(
    fn: str,
    *,
    model: str,
    api_base: str = "",
    api_key: str | None = None,
    policy: EndpointPolicy | None = None,
    **kw: Any,
):
    """`litellm.<fn>(model=..., **kw)` behind the trust boundary, with the reply scrubbed.
    Raises LLMError(kind="auth") before sending anything when the policy refuses the endpoint or
    a key is missing; provider exceptions pass through for the caller to classify (scrub them)."""
    for alias in ("base_url", "api_base"):  # an endpoint smuggled in extra params counts as the base
        api_base = kw.pop(alias, None) or api_base
    (policy or current_policy()).check(model, api_base, api_key)
    if fn == "completion" and (needed := missing_key(model, api_base, api_key)):
        raise LLMError(
            f"{model}: no API key. Set {needed} in the server's environment or enter a key on the Settings page",
            kind="auth",
        )
    litellm = import_litellm()
    if api_base:
        kw["api_base"] = api_base
    if api_key:
        kw["api_key"] = api_key
    resp = _bounded(lambda: getattr(litellm, fn)(model=model, **kw), kw.get("timeout"))
    secrets = ((api_key or ""),) + env_secrets()
    contents = [getattr(c, "message", None) for c in getattr(resp, "choices", None) or ()]
    size = sum(len(m.content.encode("utf-8")) for m in contents if m is not None and isinstance(m.content, str))
    if size > _reply_cap:
        del resp
        raise LLMError(
            f"{model}: the reply is {size / 1048576:.1f} MB, over the {_reply_cap / 1048576:g} MB limit of one "
            "reply (TRIPLET_LENS_MAX_REPLY_MB); it was not used",
            kind="too_large",
        )
    for msg in contents:
        if msg is not None and isinstance(getattr(msg, "content", None), str):
            msg.content = scrub(msg.content, secrets)
    return resp


def _bounded(call, timeout: Any):
    """`call()` in a worker thread, waited for at most `timeout` (cut to the current deadline) plus
    `GRACE`; past that the worker is abandoned (a daemon: its late reply is dropped) and an
    LLMError says why: the deadline's, or a retryable "timeout" when only the request's time ran out."""
    limit = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
    d = deadline.current()
    if d is not None:
        limit = d.remaining() if limit is None else min(limit, d.remaining())
    if limit is None:
        return call()
    box: dict[str, Any] = {}
    done = threading.Event()
    ctx = contextvars.copy_context()

    def work() -> None:
        try:
            box["value"] = ctx.run(call)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="llm-request", daemon=True).start()
    if not done.wait(max(limit, 0.0) + GRACE):
        if d is not None and d.remaining() <= GRACE:
            raise d.error()
        raise LLMError(
            f"no complete reply within {limit:g}s (the reply kept arriving too slowly); the request was abandoned",
            kind="timeout",
            retryable=True,
        )
    if "error" in box:
        err = box.pop("error")
        try:
            raise err
        finally:
            del err
    return box["value"]
