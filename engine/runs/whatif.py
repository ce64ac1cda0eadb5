"""What-if re-runs: change k, rounds or hops on a finished run and run it again, with every LLM
reply whose prompt is unchanged taken from the run's own trace.

    new, diff = session.rerun(result, corpus, {"k": 8})   # engine.session: budget, deadline, record
    print("\\n".join(diff.lines()))      # settings, answer, evidence added/removed, calls, cost, time

The methods are deterministic around their LLM calls, so a setting that does not change what a call
is shown does not change its prompt: such a call is answered from the recorded reply (`ReplayLLM`),
free and instant, and lands in the new trace with `replayed=True` and `cached=True` (cost $0, like
a cache hit). Only prompts that changed reach the fallback reasoner, which is the session's own
(its model and key, or the offline rules): a re-run sends nothing anywhere a plain question could
not. `Session.rerun` wraps this with the session's budget, deadline and demo rules.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from engine.core import serde
from engine.llm.base import OFFLINE_MODEL, Completion, LLMCall
from engine.llm.cached import CachedLLM, not_bought


def whatif_knobs(method: str) -> dict[str, tuple[int, int]]:
    """The settings a what-if offers for `method`, with the range a visitor may pick in demo mode (the
    operator's CLI may change any field of the settings dataclass): the method class's own
    `whatif_knobs` ({} for a method that names none, or one no longer registered)."""
    from engine.methods.registry import method_class

    try:
        return dict(method_class(method).whatif_knobs)
    except (ValueError, ImportError):
        return {}


class ReplayMiss(Exception):
    """The prompt is not among the recorded calls: the fallback reasoner answers it."""


def _prompt_key(messages: list[dict[str, str]]) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class ReplayLLM(CachedLLM):
    """An `LLM` that answers only from recorded calls: the same prompt gets the recorded reply,
    any other prompt raises `ReplayMiss`. Calls that got no reply (a provider failure) and
    offline-rules steps are not replayed. No response cache: the recorded run is its store."""

    def __init__(self, calls: list[LLMCall]):
        self.replies: dict[str, LLMCall] = {}
        for c in calls:
            if c.model != OFFLINE_MODEL and c.messages and c.response:
                self.replies.setdefault(_prompt_key(c.messages), c)
        self.model = next((c.model for c in self.replies.values()), "replay")

    def _forward(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        c = self.replies.get(_prompt_key(messages))
        if c is None:
            raise ReplayMiss()
        return not_bought(c.response, c.model, c.prompt_tokens, c.completion_tokens, replayed=True)


class ReplayReasoner:
    """A reasoner that first tries each job on the recorded replies (the prompts are built exactly
    as `LLMReasoner` builds them) and hands it to `fallback` when the prompt is new."""

    def __init__(self, calls: list[LLMCall], fallback: Any):
        from engine.reasoners.llm_reasoner import LLMReasoner

        self.llm = ReplayLLM(calls)
        self.recorded = LLMReasoner(self.llm)
        self.fallback = fallback
        self.replayed = 0
        self.asked = 0
        recorded, own = self.llm.model, str(getattr(fallback, "name", ""))
        has_replies = bool(self.llm.replies)
        self.name = own if not has_replies or recorded == own else f"{recorded} (replayed) + {own}"
        # the recorded prompts were built for a reasoner that reads free text: build them the same way
        self.supports_free_text = has_replies or bool(getattr(fallback, "supports_free_text", True))

    def label(self) -> str:
        """Who answered, once the run is over: the recorded model, the fallback, or both."""
        if not self.replayed:
            return str(getattr(self.fallback, "name", ""))
        if not self.asked or self.name == self.llm.model:
            return self.llm.model
        return self.name

    def with_prompt_set(self, name: str) -> ReplayReasoner:
        """Build the recorded prompts from the prompt set the method asks for (a `paper` preset's
        run recorded the authors' prompts), and hand the fallback the same set. Kept in place, so
        the counters stay this re-run's."""
        self.recorded = self.recorded.with_prompt_set(name)
        own = getattr(self.fallback, "with_prompt_set", None)
        if callable(own):
            self.fallback = own(name)
        return self

    def _either(self, job: str, *args: Any, **kw: Any) -> Any:
        if self.llm.replies:
            try:
                out = getattr(self.recorded, job)(*args, **kw)
                self.replayed += 1
                return out
            except ReplayMiss:
                pass
        self.asked += 1
        return getattr(self.fallback, job)(*args, **kw)

    def extract(self, title: str, text: str) -> Any:
        return self._either("extract", title, text)

    def decompose(self, question: str) -> Any:
        return self._either("decompose", question)

    def solve(self, question: str, resolved: Any, open_triplets: Any, evidence: Any) -> Any:
        return self._either("solve", question, resolved, open_triplets, evidence)

    def answer(self, question: str, context: str, *, facts: list[str] | None = None) -> Any:
        return self._either("answer", question, context, facts=facts)

    def chat(self, job: str, messages: list[dict[str, str]]) -> Any:
        return self._either("chat", job, messages)


def recorded_calls(result: Any) -> list[LLMCall]:
    """Every LLM call a result's trace holds, in order."""
    tr = result.trace
    if tr is None or isinstance(tr, dict):
        return []
    if hasattr(tr, "calls"):
        return [c for c in tr.calls() if c is not None]
    call = getattr(tr, "call", None)
    return [call] if call is not None else []


def run_settings(result: Any) -> Any:
    """The settings the run was made with (from its trace), else the method's defaults."""
    from engine.methods.registry import settings_class

    recorded = getattr(result.trace, "settings", None)
    if recorded is not None and dataclasses.is_dataclass(recorded):
        return recorded
    return settings_class(result.method)()


def _coerce(value: Any, like: Any, name: str) -> Any:
    """A value typed as the field's current one (the CLI hands in strings: `k=8`)."""
    if isinstance(like, bool):
        if isinstance(value, str):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{name} is true or false, got {value!r}")
        return bool(value)
    if isinstance(like, int):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} is a whole number, got {value!r}") from None
    if isinstance(like, float):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} is a number, got {value!r}") from None
    return str(value)


