"""T2RAG's state machine: classify query triplets and fold a solver's output into the state.

The state is three queues keyed by placeholder count: resolved (0), searchable (1) and fuzzy (2+).
Two rules make it safer than the reference code, which let the LLM rewrite the whole state:

* Resolved facts only accumulate. A solver reply can fill placeholders; it cannot take a fact back.
* A binding `?x = value` is substituted into every triplet holding `?x` by the engine itself, so a
  fuzzy triplet linked by `?x` becomes searchable even when the LLM forgot to rewrite it. A triplet
  the solver did not mention stays in its queue instead of silently disappearing.

Everything here is pure (no corpus, no LLM), which keeps the rules easy to test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from engine.core.textnorm import normalize_entity
from engine.methods.t2rag.trace import BindingRecord, StateSnapshot, StateTriplet
from engine.reasoners.base import (
    PLACEHOLDER,
    QueryTriplet,
    SolveResult,
    is_placeholder,
    placeholder_tokens,
)

#: Values a solver writes when it found nothing; binding them would turn a gap into a false fact.
_EMPTY_VALUES = {
    "",
    "unknown",
    "none",
    "null",
    "n/a",
    "na",
    "not found",
    "not available",
    "not mentioned",
    "not specified",
    "unclear",
    "?",
}

_WH_WORDS = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def strip_wh_words(question: str) -> str:
    """The question without wh-words, removed as whole words: "Who wrote the show?" -> "wrote the show?".

    (The reference code removed substrings, turning "show" into "s".)"""
    return _SPACES.sub(" ", _WH_WORDS.sub(" ", question)).strip()


def classify(t: StateTriplet) -> str:
    """resolved (no placeholder), searchable (one) or fuzzy (two or more distinct placeholders)."""
    n = len(t.placeholders)
    return "resolved" if n == 0 else "searchable" if n == 1 else "fuzzy"


def known_parts_query(t: StateTriplet) -> str:
    """A searchable triplet's retrieval query: its known parts, placeholders left out ("Roger Miller child");
    a part with a placeholder inside keeps its other words ("director of ?film" -> "director of")."""
    known = (" ".join(PLACEHOLDER.sub(" ", p).split()) for p in (t.subject, t.predicate, t.object))
    return " ".join(k for k in known if k)


def fact_text(t: StateTriplet | QueryTriplet) -> str:
    """The fact format handed to `Reasoner.answer(facts=...)`: `subject | predicate | object`."""
    return f"{t.subject} | {t.predicate} | {t.object}"


def _same(a: str, b: str) -> bool:
    return normalize_entity(a) == normalize_entity(b)


def _placeholder_key(part: str) -> str:
    return part.strip().lower()


def _values_in(mine: str, theirs: str) -> dict[str, str]:
    """The values a returned part gives the placeholders of an open part with words around them:
    mine "director of ?film", theirs "director of Jaws" -> {"?film": "Jaws"}; {} when the words
    around do not agree (or the part is only a placeholder: the caller reads it whole)."""
    tokens = placeholder_tokens(mine)
    if not tokens or mine.strip() in tokens:
        return {}
    pattern, pos = "", 0
    for m in PLACEHOLDER.finditer(mine):
        pattern += re.escape(mine[pos : m.start()]) + "(.+?)"
        pos = m.end()
    pattern += re.escape(mine[pos:])
    found = re.fullmatch(r"\s*" + pattern.strip() + r"\s*", theirs, re.IGNORECASE | re.DOTALL)
    if not found:
        return {}
    return {tok: val.strip() for tok, val in zip(tokens, found.groups()) if tok != "?"}


def is_empty_value(value: str) -> bool:
    return value.strip().lower().strip(".") in _EMPTY_VALUES or is_placeholder(value)


@dataclass
class State:
    """The three queues, in decomposition order within each queue."""

    triplets: list[StateTriplet] = field(default_factory=list)  # open (searchable + fuzzy)
    resolved: list[StateTriplet] = field(default_factory=list)
    bound: dict[str, str] = field(default_factory=dict)  # placeholder (lower-case) -> value

    @classmethod
    def from_decomposition(cls, triplets: list[QueryTriplet]) -> State:
        state = cls()
        for i, q in enumerate(triplets, start=1):
            t = StateTriplet(f"t{i}", q.subject.strip(), q.predicate.strip(), q.object.strip())
            if not (t.subject or t.predicate or t.object):
                continue
            (state.resolved if classify(t) == "resolved" else state.triplets).append(t)
        return state

    @property
    def searchable(self) -> list[StateTriplet]:
        return [t for t in self.triplets if classify(t) == "searchable"]

    @property
    def fuzzy(self) -> list[StateTriplet]:
        return [t for t in self.triplets if classify(t) == "fuzzy"]

    def snapshot(self) -> StateSnapshot:
        return StateSnapshot(resolved=list(self.resolved), searchable=self.searchable, fuzzy=self.fuzzy)

    def facts(self) -> list[str]:
        return [fact_text(t) for t in self.resolved]


@dataclass
class UpdateOutcome:
    bindings: list[BindingRecord] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    newly_resolved: list[str] = field(default_factory=list)
    new_searchable: list[str] = field(default_factory=list)


def _match(open_triplets: list[StateTriplet], returned: QueryTriplet, taken: set[str]) -> StateTriplet | None:
    """The open triplet a returned triplet rewrites: every known part agrees (after normalization);
    placeholder parts may carry a value. Among several candidates, the one with most agreeing parts.

    LLMs often reword the predicate ("performer" -> "performed by"), so a second, loose pass ignores
    a known predicate when a known subject or object agrees."""
    for loose in (False, True):
        best, best_score = None, -1
        for t in open_triplets:
            if t.id in taken:
                continue
            score, anchored = 0, False
            for i, (mine, theirs) in enumerate(zip(t.query.parts, returned.parts)):
                if is_placeholder(mine):
                    score += _placeholder_key(mine) == _placeholder_key(theirs)
                elif _same(mine, theirs):
                    score += 2
                    anchored = anchored or i != 1
                elif not (loose and i == 1):
                    break
            else:
                if (anchored or not loose) and score > best_score:
                    best, best_score = t, score
        if best is not None:
            return best
    return None


def _substitute(t: StateTriplet, placeholder: str, value: str) -> StateTriplet:
    key = _placeholder_key(placeholder)
    parts = [
        PLACEHOLDER.sub(lambda m: value if m.group(0).lower() == key else m.group(0), p)
        for p in (t.subject, t.predicate, t.object)
    ]
    return replace(t, subject=parts[0], predicate=parts[1], object=parts[2])


def apply_solve(state: State, result: SolveResult) -> UpdateOutcome:
    """Fold one solver reply into `state` (in place) and say what changed.

    Order: (1) values read off returned triplets that rewrite an open one (a bare `?` is filled
    right there, a named placeholder becomes a binding); (2) the solver's binding map, which wins
    over (1) for the same placeholder; (3) every binding substituted into every open triplet;
    (4) triplets left with no placeholder move to resolved.
    """
    out = UpdateOutcome()
    before_ids = {t.id for t in state.searchable}
    pending: dict[str, BindingRecord] = {}  # placeholder key -> record
    _read_rewritten_triplets(state, result, pending, out)  # 1
    _read_binding_map(state, result, pending, out)  # 2
    _propagate(state, pending, out)  # 3
    still_open = []  # 4
    for t in state.triplets:
        if classify(t) == "resolved":
            if not any(_same_fact(t, f) for f in state.resolved):
                state.resolved.append(t)
            out.newly_resolved.append(t.id)
        else:
            still_open.append(t)
    state.triplets = still_open
    out.new_searchable = [t.id for t in state.searchable if t.id not in before_ids]
    return out


def _read_rewritten_triplets(
    state: State, result: SolveResult, pending: dict[str, BindingRecord], out: UpdateOutcome
) -> None:
    """Values read off the triplets the solver returned, each matched to the open triplet it rewrites."""
    taken: set[str] = set()
    opened = list(state.triplets)
    for r in result.triplets:
        t = _match(opened, r, taken)
        if t is None:
            out.unmatched.append(r.text())
            continue
        taken.add(t.id)
        parts = list(t.query.parts)
        for i, (mine, theirs) in enumerate(zip(t.query.parts, r.parts)):
            if not is_placeholder(mine) or is_empty_value(theirs):
                continue
            if mine.strip() not in placeholder_tokens(mine):  # words around the placeholder(s)
                for tok, value in _values_in(mine, theirs).items():
                    if not is_empty_value(value):
                        pending.setdefault(_placeholder_key(tok), BindingRecord(tok, value, origin="triplet"))
                continue
            if mine.strip() == "?":
                parts[i] = theirs.strip()  # an anonymous placeholder belongs to this triplet alone
                rec = BindingRecord(placeholder="?", value=theirs.strip(), origin="triplet", applied_to=[t.id])
                out.bindings.append(rec)
            else:
                pending.setdefault(
                    _placeholder_key(mine), BindingRecord(mine.strip(), theirs.strip(), origin="triplet")
                )
        state.triplets[state.triplets.index(t)] = replace(t, subject=parts[0], predicate=parts[1], object=parts[2])


def _read_binding_map(state: State, result: SolveResult, pending: dict[str, BindingRecord], out: UpdateOutcome) -> None:
    """The solver's `?x -> value` map; it wins over values read off rewritten triplets."""
    for name, value in result.bindings.items():
        name, value = str(name).strip(), str(value).strip()
        if not name.startswith("?"):
            name = "?" + name
        if is_empty_value(value):
            continue
        if name == "?":
            holders = [t for t in state.triplets if any("?" in placeholder_tokens(p) for p in t.query.parts)]
            if len(holders) != 1:
                out.bindings.append(BindingRecord("?", value, note="ignored: a bare ? binding is ambiguous"))
                continue
            t = holders[0]
            state.triplets[state.triplets.index(t)] = replace(
                t, **{f: value for f in ("subject", "predicate", "object") if getattr(t, f).strip() == "?"}
            )
            out.bindings.append(BindingRecord("?", value, applied_to=[t.id]))
            continue
        pending[_placeholder_key(name)] = BindingRecord(name, value, origin="bindings")


def _propagate(state: State, pending: dict[str, BindingRecord], out: UpdateOutcome) -> None:
    """Substitute every new binding into every open triplet holding its placeholder (ours: the
    engine propagates deterministically on top of what the solver rewrote)."""
    for key, rec in pending.items():
        if key in state.bound:
            rec.note = f"ignored: {rec.placeholder} was already bound to {state.bound[key]!r}"
            out.bindings.append(rec)
            continue
        for i, t in enumerate(state.triplets):
            if any(key in (tok.lower() for tok in placeholder_tokens(p)) for p in t.query.parts):
                state.triplets[i] = _substitute(t, key, rec.value)
                rec.applied_to.append(t.id)
        if rec.applied_to:
            state.bound[key] = rec.value
        else:
            rec.note = "not in any open triplet"
        out.bindings.append(rec)


def _same_fact(a: StateTriplet, b: StateTriplet) -> bool:
    return all(_same(x, y) for x, y in zip(a.query.parts, b.query.parts))
