"""LightRAG's run as plain-text steps (the plug-in view contract: `steps(result, names)`): keywords
(how they were found, and what departs from LightRAG) -> entities -> relations (with the retrieved
graph) -> chunks -> answer. Presentation mode walks these steps and the offline export embeds them.
"""

from __future__ import annotations

from components.graphs.graph import GEdge, GNode, LegendItem
from components.steps import Section, Step, call_tuples, graph_payload, name_of
from engine.methods.lightrag.method import KEYWORDS_FALLBACK, KEYWORDS_OFFLINE
from engine.methods.lightrag.trace import KEYWORDS_LLM, KEYWORDS_QUESTION, KEYWORDS_RULES

ENTITY, ENDPOINT, RELATION = "#0072B2", "#9ecae1", "#555555"
SHOWN = 40  # entities / relations listed per step (LightRAG's top_k default)
DESCRIPTION_CHARS = 200

STEP_TITLES = ["Keywords", "Entities", "Relations", "Chunks", "Answer"]


def _short(text: str, n: int = DESCRIPTION_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _chunks(names, ids: list[str], n: int = 3) -> str:
    shown = ", ".join(name_of(names, c) for c in ids[:n])
    return (shown + (f" +{len(ids) - n}" if len(ids) > n else "")) or "-"


def _first_shown(items: list) -> str:
    return f"; the first {SHOWN} shown" if len(items) > SHOWN else ""


def _how(tr) -> list[str]:
    if tr.keywords_from == KEYWORDS_RULES:
        return [KEYWORDS_OFFLINE]
    if tr.keywords_from == KEYWORDS_QUESTION:
        return [KEYWORDS_OFFLINE, KEYWORDS_FALLBACK]
    if tr.keywords_from == KEYWORDS_LLM:
        return ["LightRAG's keyword-extraction prompt, sent through the reasoner (the call below)"]
    return ["(the keyword step did not run)"]


def retrieved_graph(tr) -> dict | None:
    """The retrieved relations as a graph (the first `SHOWN` of each list): retrieved entities dark
    blue, other endpoints light."""
    relations = tr.relations[:SHOWN]
    if not relations and not tr.entities:
        return None
    found = {e.name: e for e in tr.entities[:SHOWN]}
    names = list(found) + [n for r in relations for n in (r.source, r.target) if n not in found]
    nodes = []
    for name in dict.fromkeys(names):
        e = found.get(name)
        detail = f"{name}\n{e.description}" if e else f"{name}\n(an endpoint of a retrieved relation)"
        nodes.append(
            GNode(
                name,
                name,
                title=_short(e.description, 120) if e else "",
                color=ENTITY if e else ENDPOINT,
                detail=detail,
            )
        )
    edges = [
        GEdge(
            r.source,
            r.target,
            label=_short(r.keywords, 24),
            title=_short(r.description, 120),
            color=RELATION,
            width=1.0 + min(r.weight, 4.0) / 2,
            detail=f"{r.source} - {r.target} [{r.keywords}]\n{r.description}",
        )
        for r in relations
    ]
    legend = [
        LegendItem("retrieved entity", ENTITY),
        LegendItem("endpoint of a retrieved relation", ENDPOINT),
        LegendItem("retrieved relation (width: chunks stating it)", RELATION, "line"),
    ]
    return graph_payload(nodes, edges, legend)


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """The result's steps; `names` (chunk id -> "title · chunk n") names chunks for a reader."""
    tr = result.trace
    if tr is None:
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    answer = [
        Section("Context as sent", [tr.context or "(empty)"]),
        Section("Answer", [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])),
    ]
    return [
        _keywords_step(tr),
        _entities_step(tr, names),
        _relations_step(tr),
        _chunks_step(tr, names),
        Step("Answer", answer, call_tuples(tr.call)),
    ]


def _keywords_step(tr) -> Step:
    store = ", ".join(f"{v} {k}" for k, v in tr.storage.items()) or "(none)"
    departures = [f"{d.name}: {d.value} (LightRAG: {d.paper})" for d in tr.departures]
    sections = [
        Section("How they were found", _how(tr)),
        Section("High-level keywords (themes: matched against relations)", tr.high_level or ["(none)"]),
        Section("Low-level keywords (names: matched against entities)", tr.low_level or ["(none)"]),
        Section("LightRAG's storage (the corpus's chunks and triplets)", [f"{store}; {tr.storage_note}"]),
        Section("Departures from LightRAG", departures or ["(none)"]),
    ]
    return Step("Keywords", sections, call_tuples(tr.keyword_call))


def _found(tr, key: str) -> str:
    return f" (of {tr.found[key]} found)" if key in tr.found else ""


def _entities_step(tr, names) -> Step:
    lines = [
        f"{e.name} [{e.type}]: {_short(e.description)}  ({_chunks(names, e.chunk_ids)})" for e in tr.entities[:SHOWN]
    ]
    heading = (
        f"Mode {tr.settings.mode}: {len(tr.entities)} entities in the context"
        + _found(tr, "total_entities_found")
        + _first_shown(tr.entities)
    )
    return Step("Entities", [Section(heading, lines or [tr.no_context or "(none)"])])


def _relations_step(tr) -> Step:
    lines = [
        f"{r.source} - {r.target} [{r.keywords}] weight {r.weight:g}: {_short(r.description)}"
        for r in tr.relations[:SHOWN]
    ]
    heading = f"{len(tr.relations)} relations in the context" + _found(tr, "total_relations_found")
    heading += _first_shown(tr.relations)
    return Step("Relations", [Section(heading, lines or ["(none)"])], graph=retrieved_graph(tr))


def _chunks_step(tr, names) -> Step:
    order = (
        "vector-search, entity and relation chunks merged in turn"
        if tr.settings.mode == "mix"
        else "entity and relation chunks merged in turn"
    )
    heading = (
        f"{len(tr.chunks)} chunks in the context (at most {tr.settings.chunk_top_k}), in LightRAG's order: {order}"
    )
    lines = [f"{i}. {name_of(names, c.chunk_id)}" for i, c in enumerate(tr.chunks, 1)]
    return Step("Chunks", [Section(heading, lines or ["(none)"])])
