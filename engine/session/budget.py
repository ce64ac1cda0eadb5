"""Budget caps for a shared server: questions, tokens or dollars per session and per day.

The operator sets them (`TRIPLET_LENS_CAP_SESSION`, `TRIPLET_LENS_CAP_DAY`, e.g.
`questions=20,tokens=200000,dollars=0.50`); counts live in `<workspace>/budget.sqlite`, so a restart
does not hand out a fresh day. A question over a cap is refused before anything runs, with a message
naming the cap.

Concurrency: `reserve` checks the caps and books the question (and an estimated token and dollar
share, the day's mean per question so far) in one `BEGIN IMMEDIATE` transaction, i.e. under
SQLite's lock on the budget file, which every server thread and process shares; `settle` replaces
the estimate by what the question billed. So N questions asked at once against a cap of 2 get 2
answers and N-2 refusals: the cap can be crossed only by the last admitted question's own tokens or
dollars, never by questions in flight. A reservation never settled (a killed process) stays counted.
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
class Reservation:
    """What `reserve` booked for one question (or an evaluation's questions), to be settled."""

    session_id: str
    questions: int
    tokens: int
    dollars: float


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

    def _scopes(self, session_id: str) -> tuple[tuple[dict[str, float], str, str, str], ...]:
        return (
            (self.session_caps, f"session:{session_id}", "this session", "start a new session"),
            (self.day_caps, self._day(), "this server today", "it resets at 00:00 UTC"),
        )

    @staticmethod
    def _refuse_if_over(caps: dict[str, float], used: Usage, questions: int, who: str, reset: str) -> None:
        for unit, limit in caps.items():
            now = used.get(unit) + (questions if unit == "questions" else 0)
            over = now > limit if unit == "questions" else used.get(unit) >= limit
            if over:
                shown = f"{limit:g}" if unit != "dollars" else f"${limit:.2f}"
                raise BudgetExceeded(f"the operator's budget for {who} is used up ({unit}: {shown}); {reset}")

    @staticmethod
    def _row(db: sqlite3.Connection, scope: str) -> Usage:
        row = db.execute("SELECT questions, tokens, dollars FROM usage WHERE scope=?", (scope,)).fetchone()
        return Usage(*row) if row else Usage()

    @staticmethod
    def _add(db: sqlite3.Connection, scope: str, questions: int, tokens: int, dollars: float) -> None:
        db.execute(
            "INSERT INTO usage(scope, questions, tokens, dollars, updated) VALUES (?,?,?,?,?) "
            "ON CONFLICT(scope) DO UPDATE SET questions=questions+excluded.questions, "
            "tokens=tokens+excluded.tokens, dollars=dollars+excluded.dollars, updated=excluded.updated",
            (scope, questions, tokens, float(dollars), time.time()),
        )

    def reserve(self, session_id: str, questions: int = 1) -> Reservation:
        """Refuse (BudgetExceeded naming the cap) or book `questions` with their estimated tokens
        and dollars, atomically across threads and processes. Settle it with `settle`."""
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            with self._lock:
                db.execute("BEGIN IMMEDIATE")  # the budget file's write lock: one reservation at a time
                try:
                    day = self._row(db, self._day())
                    for caps, scope, who, reset in self._scopes(session_id):
                        if caps:
                            self._refuse_if_over(caps, self._row(db, scope), questions, who, reset)
                    per_q = 1 / day.questions if day.questions else 0.0
                    res = Reservation(
                        session_id, questions, round(day.tokens * per_q * questions), day.dollars * per_q * questions
                    )
                    for _, scope, _, _ in self._scopes(session_id):
                        self._add(db, scope, res.questions, res.tokens, res.dollars)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        finally:
            db.close()
        return res

    def settle(self, reservation: Reservation, *, tokens: int = 0, dollars: float | None = 0.0) -> None:
        """Replace a reservation's estimate by what its questions billed."""
        d_tokens = tokens - reservation.tokens
        d_dollars = float(dollars or 0.0) - reservation.dollars
        with self._lock, self._connect() as db:
            for _, scope, _, _ in self._scopes(reservation.session_id):
                self._add(db, scope, 0, d_tokens, d_dollars)

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
        """Raise BudgetExceeded when `questions` more would pass a cap (or a cap is already reached);
        books nothing (a question about to run uses `reserve`)."""
        for caps, scope, who, reset in self._scopes(session_id):
            if caps:
                self._refuse_if_over(caps, self.usage(scope), questions, who, reset)

    def record(self, session_id: str, *, questions: int = 0, tokens: int = 0, dollars: float | None = 0.0) -> None:
        """Count usage that was not reserved."""
        with self._lock, self._connect() as db:
            for _, scope, _, _ in self._scopes(session_id):
                self._add(db, scope, questions, tokens, float(dollars or 0.0))
