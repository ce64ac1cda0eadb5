"""One visitor's configuration, held by the engine so the rules cannot be skipped by a page.

    session = Session(AppSettings.from_env())
    session.configure(model="openai/gpt-4o-mini", api_base="", api_key=typed_key)   # ConfigLocked in demo
    status = session.apply_model()            # one minimal request: ok / authentication failed / ...
    with session.question():                  # budget: refused with BudgetExceeded at the cap
        result = build_method("t2rag", session.make_reasoner(corpus.embedder)).answer(...)

What it guarantees, whatever the page or a forged widget value does:

* **Demo lock.** With `AppSettings.demo`, every change to the model, API base, key or a method's
  settings raises `ConfigLocked`; the operator fixed them at start (`TRIPLET_LENS_MODEL`,
  `TRIPLET_LENS_API_BASE`). Re-submitting the values in force is not a change.
* **Trust boundary.** Reasoners are built with the strict `EndpointPolicy` over the operator's
  bases, so the server's environment keys never reach an endpoint the visitor named.
* **Key in memory only.** The session key lives in this object; `repr` and `config` never show it.
* **Budget.** `question()` checks the operator's question caps before a run and records it; the
  reasoner's LLM is metered so token and dollar caps stop a run at the next call.
"""
from __future__ import annotations

import contextlib
import dataclasses
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from engine.budget import Budget, BudgetedLLM
from engine.config import AppSettings
from engine.llm.litellm_call import EndpointPolicy, strict_policy


class ConfigLocked(PermissionError):
    """A configuration change in demo mode; the message names what is fixed and by whom."""


@dataclass(frozen=True)
class SessionConfig:
    """What a run uses: model, endpoint and per-method settings (never the key)."""

    model: str = ""
    """litellm model string; empty = the offline reasoner."""

    api_base: str = ""
    """OpenAI-compatible endpoint for `model`; outside the operator's list it needs a session key."""

    method_settings: dict[str, Any] = field(default_factory=dict)
    """Method name -> its settings dataclass; a method missing here runs with the paper's defaults."""


@dataclass(frozen=True)
class ModelStatus:
    """The outcome of `Session.apply_model()`, one line for the page."""

    ok: bool
    kind: str  # ok | offline | auth | not_found | unreachable | refused | error
    message: str


