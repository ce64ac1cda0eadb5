"""One user's session over the engine: the model, endpoint, key and method settings in use, and
the rules a shared deployment needs, enforced here rather than in the pages that draw widgets.

    session = Session.from_app(AppSettings.from_env())
    session.set_model("openai/gpt-4o-mini", api_key=typed)   # ConfigLocked in demo mode
    result = session.answer("t2rag", "Who ...?", corpus)     # budget checked and recorded
    path = session.save_run(corpus, Run(result.question, [result]))   # ConfigLocked in demo mode
    run = session.load_run(path)                             # engine.runs: no LLM needed

* **Demo mode is read-only for configuration**: model, API base, key and method settings are
  fixed by the operator (`TRIPLET_LENS_MODEL`, `TRIPLET_LENS_API_BASE`); every setter raises
  `ConfigLocked`, whatever value a page (or a forged widget) passes.
* **Keys**: a typed key lives in this object only (never in `repr`, a trace or a file). Requests go
  through `engine.llm.litellm_call`, which sends the server's environment keys only to endpoints the
  operator configured.
* **Budget**: the operator's caps per session and per day (engine.session.budget).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.core.config import AppSettings
from engine.llm.base import OFFLINE_MODEL
from engine.llm.litellm_call import set_reply_cap
from engine.session.budget import Budget


class ConfigLocked(PermissionError):
    """A configuration change in demo mode (or any change the operator fixed)."""


@dataclass
class Session:
    workspace: Path
    demo: bool = False
    model: str = ""
    api_base: str = ""
    method_overrides: dict[str, Any] = field(default_factory=dict)
    budget: Budget | None = None
    question_deadline: float = 120.0
    session_id: str = field(default_factory=lambda: secrets.token_hex(8))
    _api_key: str = field(default="", repr=False)
    _reserved: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    """budget bookings by thread, from `begin` until `record` settles them"""

    @classmethod
    def from_app(cls, app: AppSettings) -> Session:
        set_reply_cap(app.max_reply_bytes)  # the process's LLM reply size cap (engine.llm.litellm_call)
        return cls(
            workspace=Path(app.workspace),
            demo=app.demo,
            model=app.model,
            api_base=app.api_base,
            budget=_budget(app),
            question_deadline=app.question_deadline,
        )

    @classmethod
    def for_cli(cls, app: AppSettings, model: str | None = None, api_base: str | None = None) -> Session:
        """The command line's session: the operator's own, so never in demo mode; `model` and
        `api_base` (flags) override the environment's. Keys come from the environment (the CLI runs
        under the local-user endpoint policy, see engine.llm.endpoints). The caps hold as in the app:
        one command is one session, and the day's count is the workspace's, shared with the app."""
        set_reply_cap(app.max_reply_bytes)
        return cls(
            workspace=Path(app.workspace),
            model=app.model if model is None else model,
            api_base=app.api_base if api_base is None else api_base,
            budget=_budget(app),
            question_deadline=app.question_deadline,
        )

    # --- reading --------------------------------------------------------------------------------

    @property
    def key_set(self) -> bool:
        return bool(self._api_key)

    def label(self) -> str:
        return self.model or OFFLINE_MODEL

    def settings_for(self, method: str):
        """The method's settings in this session: the `tuned` preset (the settings class's defaults)
        until changed; `use_preset` loads a named one (engine.methods.presets)."""
        from engine.methods import method_class

        if method in self.method_overrides:
            return self.method_overrides[method]
        cls = getattr(method_class(method), "settings_cls", None)
        return cls() if cls is not None else None

    # --- changing (refused in demo mode) --------------------------------------------------------

    def _unlocked(self, what: str) -> None:
        if self.demo:
            raise ConfigLocked(f"this is a read-only demo: the {what} is fixed by the operator")

    def set_model(self, model: str, api_base: str = "", api_key: str | None = None) -> None:
        """Use `model` at `api_base`; `api_key` (when given) replaces the session's key."""
        self._unlocked("model")
        self.model, self.api_base = (model or "").strip(), (api_base or "").strip()
        if api_key:
            self._api_key = api_key.strip()

    def forget_key(self) -> None:
        self._unlocked("API key")
        self._api_key = ""

    def set_method_settings(self, method: str, **values: Any) -> Any:
        self._unlocked("method settings")
        current = self.settings_for(method)
        if current is None or isinstance(current, type) or not dataclasses.is_dataclass(current):
            return current
        allowed = {f.name for f in dataclasses.fields(current)}
        changes: dict[str, Any] = {k: v for k, v in values.items() if k in allowed}
        self.method_overrides[method] = dataclasses.replace(current, **changes)  # type: ignore[type-var]
        return self.method_overrides[method]

    def use_preset(self, method: str, preset: str) -> Any:
        """Load the method's `paper` or `tuned` preset; the configured reranker stays."""
        self._unlocked("method settings")
        from engine.methods.presets import preset_settings

        reranker = getattr(self.settings_for(method), "reranker", None)
        settings = preset_settings(method, preset)
        if reranker and hasattr(settings, "reranker"):
            settings = dataclasses.replace(settings, reranker=reranker)
        self.method_overrides[method] = settings
        return settings

    def reset_method_settings(self, method: str) -> None:
        self._unlocked("method settings")
        self.method_overrides.pop(method, None)

    # --- saved runs (engine.runs) ----------------------------------------------------------------

    def save_run(self, corpus, run) -> Path:
        """Write `run` under `<corpus>/runs/`. A demo visitor writes nothing to the server (the
        trace and HTML downloads stay open to them)."""
        if self.demo:
            raise ConfigLocked("this is a read-only demo: runs are not saved on the server (download the trace)")
        from engine.runs import save_run

        return save_run(corpus, run)

    @staticmethod
    def load_run(path: Path | str):
        """A saved run or uploaded trace file, back as an `engine.runs.Run`."""
        from engine.runs import load_run

        return load_run(Path(path))

    @staticmethod
    def list_runs(corpus) -> list[Path]:
        from engine.runs import list_runs

        return list_runs(corpus)

    # --- running --------------------------------------------------------------------------------

    def reasoner(self, corpus=None, **opts: Any):
        from engine.reasoners import make_reasoner

        kwargs: dict[str, Any] = {"api_base": self.api_base, "cache_path": self.workspace / "llm_cache.sqlite", **opts}
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if corpus is not None:
            kwargs["embedder"] = corpus.embedder
            kwargs["sentence_vectors"] = getattr(corpus, "sentence_vectors", None)  # a Corpus, not a view
        return make_reasoner(self.model, **kwargs)

    def check_model(self) -> tuple[bool, str]:
        """One minimal request to the model in use: (ok, 'authentication failed: ...' / 'model not
        found: ...' / 'unreachable: ...' / 'answered')."""
        if not self.model:
            return True, f"{OFFLINE_MODEL}: no model, no key, nothing to check"
        reasoner = self.reasoner(max_attempts=1)
        return reasoner.llm.probe()

    def begin(self, questions: int = 1) -> None:
        """Before running `questions` questions: refuse when a budget cap would be passed, else book
        them (with an estimated token and dollar share) at once, so questions asked concurrently from
        other sessions, threads or processes see them; `record` settles the booking."""
        if self.budget is not None:
            self._reserved[threading.get_ident()] = self.budget.reserve(self.session_id, questions)

    def settle(self, tokens: int = 0, dollars: float | None = 0.0) -> None:
        """Settle this thread's booking (from `begin`) with what was billed, for runs that book
        several questions at once and do not pass their results here (an evaluation)."""
        held = self._reserved.pop(threading.get_ident(), None)
        if self.budget is not None and held is not None:
            self.budget.settle(held, tokens=tokens, dollars=dollars)

    def record(self, results, questions: int = 1) -> None:
        """After a question: settle its booking with the tokens and dollars its results billed (or
        count it, when `begin` booked nothing in this thread)."""
        if self.budget is None:
            return
        tokens = sum(r.usage.billed_prompt_tokens + r.usage.billed_completion_tokens for r in results)
        dollars = sum((r.usage.cost or 0.0) for r in results)
        held = self._reserved.pop(threading.get_ident(), None)
        if held is not None:
            self.budget.settle(held, tokens=tokens, dollars=dollars)
        else:
            self.budget.record(self.session_id, questions=questions, tokens=tokens, dollars=dollars)

    @contextmanager
    def _question(self, questions: list[str], questions_booked: int = 1) -> Iterator[tuple[list[str], list]]:
        """The one place a question is checked, booked against the budget, bounded by the question
        deadline and recorded: every run (Ask, Compare, the CLI, eval, a what-if) passes here. The
        block gets the checked (stripped) questions and a list to append its results to; they are
        recorded even when it raises."""
        from engine.core.limits import check_question
        from engine.llm.deadline import within

        checked = [check_question(q) for q in questions]
        self.begin(questions_booked)
        results: list = []
        try:
            with within(self.question_deadline, "question"):
                yield checked, results
        finally:
            self.record(results, questions_booked)

    @staticmethod
    def run_method(name: str, reasoner, question: str, corpus, settings, on_step=None):
        """The method built from the registry and run once: the only place a method is built. Call
        it inside `_question` (as `answer_all` and the what-if replay do), not on its own."""
        from engine.embed.memo import one_question
        from engine.methods.registry import build_method
        from engine.session.offload import offloaded

        done = offloaded(name, reasoner, question, corpus, settings, on_step)  # a worker process's, or None
        if done is None:
            with one_question():
                done = build_method(name, reasoner).answer(question, corpus, settings, on_step=on_step)
        if getattr(done, "inputs", None) is None:
            from engine.session.inputs import run_inputs

            done.inputs = run_inputs(corpus, settings, done.reasoner or getattr(reasoner, "name", ""))
        return done

    def answer(self, method: str, question: str, corpus, *, settings=None, reasoner=None, on_step=None):
        """One question through one method, inside the session's budget and deadline; `settings`
        default to the session's own for the method (`settings_for`)."""
        return self.answer_all(
            [method],
            question,
            corpus,
            settings={method: settings} if settings else None,
            reasoner=reasoner,
            on_start=(lambda _name: on_step) if on_step else None,
        )[0]

    def answer_all(
        self,
        methods: list[str],
        question: str,
        corpus,
        *,
        settings: dict[str, Any] | None = None,
        reasoner=None,
        on_start=None,
        on_done=None,
    ) -> list:
        """One question through several methods (Compare), booked as one question. `on_start(name)`
        returns the method's `on_step` callback (or None); `on_done(name, result)` follows each."""
        with self._question([question]) as ([question], results):
            reasoner = reasoner or self.reasoner(corpus)
            for name in methods:
                on_step = on_start(name) if on_start else None
                chosen = (settings or {}).get(name) or self.settings_for(name)
                result = self.run_method(name, reasoner, question, corpus, chosen, on_step)
                results.append(result)
                if on_done:
                    on_done(name, result)
        return results

    def rerun(self, result, corpus, changes: dict[str, Any], on_step=None, reasoner=None):
        """A what-if (engine.runs.whatif): `result` again with `changes` to its settings; recorded replies
        are replayed where the prompt is unchanged, the rest go to this session's reasoner, inside its
        budget and deadline as any question. In demo mode only the what-if knobs (k, rounds, hops,
        within bounds) may change: the model, endpoint and key stay the operator's."""
        return self.rerun_all([(result, changes)], corpus, on_step=on_step, reasoner=reasoner)[0]

    def rerun_all(self, items: list[tuple[Any, dict[str, Any]]], corpus, on_step=None, reasoner=None):
        """Several results of one question re-run (Compare's what-if): one question against the
        budget, as the comparison itself counted, with the tokens and dollars of every re-run."""
        from engine.runs.whatif import finish_rerun, prepare_rerun

        pairs: list = []
        with self._question([result.question for result, _ in items]) as (_, out):
            fallback = reasoner or self.reasoner(corpus)
            for result, changes in items:
                settings, replay = prepare_rerun(result, changes, fallback, knobs_only=self.demo)
                new = self.run_method(result.method, replay, result.question, corpus, settings, on_step)
                out.append(new)
                pairs.append(finish_rerun(result, new, replay))
        return pairs


def _budget(app: AppSettings) -> Budget | None:
    """The operator's caps over the workspace's one budget database, or None when no cap is set."""
    if not (app.cap_session or app.cap_day):
        return None
    return Budget(Path(app.workspace) / "budget.sqlite", dict(app.cap_session), dict(app.cap_day))