def apply_changes(method: str, settings: Any, changes: dict[str, Any], *, knobs_only: bool = False) -> Any:
    """`settings` with `changes` applied; a clear ValueError for a field the method does not have,
    a value of the wrong kind or (with `knobs_only`, demo mode) anything outside its what-if knobs."""
    fields = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    knobs = whatif_knobs(method)
    typed: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in fields:
            raise ValueError(f"{method} has no setting {name!r}; its settings: {', '.join(fields) or 'none'}")
        if knobs_only and name not in knobs:
            raise ValueError(f"a what-if here changes only {', '.join(knobs) or 'nothing'} of {method}")
        typed[name] = _coerce(value, fields[name], name)
        if knobs_only:
            lo, hi = knobs[name]
            if not lo <= typed[name] <= hi:
                raise ValueError(f"{name} must be between {lo} and {hi}, got {typed[name]}")
    return dataclasses.replace(settings, **typed)


def preset_changes(method: str, preset: str) -> dict[str, Any]:
    """The what-if changes that put a run's settings on `preset` (engine.methods.presets): every
    field but the configured reranker."""
    from engine.methods.presets import NEUTRAL, preset_settings

    target = preset_settings(method, preset)
    return {f.name: getattr(target, f.name) for f in dataclasses.fields(target) if f.name not in NEUTRAL}


