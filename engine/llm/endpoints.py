"""Which endpoints this process may talk to: the one trust rule for outbound requests.

An endpoint is *trusted* when the person running the engine named it: a flag they typed
(`--api-base`, `--embedder-api-base`, `--vectors milvus://...`), the environment
(`TRIPLET_LENS_API_BASE`, `TRIPLET_LENS_API_BASES`), or the app's settings as its operator set them.
Credentials from the environment (OPENAI_API_KEY and friends, which litellm reads itself, or the
Milvus token) go only to a trusted endpoint or to a provider's own default endpoint (no API base).

Everything the engine reads from disk is data, never a reason to trust: a corpus's stored settings
(`embedder_api_base`, a Milvus server in `vectors`), a backup someone handed over, a trace given to
`rerun`, an eval folder that is resumed. A stored endpoint is used only when it is trusted already;
otherwise `check_stored` refuses it before anything is sent, naming the field and how to allow it.
Refused even without a key: a request to a stranger's server carries the user's questions and
documents too. A stored model name or embedder spec without an endpoint goes to the provider's own
default endpoint, where the user's key for that provider already goes.

`EndpointPolicy.check` applies the rule to every litellm request (engine.llm.litellm_call); the app
also lets a visitor type an API base of their own, which then needs the visitor's own key.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from engine.llm.base import LLMError

#: litellm providers that authenticate with the machine's cloud credentials, not an API key.
AMBIENT_CREDENTIAL_PROVIDERS = frozenset({"bedrock", "sagemaker", "vertex_ai", "vertex_ai_beta", "watsonx"})
#: where a person lists the endpoints they trust (besides the flags of one command)
TRUST_ENV = "TRIPLET_LENS_API_BASES"


def normalize_base(url: str) -> str:
    """`HTTP://Host:8000/v1/` -> `http://host:8000/v1`, `milvus://h:19530` -> `http://h:19530`:
    how endpoints are compared."""
    url = (url or "").strip()
    if not url:
        return ""
    if url.lower().startswith("milvus://"):
        url = "http://" + url[len("milvus://") :]
    parts = urlsplit(url if "://" in url else "http://" + url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}{parts.path.rstrip('/')}"


class UntrustedEndpoint(LLMError, ValueError):
    """An endpoint read from disk that nobody running this process named; nothing was sent to it."""

    def __init__(self, message: str):
        super().__init__(message, kind="auth")


@dataclass(frozen=True)
class EndpointPolicy:
    allowed_bases: frozenset[str] = frozenset()
    """Endpoints (normalized) the person running the engine named: environment credentials may go there."""
    local_user: bool = False
    """The command line: the machine's own user runs it (only changes how the policy describes itself)."""

    @classmethod
    def strict(cls, bases=(), *, local_user: bool = False) -> EndpointPolicy:
        return cls(frozenset(normalize_base(b) for b in bases if normalize_base(b)), local_user)

    def trusts(self, endpoint: str) -> bool:
        return normalize_base(endpoint) in self.allowed_bases

    def describe(self) -> str:
        listed = ", ".join(sorted(self.allowed_bases)) or "none"
        who = "the endpoints you named" if self.local_user else "the operator's endpoints"
        return f"environment keys go to providers' default endpoints and to {who}: {listed}"

    def check(self, model: str, api_base: str, session_key: str | None) -> None:
        """Raise a fatal LLMError (kind `auth`) when environment credentials would be sent to an
        endpoint nobody configured. Providers that sign every request with the machine's own cloud
        credentials (Bedrock, SageMaker, Vertex AI, watsonx) would do so even with a visitor's key:
        for them a session key does not open an unlisted base."""
        base = normalize_base(api_base)
        ambient = model.split("/", 1)[0].lower() in AMBIENT_CREDENTIAL_PROVIDERS
        if not base or base in self.allowed_bases or (session_key and not ambient):
            return
        if self.local_user:
            raise LLMError(
                f"{model or 'the model'} at {api_base}: this endpoint was not named on the command line "
                f"(--api-base) or in {TRUST_ENV}, so your API keys are not sent there; list it in "
                f"{TRUST_ENV} if you trust it",
                kind="auth",
            )
        raise LLMError(
            f"{model or 'the model'} at {api_base}: this API base is not one the operator configured "
            f"({TRUST_ENV}), so the server's API keys are not sent there; enter your own API "
            "key for it, or use the provider's default endpoint",
            kind="auth",
        )


def local_user_policy(bases=()) -> EndpointPolicy:
    """The command line's policy: the endpoints its user named (flags and environment), nothing read from disk."""
    return EndpointPolicy.strict(bases, local_user=True)


_policy = EndpointPolicy.strict()
_policy_lock = threading.Lock()


def set_policy(policy: EndpointPolicy) -> EndpointPolicy:
    """Set the process's policy (the app and the CLI do, once, at start); returns the previous one."""
    global _policy
    with _policy_lock:
        previous, _policy = _policy, policy
    return previous


def current_policy() -> EndpointPolicy:
    return _policy


def check_stored(field: str, endpoint: str, where: str) -> None:
    """Refuse `endpoint`, read from disk as `field` of `where` (a corpus, a backup, a trace), unless
    the person running the engine trusts it already; the message names the field and how to allow it."""
    if not endpoint or current_policy().trusts(endpoint):
        return
    raise UntrustedEndpoint(
        f"{where}: its stored setting {field} = {endpoint!r} is an endpoint you did not name, so nothing was "
        "sent there (a request would carry your API keys, questions and documents). Settings read from disk "
        f"cannot add an endpoint; if you trust it, add it to {TRUST_ENV} (comma-separated) and run again"
    )
