"""Application settings: built in one place, frozen, never read from the environment deep inside.

`AppSettings.from_env()` is the only function in the engine that reads environment variables
(besides the litellm client, which lets litellm read provider keys itself). The CLI and the app
build one `AppSettings` and hand its parts down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: Environment variable that moves the workspace (where corpora live) elsewhere.
WORKSPACE_ENV = "TRIPLET_LENS_WORKSPACE"
#: Environment variable that turns on the read-only demo mode of the app.
DEMO_ENV = "TRIPLET_LENS_DEMO"
#: Default model string; empty means the offline reasoner.
MODEL_ENV = "TRIPLET_LENS_MODEL"
API_BASE_ENV = "TRIPLET_LENS_API_BASE"
#: Largest input file accepted, in megabytes.
MAX_FILE_MB_ENV = "TRIPLET_LENS_MAX_FILE_MB"
#: Comma-separated API bases the operator trusts with the server's environment keys.
API_BASES_ENV = "TRIPLET_LENS_API_BASES"
#: Budget caps, e.g. `questions=20,tokens=200000,dollars=0.50`: per browser session, and per day.
CAP_SESSION_ENV = "TRIPLET_LENS_CAP_SESSION"
CAP_DAY_ENV = "TRIPLET_LENS_CAP_DAY"
#: Open every corpus read-only (a demo on read-only storage, or a workspace not to be changed).
READ_ONLY_ENV = "TRIPLET_LENS_READ_ONLY"
#: Automatic snapshots kept per corpus (before drop / delete-doc); 0 turns them off.
SNAPSHOTS_ENV = "TRIPLET_LENS_SNAPSHOTS"
#: Seconds one question (one method run) may wait for providers in all; 0 = no limit.
QUESTION_DEADLINE_ENV = "TRIPLET_LENS_QUESTION_DEADLINE"
#: Seconds one extraction call may take, retries included; 0 = no limit.
CALL_DEADLINE_ENV = "TRIPLET_LENS_CALL_DEADLINE"
#: Megabytes one LLM reply may hold; a longer one is refused (it never reaches a trace).
MAX_REPLY_MB_ENV = "TRIPLET_LENS_MAX_REPLY_MB"
#: Megabytes any one file of a backup may hold, instead of the limit from its manifest's counts.
BACKUP_MAX_MB_ENV = "TRIPLET_LENS_BACKUP_MAX_MB"
#: Worker processes answering offline questions in the `make run` server (engine/session/offload.py).
OFFLINE_WORKERS_ENV = "TRIPLET_LENS_OFFLINE_WORKERS"
_CAP_UNITS = ("questions", "tokens", "dollars")


def parse_caps(text: str, var: str = "") -> dict[str, float]:
    """`questions=20,tokens=2e5,dollars=0.5` -> {"questions": 20.0, ...}; a bad part names itself."""
    caps: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        unit, _, value = part.partition("=")
        unit = unit.strip().lower()
        try:
            if unit not in _CAP_UNITS:
                raise ValueError
            caps[unit] = float(value)
        except ValueError:
            raise ValueError(
                f"{var or 'a cap'}: {part!r} is not one of {', '.join(u + '=N' for u in _CAP_UNITS)}"
            ) from None
    return caps


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class AppSettings:
    workspace: Path = PROJECT_ROOT / "workspace"
    """Folder holding one sub-folder per corpus, and the shared LLM response cache."""

    model: str = ""
    """litellm model string (`openai/gpt-4o-mini`, `ollama/llama3`, ...); empty = offline reasoner."""

    api_base: str = ""
    """Optional OpenAI-compatible endpoint for `model` (vLLM, a local server...)."""

    demo: bool = False
    """Read-only demo mode: no uploads, deletes, extraction or key entry in the app."""

    max_file_mb: float = 50.0
    """Files larger than this are rejected before they are read."""

    api_bases: tuple[str, ...] = ()
    """Endpoints the operator trusts with the server's environment keys (besides `api_base` and the
    providers' default endpoints); any other endpoint needs a key typed into the session."""

    cap_session: tuple[tuple[str, float], ...] = ()
    """Budget per browser session: (unit, limit) pairs, units questions / tokens / dollars."""

    cap_day: tuple[tuple[str, float], ...] = ()
    """Budget per day for the whole server, same units; counts survive a restart."""

    read_only: bool = False
    """Open corpora read-only: questions are answered, nothing is changed or written."""

    keep_snapshots: int = 3
    """Automatic snapshots kept per corpus before drop / delete-doc (0 = none)."""

    question_deadline: float = 120.0
    """Seconds a question may wait for providers in all (retries included); 0 = no limit."""

    call_deadline: float = 180.0
    """Seconds one extraction call may take, retries included; 0 = no limit."""

    max_reply_mb: float = 4.0
    """Megabytes one LLM reply may hold; a longer one ends its call with an error naming this cap."""

    backup_max_mb: float = 0.0
    """Megabytes any one file of a backup may hold when restored; 0 = the limit from the backup's own
    counts of documents, chunks, triplets and questions (engine/integrity/bounds.py)."""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> AppSettings:
        env = dict(os.environ if env is None else env)
        s = cls()
        if env.get(WORKSPACE_ENV):
            s = replace(s, workspace=Path(env[WORKSPACE_ENV]).expanduser().resolve())
        if env.get(MODEL_ENV):
            s = replace(s, model=env[MODEL_ENV].strip())
        if env.get(API_BASE_ENV):
            s = replace(s, api_base=env[API_BASE_ENV].strip())
        if _flag(env.get(DEMO_ENV)):
            s = replace(s, demo=True)
        if env.get(API_BASES_ENV):
            s = replace(s, api_bases=tuple(b.strip() for b in env[API_BASES_ENV].split(",") if b.strip()))
        for var, field in ((CAP_SESSION_ENV, "cap_session"), (CAP_DAY_ENV, "cap_day")):
            if env.get(var):
                s = replace(s, **cast(dict[str, Any], {field: tuple(parse_caps(env[var], var).items())}))
        if _flag(env.get(READ_ONLY_ENV)):
            s = replace(s, read_only=True)
        for var, field in ((QUESTION_DEADLINE_ENV, "question_deadline"), (CALL_DEADLINE_ENV, "call_deadline")):
            if env.get(var):
                try:
                    s = replace(s, **cast(dict[str, Any], {field: float(env[var])}))
                except ValueError:
                    raise ValueError(f"{var} must be a number of seconds, got {env[var]!r}") from None
        if env.get(SNAPSHOTS_ENV):
            try:
                s = replace(s, keep_snapshots=int(env[SNAPSHOTS_ENV]))
            except ValueError:
                raise ValueError(f"{SNAPSHOTS_ENV} must be a whole number, got {env[SNAPSHOTS_ENV]!r}") from None
        if env.get(MAX_REPLY_MB_ENV):
            try:
                s = replace(s, max_reply_mb=float(env[MAX_REPLY_MB_ENV]))
            except ValueError:
                got = env[MAX_REPLY_MB_ENV]
                raise ValueError(f"{MAX_REPLY_MB_ENV} must be a number of megabytes, got {got!r}") from None
            if s.max_reply_mb <= 0:
                raise ValueError(f"{MAX_REPLY_MB_ENV} must be more than 0, got {env[MAX_REPLY_MB_ENV]!r}")
        if env.get(MAX_FILE_MB_ENV):
            try:
                s = replace(s, max_file_mb=float(env[MAX_FILE_MB_ENV]))
            except ValueError:
                got = env[MAX_FILE_MB_ENV]
                raise ValueError(f"{MAX_FILE_MB_ENV} must be a number of megabytes, got {got!r}") from None
        if env.get(BACKUP_MAX_MB_ENV):
            try:
                s = replace(s, backup_max_mb=max(0.0, float(env[BACKUP_MAX_MB_ENV])))
            except ValueError:
                got = env[BACKUP_MAX_MB_ENV]
                raise ValueError(f"{BACKUP_MAX_MB_ENV} must be a number of megabytes, got {got!r}") from None
        return s

    @property
    def trusted_bases(self) -> tuple[str, ...]:
        """Every endpoint the operator configured: the listed ones and the default model's."""
        return self.api_bases + ((self.api_base,) if self.api_base else ())

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def max_reply_bytes(self) -> int:
        return int(self.max_reply_mb * 1024 * 1024)