@dataclass
class RunDiff:
    """What a what-if changed, as the side-by-side view and the CLI show it."""

    method: str
    settings: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # changed field -> (before, after)
    reasoner: tuple[str, str] = ("", "")
    answer: tuple[str, str] = ("", "")
    chunks_added: list[str] = field(default_factory=list)
    chunks_removed: list[str] = field(default_factory=list)
    chunks_kept: list[str] = field(default_factory=list)
    replayed_calls: int = 0  # answered from the first run's recorded replies (free, instant)
    new_calls: int = 0  # prompts that changed, sent to the session's reasoner
    calls: tuple[int, int] = (0, 0)
    tokens: tuple[int, int] = (0, 0)  # needed (every call)
    billed_tokens: tuple[int, int] = (0, 0)
    cost: tuple[float | None, float | None] = (0.0, 0.0)
    seconds: tuple[float, float] = (0.0, 0.0)

    @property
    def answer_changed(self) -> bool:
        return self.answer[0].strip().lower() != self.answer[1].strip().lower()

    def lines(self) -> list[str]:
        def money(v: float | None) -> str:
            return "unknown" if v is None else f"${v:.5f}"

        changed = ", ".join(f"{k} {a} -> {b}" for k, a, b in ((k, *v) for k, v in self.settings.items()))
        out = [f"settings: {changed or 'unchanged'}"]
        if self.reasoner[0] != self.reasoner[1]:
            out.append(f"reasoner: {self.reasoner[0]} -> {self.reasoner[1]}")
        verb = "changed" if self.answer_changed else "unchanged"
        out.append(f"answer ({verb}): {self.answer[0] or '(none)'!r} -> {self.answer[1] or '(none)'!r}")
        out.append(
            f"evidence: +{len(self.chunks_added)} added, -{len(self.chunks_removed)} removed, "
            f"{len(self.chunks_kept)} kept"
        )
        out += [f"  + {c}" for c in self.chunks_added] + [f"  - {c}" for c in self.chunks_removed]
        out.append(
            f"LLM calls: {self.calls[0]} -> {self.calls[1]} ({self.replayed_calls} replayed from the first run, "
            f"free; {self.new_calls} new)"
        )
        out.append(
            f"tokens needed: {self.tokens[0]} -> {self.tokens[1]}; billed by the re-run: {self.billed_tokens[1]}"
        )
        out.append(f"cost: {money(self.cost[0])} -> {money(self.cost[1])}")
        out.append(f"seconds: {self.seconds[0]:.2f} -> {self.seconds[1]:.2f}")
        return out


def diff_runs(before: Any, after: Any, replayed: int = 0, new: int = 0) -> RunDiff:
    """The difference between two results of one method on one question."""
    s0, s1 = serde.to_dict(run_settings(before)), serde.to_dict(run_settings(after))
    ev0, ev1 = list(before.evidence_chunk_ids), list(after.evidence_chunk_ids)
    u0, u1 = before.usage, after.usage
    return RunDiff(
        method=after.method,
        settings={k: (s0.get(k), v) for k, v in s1.items() if s0.get(k) != v},
        reasoner=(before.reasoner, after.reasoner),
        answer=(before.answer or "", after.answer or ""),
        chunks_added=[c for c in ev1 if c not in ev0],
        chunks_removed=[c for c in ev0 if c not in ev1],
        chunks_kept=[c for c in ev1 if c in ev0],
        replayed_calls=replayed,
        new_calls=new,
        calls=(u0.calls, u1.calls),
        tokens=(u0.prompt_tokens + u0.completion_tokens, u1.prompt_tokens + u1.completion_tokens),
        billed_tokens=(
            u0.billed_prompt_tokens + u0.billed_completion_tokens,
            u1.billed_prompt_tokens + u1.billed_completion_tokens,
        ),
        cost=(u0.cost, u1.cost),
        seconds=(u0.total_time, u1.total_time),
    )


def prepare_rerun(
    result: Any, changes: dict[str, Any], fallback: Any, *, knobs_only: bool = False
) -> tuple[Any, ReplayReasoner]:
    """(settings, reasoner) to run `result`'s method on its question again with `changes`: the
    reasoner replays every recorded reply whose prompt is unchanged and hands the rest to
    `fallback`. `Session.rerun` runs the method with them and calls `finish_rerun`."""
    if result.trace is None or isinstance(result.trace, dict):
        raise ValueError(f"this {result.method} run has no trace to re-run from")
    settings = apply_changes(result.method, run_settings(result), changes, knobs_only=knobs_only)
    return settings, ReplayReasoner(recorded_calls(result), fallback)


def finish_rerun(result: Any, new: Any, reasoner: ReplayReasoner) -> tuple[Any, RunDiff]:
    """The re-run labelled with the replaying reasoner, and what changed against `result`."""
    new.reasoner = reasoner.label()
    if hasattr(new.trace, "reasoner"):
        new.trace.reasoner = new.reasoner
    new_llm = sum(1 for c in recorded_calls(new) if c.model != OFFLINE_MODEL and not c.replayed)
    return new, diff_runs(result, new, replayed=reasoner.replayed, new=new_llm)
