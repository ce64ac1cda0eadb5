"""The one door every provider request goes through: the endpoint trust boundary.

Every litellm call that can reach a provider (chat completion, embedding, rerank) is made by
`call_litellm`, which first applies an `EndpointPolicy`:

* Credentials from the server's environment (`OPENAI_API_KEY` and friends, which litellm reads by
  itself) go only to endpoints the operator chose: the provider's default endpoint for the
  model (no `api_base`), or an API base the operator listed (`TRIPLET_LENS_API_BASES`, plus
  `TRIPLET_LENS_API_BASE`; see `engine.config.AppSettings`).
* Any other `api_base` must come with a key of the caller's own (a key typed into the session).
  Without one the request is refused before anything is sent: `LLMError(kind="auth")`, fatal,
  never retried.

Why here and not in the Settings page: a page, a saved run, a query parameter or a future CLI
path could all name an endpoint; all of them end in this function, so none can bypass it.

The app uses `strict_policy(settings)`. The CLI runs for a local user who owns both the
environment and the endpoint, so it installs `local_user_policy()` (any base, environment keys
allowed) for the duration of a command; `python -m engine --help` says so. Python code that
installs nothing gets the strict policy over the operator's variables.

A missing key is also caught here: with no session key, no api_base and no provider variable in
the environment, the request is refused at once ("no API key") instead of being retried as the
provider's 500 that litellm reports for it.
"""
from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Iterator

from engine.llm.base import LLMError

_import_lock = threading.Lock()
_policy_lock = threading.Lock()
_process_policy: "EndpointPolicy | None" = None

#: Providers that sign requests with environment credentials (AWS, Google service accounts) even
#: when an `api_key` is passed: an untrusted base is refused for them whatever the session holds.
ENV_SIGNED_PROVIDERS = frozenset({"bedrock", "bedrock_converse", "sagemaker", "sagemaker_chat", "vertex_ai",
                                  "vertex_ai_beta", "watsonx"})


def import_litellm():
    """litellm, imported with the offline price table and without its console chatter.

    The module is looked up on every call (cheap once loaded) rather than kept here, so a test
    that puts a stand-in into `sys.modules` for a while gets the stand-in and nothing else keeps it.
    """
    with _import_lock:
        # the bundled price table: no network fetch at import time, reproducible costs
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        if not getattr(litellm, "_triplet_lens_quiet", False):
            litellm.suppress_debug_info = True
            litellm.telemetry = False
            litellm._triplet_lens_quiet = True
    return litellm