class Session:
    def __init__(self, settings: AppSettings, *, session_id: str | None = None, budget: Budget | None = None):
        self.settings = settings
        self.id = session_id or uuid.uuid4().hex
        self.policy: EndpointPolicy = strict_policy(settings)
        self.config = SessionConfig(model=settings.model, api_base=settings.api_base)
        self._api_key = ""  # memory only: never in config, a trace, a repr or a file
        if budget is None and (settings.session_caps.any or settings.day_caps.any):
            budget = Budget(Path(settings.workspace) / "budget.sqlite", settings.session_caps, settings.day_caps)
        self.budget = budget

    def __repr__(self) -> str:
        return f"Session(id={self.id[:8]}, model={self.config.model!r}, api_base={self.config.api_base!r})"

    @property
    def demo(self) -> bool:
        return bool(self.settings.demo)

    @property
    def has_key(self) -> bool:
        return bool(self._api_key)

    # -- configuration -------------------------------------------------------------------------
    def _locked(self, what: str) -> None:
        if self.demo:
            raise ConfigLocked(f"read-only demo: the {what} is fixed by the operator "
                               "(TRIPLET_LENS_MODEL, TRIPLET_LENS_API_BASE) and cannot be changed here")

    def configure(self, *, model: str | None = None, api_base: str | None = None, api_key: str | None = None) -> None:
        """Change the model, endpoint and/or session key (None = keep). Raises `ConfigLocked` in demo."""
        new_model = self.config.model if model is None else model.strip()
        new_base = self.config.api_base if api_base is None else api_base.strip()
        if new_model != self.config.model or new_base != self.config.api_base:
            self._locked("model and API base")
        if api_key is not None and api_key.strip() and api_key.strip() != self._api_key:
            self._locked("API key")
        self.config = replace(self.config, model=new_model, api_base=new_base)
        if api_key is not None and api_key.strip():
            self._api_key = api_key.strip()

    def forget_key(self) -> None:
        self._locked("API key")
        self._api_key = ""

    def method_settings(self, name: str) -> Any:
        """The settings a run of `name` uses (the paper's defaults until changed)."""
        if name in self.config.method_settings:
            return self.config.method_settings[name]
        from engine.methods import method_class

        cls = getattr(method_class(name), "settings_cls", None)
        return cls() if cls is not None else None

    def set_method_settings(self, name: str, values: dict[str, Any]) -> Any:
        """Apply field values to a method's settings; unknown names are ignored. `ConfigLocked` in demo."""
        current = self.method_settings(name)
        if current is None or not dataclasses.is_dataclass(current):
            return current
        allowed = {f.name for f in dataclasses.fields(current) if f.init}
        new = replace(current, **{k: v for k, v in values.items() if k in allowed})
        if new != current:
            self._locked(f"{name} settings")
        self.config = replace(self.config, method_settings={**self.config.method_settings, name: new})
        return new

    def reset_method_settings(self, name: str) -> None:
        if name in self.config.method_settings:
            self._locked(f"{name} settings")
            self.config = replace(self.config, method_settings={k: v for k, v in self.config.method_settings.items()
                                                                if k != name})

    # -- running -------------------------------------------------------------------------------
    def make_reasoner(self, embedder: Any = None, **opts: Any):
        """A reasoner for one run: the session's model, endpoint and key, the strict policy, metering."""
        from engine.llm import make_reasoner

        model = self.config.model
        if not model:
            return make_reasoner("", embedder=embedder)
        reasoner = make_reasoner(model, api_base=self.config.api_base, api_key=self._api_key or None,
                                 cache_path=Path(self.settings.workspace) / "llm_cache.sqlite",
                                 policy=self.policy, **opts)
        if self.budget is not None and self.budget.active and hasattr(reasoner, "llm"):
            reasoner.llm = BudgetedLLM(reasoner.llm, self.budget, self.id)
        return reasoner

    @contextlib.contextmanager
    def question(self, count: int = 1) -> Iterator[None]:
        """Guard `count` method runs: refused (`BudgetExceeded`) at the cap, counted once started."""
        if self.budget is None or not self.budget.active:
            yield
            return
        self.budget.check(self.id, questions=count)
        try:
            yield
        finally:
            # a run that started is counted even if it failed: it may have cost money
            self.budget.record(self.id, questions=count)

    def apply_model(self, model: str | None = None, api_base: str | None = None,
                    api_key: str | None = None) -> ModelStatus:
        """Configure (see `configure`) then check the model with one minimal request."""
        self.configure(model=model, api_base=api_base, api_key=api_key)
        return self.check_model()

    def check_model(self) -> ModelStatus:
        """One tiny uncached request (max_tokens 1, no retries): does this model answer with this key?"""
        from engine.llm.base import LLMError

        model = self.config.model
        if not model:
            return ModelStatus(True, "offline", "offline-rules: no model, no key, nothing sent")
        from engine.llm.litellm_client import LiteLLMClient

        client = LiteLLMClient(model, api_base=self.config.api_base, api_key=self._api_key or None,
                               timeout=15.0, max_attempts=1, policy=self.policy)
        where = model + (f" at {self.config.api_base}" if self.config.api_base else "")
        try:
            client.complete([{"role": "user", "content": "Reply with OK."}], max_tokens=1)
        except LLMError as err:
            text = str(err)
            if text.startswith("refused") or text.startswith("no API key"):
                return ModelStatus(False, "refused" if text.startswith("refused") else "auth", text)
            label = {"auth": "authentication failed", "not_found": "model not found",
                     "unreachable": "unreachable", "timeout": "unreachable"}.get(err.kind, "check failed")
            return ModelStatus(False, err.kind if label != "check failed" else "error", f"{label}: {where}. {text}")
        return ModelStatus(True, "ok", f"ok: {where} answered")
