"""Operator caps for a shared server: questions, tokens and dollars per session and per day.

The operator sets them at start (both optional, any subset of the three measures):

    TRIPLET_LENS_CAP_SESSION="questions=20,tokens=200000,dollars=0.50"
    TRIPLET_LENS_CAP_DAY="questions=500,dollars=10"

Counts live in `<workspace>/budget.sqlite` so a restart does not reset them: one row per
(scope, key), where scope is `session` (key = the session id) or `day` (key = the UTC date).
`Budget.check(session_id)` is called before a question and raises `BudgetExceeded` when a cap
is already reached; `Budget.record(...)` adds what the question used. A question in flight is
never cut short, so a cap may be passed by at most one question's use.
"""
from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MEASURES = ("questions", "tokens", "dollars")


class BudgetExceeded(RuntimeError):
    """A cap is reached; the message says which, and when it frees up."""


@dataclass(frozen=True)
class Caps:
    """Limits for one scope; None = no limit on that measure."""

    questions: int | None = None
    tokens: int | None = None
    dollars: float | None = None

    @property
    def any(self) -> bool:
        return any(getattr(self, m) is not None for m in MEASURES)

    @classmethod
    def parse(cls, text: str, name: str = "cap") -> "Caps":
        """`"questions=20,tokens=200000,dollars=0.5"` (any subset; empty = no caps)."""
        values: dict[str, float | int] = {}
        for part in (text or "").replace(";", ",").split(","):
            part = part.strip()
            if not part:
                continue
            key, sep, raw = part.partition("=")
            key = key.strip().lower()
            if not sep or key not in MEASURES:
                raise ValueError(f"{name}: expected measure=limit with measure one of {', '.join(MEASURES)}, "
                                 f"got {part!r} (example: questions=20,tokens=200000,dollars=0.5)")
            try:
                value: float | int = float(raw) if key == "dollars" else int(raw.strip())
            except ValueError:
                raise ValueError(f"{name}: {key} must be a number, got {raw.strip()!r}") from None
            if value < 0:
                raise ValueError(f"{name}: {key} must not be negative, got {value}")
            values[key] = value
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> str:
        return ", ".join(f"{m} {getattr(self, m):g}" for m in MEASURES if getattr(self, m) is not None) or "none"


@dataclass(frozen=True)
class Usage:
    questions: int = 0
    tokens: int = 0
    dollars: float = 0.0


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


class Budget:
    """Counts per session and per UTC day in SQLite, checked against the operator's caps."""

    def __init__(self, path: Path | str, session_caps: Caps = Caps(), day_caps: Caps = Caps()):
        self.path = Path(path)
        self.session_caps = session_caps
        self.day_caps = day_caps
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS usage (scope TEXT NOT NULL, key TEXT NOT NULL, "
                       "questions INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0, "
                       "dollars REAL NOT NULL DEFAULT 0, PRIMARY KEY (scope, key))")

    @property
    def active(self) -> bool:
        return self.session_caps.any or self.day_caps.any

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # explicit transactions only
        try:
            db.execute("PRAGMA journal_mode=WAL")
            yield db
        finally:
            db.close()

    def usage(self, scope: str, key: str) -> Usage:
        with self._lock, self._connect() as db:
            row = db.execute("SELECT questions, tokens, dollars FROM usage WHERE scope=? AND key=?",
                             (scope, key)).fetchone()
        return Usage(*row) if row else Usage()

    def check(self, session_id: str, questions: int = 1) -> None:
        """Raise `BudgetExceeded` if `questions` more would pass a cap already reached."""
        for scope, key, caps, when in (("session", session_id, self.session_caps, "this session"),
                                       ("day", today(), self.day_caps, "today (UTC)")):
            if not caps.any:
                continue
            used = self.usage(scope, key)
            if caps.questions is not None and used.questions + questions > caps.questions:
                left = max(0, caps.questions - used.questions)
                more = f"; {left} left, {questions} asked" if questions > 1 else ""
                raise BudgetExceeded(f"question limit reached: {used.questions} of {caps.questions} questions "
                                     f"used {when}{more}. The operator's cap; try again "
                                     f"{'in a new session' if scope == 'session' else 'tomorrow'}.")
            if caps.tokens is not None and used.tokens >= caps.tokens:
                raise BudgetExceeded(f"token limit reached: {used.tokens:,} of {caps.tokens:,} tokens used {when}.")
            if caps.dollars is not None and used.dollars >= caps.dollars:
                raise BudgetExceeded(f"spending limit reached: ${used.dollars:.4f} of ${caps.dollars:.2f} used {when}.")

    def record(self, session_id: str, questions: int = 0, tokens: int = 0, dollars: float | None = 0.0) -> None:
        """Add use to the session's and today's rows (one transaction, safe across processes)."""
        with self._lock, self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            for scope, key in (("session", session_id), ("day", today())):
                db.execute("INSERT INTO usage (scope, key, questions, tokens, dollars) VALUES (?, ?, ?, ?, ?) "
                           "ON CONFLICT(scope, key) DO UPDATE SET questions = questions + excluded.questions, "
                           "tokens = tokens + excluded.tokens, dollars = dollars + excluded.dollars",
                           (scope, key, int(questions), int(tokens), float(dollars or 0.0)))
            db.execute("COMMIT")  # a failure above closes the connection, which rolls back


class BudgetedLLM:
    """An `LLM` that stops at the operator's token and dollar caps and records what it used.

    Checked before each provider request (a cache hit is free and always allowed); the refusal
    is a fatal `LLMError(kind="budget")`, so a method stops instead of retrying.
    """

    def __init__(self, llm, budget: Budget, session_id: str):
        self.llm = llm
        self.model = llm.model
        self.budget = budget
        self.session_id = session_id

    def __repr__(self) -> str:
        return f"BudgetedLLM({self.llm!r})"

    def complete(self, messages, *, temperature: float = 0.0, max_tokens: int | None = None, json_mode: bool = False):
        from engine.llm.base import LLMError

        try:
            self.budget.check(self.session_id, questions=0)
        except BudgetExceeded as exc:
            raise LLMError(str(exc), kind="budget") from None
        c = self.llm.complete(messages, temperature=temperature, max_tokens=max_tokens, json_mode=json_mode)
        if not c.cached:
            self.budget.record(self.session_id, tokens=c.prompt_tokens + c.completion_tokens, dollars=c.cost)
        return c
