"""Application settings: built in one place, frozen, never read from the environment deep inside.

`AppSettings.from_env()` is the only function in the engine that reads environment variables
(besides litellm, which reads provider keys itself behind the endpoint policy of
engine/llm/litellm_call.py). The CLI and the app
build one `AppSettings` and hand its parts down.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from engine.budget import Caps

PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: Environment variable that moves the workspace (where corpora live) elsewhere.
WORKSPACE_ENV = "TRIPLET_LENS_WORKSPACE"
#: Environment variable that turns on the read-only demo mode of the app.
DEMO_ENV = "TRIPLET_LENS_DEMO"
#: Default model string; empty means the offline reasoner.
MODEL_ENV = "TRIPLET_LENS_MODEL"
#: The operator's API base for `TRIPLET_LENS_MODEL`; it is also trusted with the server's keys.
API_BASE_ENV = "TRIPLET_LENS_API_BASE"
#: Comma list of further API bases that may receive the server's provider keys (the trust boundary).
API_BASES_ENV = "TRIPLET_LENS_API_BASES"
#: Operator caps, e.g. "questions=20,tokens=200000,dollars=0.5" (see engine/budget.py).
CAP_SESSION_ENV = "TRIPLET_LENS_CAP_SESSION"
CAP_DAY_ENV = "TRIPLET_LENS_CAP_DAY"
#: Largest input file accepted, in megabytes.
MAX_FILE_MB_ENV = "TRIPLET_LENS_MAX_FILE_MB"


@dataclass(frozen=True)
class AppSettings:
    workspace: Path = PROJECT_ROOT / "workspace"
    """Folder holding one sub-folder per corpus, and the shared LLM response cache."""

    model: str = ""
    """litellm model string (`openai/gpt-4o-mini`, `ollama/llama3`, ...); empty = offline reasoner."""

    api_base: str = ""
    """Optional OpenAI-compatible endpoint for `model` (vLLM, a local server...)."""

    api_bases: tuple[str, ...] = ()
    """API bases the operator trusts with the server's provider keys (besides `api_base` and each
    provider's default endpoint). A session naming any other base must bring its own key."""

    demo: bool = False
    """Read-only demo mode: no uploads, deletes or extraction, and the model, endpoint, key and
    method settings are fixed by the operator (`TRIPLET_LENS_MODEL`, `TRIPLET_LENS_API_BASE`)."""

    session_caps: Caps = Caps()
    """Per-session caps on questions, tokens and dollars (`TRIPLET_LENS_CAP_SESSION`)."""

    day_caps: Caps = Caps()
    """Per-day (UTC) caps over all sessions (`TRIPLET_LENS_CAP_DAY`); counts survive restarts."""

    max_file_mb: float = 50.0
    """Files larger than this are rejected before they are read."""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "AppSettings":
        env = dict(os.environ if env is None else env)
        s = cls()
        if env.get(WORKSPACE_ENV):
            s = replace(s, workspace=Path(env[WORKSPACE_ENV]).expanduser().resolve())
        if env.get(MODEL_ENV):
            s = replace(s, model=env[MODEL_ENV].strip())
        if env.get(API_BASE_ENV):
            s = replace(s, api_base=env[API_BASE_ENV].strip())
        if env.get(API_BASES_ENV):
            s = replace(s, api_bases=tuple(b.strip() for b in env[API_BASES_ENV].split(",") if b.strip()))
        if env.get(CAP_SESSION_ENV):
            s = replace(s, session_caps=Caps.parse(env[CAP_SESSION_ENV], CAP_SESSION_ENV))
        if env.get(CAP_DAY_ENV):
            s = replace(s, day_caps=Caps.parse(env[CAP_DAY_ENV], CAP_DAY_ENV))
        if env.get(DEMO_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
            s = replace(s, demo=True)
        if env.get(MAX_FILE_MB_ENV):
            try:
                s = replace(s, max_file_mb=float(env[MAX_FILE_MB_ENV]))
            except ValueError:
                raise ValueError(f"{MAX_FILE_MB_ENV} must be a number of megabytes, got {env[MAX_FILE_MB_ENV]!r}")
        return s

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)
