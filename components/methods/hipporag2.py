"""HippoRAG 2's run as plain-text steps (the plug-in view contract: `steps(result, names)`):
facts retrieved -> facts kept (recognition memory, or why it was skipped) -> seed nodes ->
Personalized PageRank (with the top-scored nodes and their edges as a graph) -> ranked passages ->
answer. Presentation mode walks these steps and the offline export embeds them.
"""

from __future__ import annotations

from components.graphs.graph import GEdge, GNode, LegendItem
from components.graphs.palette import tint
from components.graphs.static import graph_payload
from components.steps import Section, Step
from components.widgets.llm_calls import call_summary

PHRASE, PASSAGE = "#0072B2", "#D55E00"
EDGE_COLORS = {"fact": "#555555", "synonym": "#009E73", "passage": "#CC79A7"}
PASSAGES_SHOWN = 10


def _nm(names: dict[str, str] | None, cid: str) -> str:
    return (names or {}).get(cid, cid)


def _calls(*calls) -> list[tuple[str, str, str]]:
    out = []
    for c in calls:
        if c is not None:
            prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in (c.messages or []))
            out.append((call_summary(c), prompt, c.response or ""))
    return out


def _fact_lines(facts, names) -> list[str]:
    return [f"{f.score:.3f}  {f.line}  [{', '.join(_nm(names, c) for c in f.chunk_ids[:2]) or '-'}]" for f in facts]


def ppr_graph(tr, names: dict[str, str] | None = None) -> dict | None:
    """The top-scored PPR nodes (phrases blue, passages orange; seeds ringed, size by score) and the
    edges among them (fact grey, synonym green, passage-phrase pink)."""
    if not tr.ppr_top:
        return None
    top = max(n.score for n in tr.ppr_top) or 1.0
    nodes = []
    for n in tr.ppr_top:
        label = n.node if n.kind == "phrase" else _nm(names, n.node)
        color = PHRASE if n.kind == "phrase" else PASSAGE
        nodes.append(
            GNode(
                n.node,
                label,
                title=f"{n.kind}: PPR {n.score:.4f}, seed weight {n.seed:.4f}",
                color=color if n.seed > 0 else tint(color, 0.35),
                size=int(10 + 16 * n.score / top),
                detail=f"{label}\nPPR score {n.score:.4f}; reset weight {n.seed:.4f}",
                border="#000000" if n.seed > 0 else "",
            )
        )
    edges = [
        GEdge(
            e.source,
            e.target,
            title=f"{e.kind} edge, weight {e.weight:.3f}",
            color=EDGE_COLORS.get(e.kind, "#888888"),
            dashed=e.kind == "synonym",
            width=1.0 + min(e.weight, 4.0) / 2,
            detail=f"{e.kind} edge, weight {e.weight:.3f}",
        )
        for e in tr.ppr_edges
    ]
    legend = [
        LegendItem("phrase node", PHRASE),
        LegendItem("passage node", PASSAGE),
        LegendItem("seed (reset weight > 0)", "#000000", "ring"),
        LegendItem("fact edge", EDGE_COLORS["fact"], "line"),
        LegendItem("synonym edge", EDGE_COLORS["synonym"], "dashed"),
        LegendItem("passage-phrase edge", EDGE_COLORS["passage"], "line"),
    ]
    return graph_payload(nodes, edges, legend)


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """The result's steps; `names` (chunk id -> "title · chunk n") names chunks for a reader."""
    tr = result.trace
    if tr is None:
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    s = tr.settings
    out = [
        Step(
            "Facts retrieved",
            [
                Section(
                    f"Top {s.linking_top_k} facts by cosine (min-max normalized over all facts)",
                    _fact_lines(tr.facts_retrieved, names) or ["(the corpus has no triplets)"],
                ),
                Section("Graph", [", ".join(f"{v} {k.replace('_', ' ')}" for k, v in tr.graph.items()) or "(none)"]),
            ],
        )
    ]
    kept = [Section("Facts kept", _fact_lines(tr.facts_kept, names) or ["(none)"])]
    if tr.filter_skipped:
        kept.insert(0, Section("Recognition memory", [f"{tr.filter_skipped}: every retrieved fact is kept"]))
    out.append(Step("Facts kept", kept, _calls(tr.filter_call)))
    phrases = [f"{x.weight:.4f}  {x.node}" for x in tr.seeds if x.kind == "phrase"]
    passages = [f"{x.weight:.4f}  {_nm(names, x.node)}" for x in tr.seeds if x.kind == "passage"]
    seeds = [
        Section("Phrase seeds (fact score / passages the phrase occurs in)", phrases or ["(none)"]),
        Section(f"Passage seeds (dense score x {s.passage_node_weight}; best shown)", passages or ["(none)"]),
    ]
    if tr.fallback:
        seeds.insert(0, Section("Fallback", [tr.fallback]))
    out.append(Step("Seed nodes", seeds))
    ppr = [f"{n.score:.4f}  {n.kind}: {n.node if n.kind == 'phrase' else _nm(names, n.node)}" for n in tr.ppr_top]
    out.append(
        Step(
            "Personalized PageRank",
            [Section(f"Top nodes (damping {s.damping})", ppr or ["(not run: no fact kept)"])],
            graph=ppr_graph(tr, names),
        )
    )
    ranked = [
        f"{i}. {p.score:.4f}  {_nm(names, p.chunk_id)}  (dense {p.dense:.3f})"
        for i, p in enumerate(tr.ranked[:PASSAGES_SHOWN], 1)
    ]
    out.append(
        Step(
            "Ranked passages",
            [
                Section(
                    f"Best {PASSAGES_SHOWN} of {len(tr.ranked)}; the first {s.qa_top_k} are the context",
                    ranked or ["(none)"],
                )
            ],
        )
    )
    answer = [
        Section("Context as sent", [tr.context or "(empty)"]),
        Section("Answer", [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])),
    ]
    out.append(Step("Answer", answer, _calls(tr.call)))
    return out
