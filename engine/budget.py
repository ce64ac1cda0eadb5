"""Budget caps for a shared server: questions, tokens or dollars per session and per day.

The operator sets them (`TRIPLET_LENS_CAP_SESSION`, `TRIPLET_LENS_CAP_DAY`, e.g.
`questions=20,tokens=200000,dollars=0.50`); counts live in `<workspace>/budget.sqlite`, so a restart
does not hand out a fresh day. A question over a cap is refused before anything runs, with a message
naming the cap; what a question used is recorded when it finishes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

UNITS = ("questions", "tokens", "dollars")


class BudgetExceeded(RuntimeError):
    """The session's or the day's cap is reached; the message says which and when it resets."""


@dataclass(frozen=True)
class Usage:
    questions: int = 0
    tokens: int = 0
    dollars: float = 0.0

    def get(self, unit: str) -> float:
        return float(getattr(self, unit))


class Budget:
    def __init__(
        self, path: Path | str, session_caps: dict[str, float] | None = None, day_caps: dict[str, float] | None = None
    ):
        self.session_caps = dict(session_caps or {})
        self.day_caps = dict(day_caps or {})
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS usage (scope TEXT PRIMARY KEY, questions INTEGER NOT NULL, "
                "tokens INTEGER NOT NULL, dollars REAL NOT NULL, updated REAL NOT NULL)"
            )

    @property
    def active(self) -> bool:
        return bool(self.session_caps or self.day_caps)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30.0)

    @staticmethod
    def _day() -> str:
        return "day:" + time.strftime("%Y-%m-%d", time.gmtime())

    def usage(self, scope: str) -> Usage:
        with self._connect() as db:
            row = db.execute("SELECT questions, tokens, dollars FROM usage WHERE scope=?", (scope,)).fetchone()
        return Usage(*row) if row else Usage()

    def session_usage(self, session_id: str) -> Usage:
        return self.usage(f"session:{session_id}")

    def day_usage(self) -> Usage:
        return self.usage(self._day())

    def check(self, session_id: str, questions: int = 1) -> None:
        """Raise BudgetExceeded when `questions` more would pass a cap (or a cap is already reached)."""
        for caps, scope, who, reset in (
            (self.session_caps, f"session:{session_id}", "this session", "start a new session"),
            (self.day_caps, self._day(), "this server today", "it resets at 00:00 UTC"),
        ):
            if not caps:
                continue
            used = self.usage(scope)
            for unit, limit in caps.items():
                now = used.get(unit) + (questions if unit == "questions" else 0)
                over = now > limit if unit == "questions" else used.get(unit) >= limit
                if over:
                    shown = f"{limit:g}" if unit != "dollars" else f"${limit:.2f}"
                    raise BudgetExceeded(f"the operator's budget for {who} is used up ({unit}: {shown}); {reset}")

    def record(self, session_id: str, *, questions: int = 0, tokens: int = 0, dollars: float | None = 0.0) -> None:
        with self._lock, self._connect() as db:
            for scope in (f"session:{session_id}", self._day()):
                db.execute(
                    "INSERT INTO usage(scope, questions, tokens, dollars, updated) VALUES (?,?,?,?,?) "
                    "ON CONFLICT(scope) DO UPDATE SET questions=questions+excluded.questions, "
                    "tokens=tokens+excluded.tokens, dollars=dollars+excluded.dollars, updated=excluded.updated",
                    (scope, questions, tokens, float(dollars or 0.0), time.time()),
                )
