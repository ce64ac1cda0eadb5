"""A result told as a list of plain-text steps: what presentation mode walks and what the offline
HTML export embeds. Text only (no markup), so every consumer can show it with textContent.

The interactive pages draw richer views from the same traces (components/t2rag_view.py,
components/kg2rag_view.py); this is the compact story of the same run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from components.preset_badge import seed_lines, seed_stage_label
from components.llm_calls import call_summary
from engine.methods.registry import METHODS

METHOD_TITLES = {m.name: m.title for m in METHODS.values()}  # from the engine's one registry


@dataclass
class Section:
    heading: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Step:
    title: str
    sections: list[Section] = field(default_factory=list)
    #: LLM calls of this step, as (summary line, prompt text, raw reply) for the export
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    #: the step's graph as plain data with fixed positions (components.graph.graph_payload), if any
    graph: dict | None = None


def _nm(names: dict[str, str] | None, cid: str) -> str:
    return (names or {}).get(cid, cid)


def _call_tuple(call) -> tuple[str, str, str]:
    prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in (call.messages or []))
    return (call_summary(call), prompt, call.response or "")


def _calls(*calls) -> list[tuple[str, str, str]]:
    return [_call_tuple(c) for c in calls if c is not None]


def _state_lines(snap) -> list[str]:
    if snap is None:
        return []
    out = []
    for name in ("resolved", "searchable", "fuzzy"):
        for t in getattr(snap, name):
            out.append(f"[{name}] {t.id}: {t.text()}")
    return out or ["(empty)"]


def t2rag_steps(result, names: dict[str, str] | None = None) -> list[Step]:
    from engine.methods.t2rag.trace import STOP_REASONS

    from components.graph_static import graph_payload
    from components.t2rag_view import DEP_LEGEND, dependency_graph

    tr = result.trace
    steps: list[Step] = []
    if tr is None:
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    d = tr.decomposition
    if d is not None:
        secs = [Section("Query triplets", _state_lines(d.state))]
        if d.failure:
            secs.append(Section("Note", [d.failure]))
        steps.append(Step("Decompose the question", secs, _calls(d.call),
                          graph_payload(*dependency_graph(tr, 0), DEP_LEGEND, directed=True)))
    for pos, r in enumerate(tr.rounds, 1):
        secs = [Section("Queries", [f"{q.text}  ({q.kind})" for q in r.queries] or ["(none)"]),
                Section(f"Walked propositions (pool of {r.pool_size})",
                        [f"{w.score:.3f}  {w.text}  [{', '.join(_nm(names, c) for c in w.chunk_ids)}]" for w in r.walked] or ["(none)"]),
                Section("Chunks shown to the solver", [f"{_nm(names, c.chunk_id)}: {c.text}" for c in r.chunks]
                        or ["(none)"])]
        fills = [f"{b.placeholder} = {b.value}" + (f"  <- {b.proposition}" if b.proposition else "")
                 + (f"  [{', '.join(_nm(names, c) for c in b.chunk_ids)}]" if b.chunk_ids else "") for b in r.bindings]
        secs.append(Section("Placeholders filled", fills or ["(none this round)"]))
        secs.append(Section("State after the round", _state_lines(r.state_after)))
        if r.solve_skipped:
            secs.append(Section("Solve skipped", [r.solve_skipped]))
        steps.append(Step(f"Round {r.index}", secs, _calls(r.solve_call),
                          graph_payload(*dependency_graph(tr, pos), DEP_LEGEND, directed=True)))
    fin = [Section("Stop reason", [f"{tr.stop_reason}: {STOP_REASONS.get(tr.stop_reason, '')}".strip(": ")])]
    syn = tr.synthesis
    if syn is not None:
        fin.append(Section(f"Synthesis ({syn.mode})", syn.facts or ["(no resolved facts)"]))
    fin.append(Section("Answer", [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])))
    steps.append(Step("Answer", fin, _calls(syn.call if syn else None)))
    return steps


def kg2rag_steps(result, names: dict[str, str] | None = None) -> list[Step]:
    from components.graph_static import graph_payload
    from components.kg2rag_view import weighted_graph

    tr = result.trace
    if tr is None:
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    steps = [Step("Seed chunks", [Section(seed_stage_label(tr), seed_lines(tr, lambda c: _nm(names, c))),
                                  Section("Seed entities", [", ".join(tr.seed_entities) or "(none)"])])]
    for h in tr.hops:
        steps.append(Step(f"Expansion hop {h.hop}", [
            Section("Expanded from", [", ".join(h.frontier) or "(none)"]),
            Section("Entities reached", [", ".join(h.entities_reached) or "(none)"]),
            Section("Chunks added", [f"{c.score:.3f}  {_nm(names, c.chunk_id)}" for c in h.chunks_added] or ["(none)"]),
            Section("Cut by caps", [f"{c.entity}: kept {c.kept} of {c.degree} edges" for c in h.entity_caps]
                    + [f"{_nm(names, c.chunk_id)} (over the expansion cap)" for c in h.cut_by_total_cap] or ["(nothing cut)"])]))
    tree_lines = []
    for rank, t in enumerate(tr.trees, 1):
        tree_lines.append(f"Tree {rank}: score {t.rank_score if t.rank_score is None else round(t.rank_score, 3)}"
                          f"{' SELECTED' if t.selected else ''}{' - ' + t.note if t.note else ''}")
        tree_lines += [f"    {i}. {e.line}  [{_nm(names, e.chunk_id)}, w={e.weight:.3f}]" for i, e in enumerate(t.kept_edges, 1)]
        tree_lines += [f"    pruned ({p.reason}): {p.edge.line}" for p in t.pruned_edges]
    steps.append(Step("Spanning trees and ranking", [
        Section(f"Weighted graph: {len(tr.nodes)} entities, {len(tr.edges)} edges", tree_lines or ["(no graph)"]),
        Section("Ranker", [tr.ranker or "(none)"])], graph=graph_payload(*weighted_graph(tr))))
    sel = [Section("Chunks from selected trees", [_nm(names, c) for c in tr.tree_chunk_ids] or ["(none)"])]
    if tr.fill_chunk_ids:
        sel.append(Section("Seed chunks added as fill", [_nm(names, c) for c in tr.fill_chunk_ids]))
    sel.append(Section("Context as sent", [tr.context or "(empty)"]))
    if tr.note:
        sel.append(Section("Note", [tr.note]))
    steps.append(Step("Selected context", sel))
    steps.append(Step("Answer", [Section("Answer", [result.answer or "(no answer)"]
                                         + ([f"error: {result.error}"] if result.error else []))], _calls(tr.call)))
    return steps


def baseline_steps(result, names: dict[str, str] | None = None) -> list[Step]:
    tr = result.trace
    if tr is None or not hasattr(tr, "stages"):
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    secs = [Section(f"{s.name}", [f"{c.score:.3f}  {_nm(names, c.chunk_id)}" for c in s.chunks] + ([s.note] if s.note else []))
            for s in tr.stages]
    return [Step("Retrieval", secs or [Section("Retrieval", ["(none)"])]),
            Step("Answer", [Section("Context as sent", [tr.context or "(empty)"]),
                            Section("Answer", [result.answer or "(no answer)"])], _calls(tr.call))]


def result_steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """The result's steps; `names` (chunk id -> "title · chunk n") names chunks for a reader."""
    if result.method == "t2rag":
        return t2rag_steps(result, names)
    if result.method == "kg2rag":
        return kg2rag_steps(result, names)
    return baseline_steps(result, names)


def usage_lines(result, names: dict[str, str] | None = None) -> list[str]:
    u = result.usage
    cost = "unknown" if u.cost is None else f"${u.cost:.5f}"
    return [f"reasoner: {result.reasoner or '-'}", f"LLM calls: {u.calls} ({u.cached_calls} cached)",
            f"tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion (billed: "
            f"{u.billed_prompt_tokens} + {u.billed_completion_tokens}; cache hits cost nothing)", f"cost: {cost}",
            f"engine time: {u.engine_time:.3f}s, LLM time: {u.llm_time:.3f}s",
            f"evidence chunks: {', '.join(_nm(names, c) for c in result.evidence_chunk_ids) or '-'}"]