def normalize_base(base: str) -> str:
    """Compare endpoints by scheme, lower-cased host[:port] and path without trailing slash."""
    base = (base or "").strip()
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([^?#]*)", base)
    if not m:
        return base.rstrip("/")
    scheme, host, path = m.group(1).lower(), m.group(2).lower(), m.group(3).rstrip("/")
    return f"{scheme}://{host}{path}"


@dataclass(frozen=True)
class EndpointPolicy:
    """Which endpoints may receive credentials taken from the server's environment."""

    allowed_bases: frozenset[str] = frozenset()
    """Normalized API bases the operator listed; the provider's default endpoint is always allowed."""

    trust_any_base: bool = False
    """True only for a local user (the CLI): their environment, their endpoint."""

    label: str = "strict"
    """Shown in refusals and docs: `strict` (app, Python default) or `local user` (CLI)."""

    def allows_env_credentials(self, api_base: str) -> bool:
        if self.trust_any_base or not (api_base or "").strip():
            return True
        return normalize_base(api_base) in self.allowed_bases

    def check(self, model: str, api_base: str, has_session_key: bool) -> None:
        """Raise a fatal `LLMError(kind="auth")` when this request must not be sent."""
        base = (api_base or "").strip()
        provider = model.split("/", 1)[0] if "/" in model else ""
        if not base or self.allows_env_credentials(base):
            return
        if provider in ENV_SIGNED_PROVIDERS:
            raise LLMError(f"refused: {provider} signs requests with the server's credentials, so it may only use "
                           f"the endpoints the operator listed (TRIPLET_LENS_API_BASES); {base} is not one of them",
                           kind="auth")
        if not has_session_key:
            raise LLMError(f"refused: the API base {base} is not one the operator allowed (TRIPLET_LENS_API_BASES), "
                           "so the server's API key is not sent there; enter your own API key for it in Settings",
                           kind="auth")


def strict_policy(settings: Any = None) -> EndpointPolicy:
    """The app's policy: the provider defaults plus the bases the operator listed in `settings`."""
    if settings is None:
        from engine.config import AppSettings

        settings = AppSettings.from_env()
    bases = set(getattr(settings, "api_bases", ()) or ())
    if getattr(settings, "api_base", ""):
        bases.add(settings.api_base)
    return EndpointPolicy(allowed_bases=frozenset(normalize_base(b) for b in bases if b.strip()), label="strict")


def local_user_policy() -> EndpointPolicy:
    """The CLI's policy: one local user, their own environment and their own endpoints."""
    return EndpointPolicy(trust_any_base=True, label="local user")


def current_policy() -> EndpointPolicy:
    """The policy installed for this process (the CLI's), else the strict one from the environment."""
    with _policy_lock:
        installed = _process_policy
    return installed if installed is not None else strict_policy()


@contextlib.contextmanager
def using_policy(policy: EndpointPolicy) -> Iterator[EndpointPolicy]:
    """Install `policy` for calls that name none, restoring the previous one on exit."""
    global _process_policy
    with _policy_lock:
        previous, _process_policy = _process_policy, policy
    try:
        yield policy
    finally:
        with _policy_lock:
            _process_policy = previous


def env_secrets() -> tuple[str, ...]:
    """Values of the environment's credential variables, to scrub from anything shown or stored."""
    return tuple(v for k, v in os.environ.items()
                 if (k.endswith("_API_KEY") or k.endswith("_TOKEN") or k.endswith("_SECRET")
                     or k.endswith("_ACCESS_KEY") or k.endswith("_SECRET_ACCESS_KEY")) and len(v) >= 8)


# Long random-looking tokens that look like credentials, scrubbed even when we were not told them.
_SECRET_PATTERNS = [re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=]{8,}"),
                    re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{6,}")]


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove the given secrets and anything shaped like an API key from `text`."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    for pat in _SECRET_PATTERNS:
        text = pat.sub(lambda m: (m.group(1) if m.groups() else "") + "***", text)
    return text


def _missing_env_key(litellm, model: str, kw: dict[str, Any]) -> str:
    """The provider variable a default-endpoint request would need but the environment lacks."""
    if kw.get("api_key") or kw.get("api_base") or kw.get("base_url"):
        return ""
    try:
        report = litellm.validate_environment(model)
    except Exception:  # noqa: BLE001 - an unknown provider is reported by the call itself
        return ""
    missing = [k for k in report.get("missing_keys", []) if k.endswith(("_KEY", "_TOKEN", "_SECRET", "_KEY_ID"))]
    if report.get("keys_in_environment") or not missing:
        return ""
    return " or ".join(missing)


def call_litellm(op: str, policy: EndpointPolicy | None = None, **kw: Any) -> Any:
    """`litellm.<op>(**kw)` after the policy check; `op` is completion, embedding or rerank.

    Raises `LLMError(kind="auth")` (fatal) before any byte is sent when the policy refuses the
    endpoint or no key exists for the provider's default endpoint.
    """
    if op not in ("completion", "embedding", "rerank"):
        raise ValueError(f"call_litellm: unknown operation {op!r}")
    model = str(kw.get("model") or "")
    base = str(kw.get("api_base") or kw.get("base_url") or "")
    (policy or current_policy()).check(model, base, has_session_key=bool(kw.get("api_key")))
    litellm = import_litellm()
    missing = _missing_env_key(litellm, model, kw)
    if missing:
        raise LLMError(f"no API key for {model!r}: set {missing} in the server's environment or enter a key in "
                       "Settings", kind="auth")
    return getattr(litellm, op)(**kw)
