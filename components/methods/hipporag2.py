"""HippoRAG 2's run as plain-text steps (the plug-in view contract: `steps(result, names)`):
facts retrieved -> facts kept (recognition memory, or why it was skipped) -> seed nodes ->
Personalized PageRank (with the top-scored nodes and their edges as a graph) -> ranked passages ->
answer. Presentation mode walks these steps and the offline export embeds them; the app draws the
PageRank graph large and interactive (`show_step`), as KG2RAG's weighted graph.

Every chunk is named by its title and position ("Lilith · chunk 1"), from the corpus when it is at
hand, else from the titles the trace recorded; never by its stored id.
"""

from __future__ import annotations

from components.chunk_names import chunk_name, chunk_names
from components.graphs.graph import GEdge, GNode, LegendItem
from components.graphs.palette import tint
from components.graphs.static import graph_payload
from components.steps import Section, Step
from components.widgets.llm_calls import call_summary

PHRASE, PASSAGE, READ = "#0072B2", "#D55E00", "#7a3000"
EDGE_COLORS = {"fact": "#555555", "synonym": "#009E73", "passage": "#CC79A7"}
PASSAGES_SHOWN = 10
GRAPH_HEIGHT = 560  # the step's picture: room for 25 nodes' labels, as KG2RAG's weighted graph


def _namer(tr, names: dict[str, str] | None):
    """chunk id -> its readable name: the caller's (from the corpus), else the trace's titles."""
    refs = getattr(tr, "chunks", None) or {}
    # a trace saved before it kept `chunks` still has its ranked passages' titles
    titles = {p.chunk_id: p.title for p in getattr(tr, "ranked", []) if p.title}

    def nm(cid: str) -> str:
        if names and cid in names:
            return names[cid]
        ref = refs.get(cid)
        if ref is not None:
            return chunk_name(ref.title, ref.position)
        short = chunk_names(None, [cid])[cid]  # "<id head>… · chunk n"
        return f"{titles[cid]} · {short.rpartition(' · ')[2]}" if cid in titles and " · " in short else short

    return nm


def _calls(*calls) -> list[tuple[str, str, str]]:
    out = []
    for c in calls:
        if c is not None:
            prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in (c.messages or []))
            out.append((call_summary(c), prompt, c.response or ""))
    return out


def _fact_lines(facts, nm) -> list[str]:
    def bm25(f) -> str:  # `hybrid_facts`: the BM25 half of the score
        lex = getattr(f, "lexical", None)
        return f" (BM25 {lex:.3f})" if lex is not None else ""

    return [f"{f.score:.3f}{bm25(f)}  {f.line}  [{', '.join(nm(c) for c in f.chunk_ids[:2]) or '-'}]" for f in facts]


def _fact_scoring(tr) -> str:
    if getattr(tr.settings, "hybrid_facts", False):
        return "by the mean of cosine and BM25 (each min-max normalized over all facts)"
    return "by cosine (min-max normalized over all facts)"


LEGEND = [
    LegendItem("phrase node", PHRASE),
    LegendItem("passage node", PASSAGE),
    LegendItem("passage the answer step read", READ),
    LegendItem("phrase seed (from a kept fact)", "#000000", "ring"),
    LegendItem("fact edge (its predicate)", EDGE_COLORS["fact"], "line"),
    LegendItem("synonym edge", EDGE_COLORS["synonym"], "dashed"),
    LegendItem("passage-phrase edge", EDGE_COLORS["passage"], "line"),
]


def ppr_graph(tr, names: dict[str, str] | None = None, texts: dict[str, tuple[str, str]] | None = None):
    """(nodes, edges, legend) of the top-scored PPR nodes: phrases blue, passages orange (the ones
    the answer step read dark), seeds ringed, size by score; fact edges grey and labelled with their
    predicate, synonym edges green and dashed, passage-phrase edges pink. A click on a node shows
    its scores, its facts or its passage text (`texts`: chunk id -> (name, text), when at hand)."""
    nm = _namer(tr, names)
    return _ppr_nodes(tr, nm, texts or {}), _ppr_edges(tr, nm), list(LEGEND)


def _ppr_nodes(tr, nm, texts: dict[str, tuple[str, str]]) -> list[GNode]:
    top = max((n.score for n in tr.ppr_top), default=0.0) or 1.0
    read = set(tr.chunk_ids())
    rank = {p.chunk_id: i for i, p in enumerate(tr.ranked, 1)}
    facts: dict[str, list[str]] = {}
    for f in tr.facts_retrieved:
        for x in (f.subject, f.object):
            facts.setdefault(x, []).append(f"• {f.line}")
    nodes = []
    for n in tr.ppr_top:
        seed = " (seed)" if n.seed > 0 else ""
        if n.kind == "phrase":
            label, color, kind = n.node, PHRASE, "phrase"
            extra = "\n".join(facts.get(n.node, []))
            extra = f"\nIn the retrieved facts:\n{extra}" if extra else ""
        else:
            label = nm(n.node)
            color = READ if n.node in read else PASSAGE
            kind = f"passage, rank {rank[n.node]}" if n.node in rank else "passage"
            kind += ", read by the answer step" if n.node in read else ""
            extra = f"\n{texts[n.node][1]}" if n.node in texts else ""
        head = f"{label}: {kind}{seed}, PageRank {n.score:.4f}, reset weight {n.seed:.4f}"
        # every passage holds a little reset weight (its dense score x passage_node_weight): only a
        # phrase seed, which a kept fact put there, is ringed
        ringed = n.kind == "phrase" and n.seed > 0
        nodes.append(
            GNode(
                _node_id(n.kind, n.node),
                label,
                title=head,
                color=color if ringed or n.kind == "passage" else tint(color, 0.35),
                size=int(12 + 16 * n.score / top),
                detail=head + extra,
                border="#000000" if ringed else "",
            )
        )
    return nodes


def _ppr_edges(tr, nm) -> list[GEdge]:
    from components.methods.kg2rag_graph import edge_widths

    width = edge_widths([e.weight for e in tr.ppr_edges])  # as wide as its weight, over this graph's range
    edges = []
    for e in tr.ppr_edges:
        # a passage edge runs from its passage to a phrase; fact and synonym edges join two phrases
        source = _node_id("passage" if e.kind == "passage" else "phrase", e.source)
        ends = (nm(e.source) if e.kind == "passage" else e.source, e.target)
        label = getattr(e, "label", "")
        edges.append(
            GEdge(
                source,
                _node_id("phrase", e.target),
                label=label if e.kind == "fact" else "",
                title=f"{e.kind} edge{': ' + label if label else ''}, weight {e.weight:.3f}",
                color=EDGE_COLORS.get(e.kind, "#888888"),
                dashed=e.kind == "synonym",
                width=width(e.weight),
                detail=f"{ends[0]} — {label or e.kind} — {ends[1]}\n{e.kind} edge, weight {e.weight:.3f} "
                "(as the PageRank walks it)",
            )
        )
    return edges


def _node_id(kind: str, node: str) -> str:
    """Graph ids by kind: a phrase and a chunk id never collide."""
    return f"{kind}:{node}"


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """The result's steps; `names` (chunk id -> "title · chunk n") names chunks for a reader."""
    tr = result.trace
    if tr is None:
        return [Step("Answer", [Section("Answer", [result.answer or "(none)"])])]
    nm = _namer(tr, names)
    s = tr.settings
    kept = [Section("Facts kept", _fact_lines(tr.facts_kept, nm) or ["(none)"])]
    if tr.filter_skipped:
        kept.insert(0, Section("Recognition memory", [f"{tr.filter_skipped}: every retrieved fact is kept"]))
    ppr = [f"{n.score:.4f}  {n.kind}: {n.node if n.kind == 'phrase' else nm(n.node)}" for n in tr.ppr_top]
    answer = [
        Section("Context as sent", [tr.context or "(empty)"]),
        Section("Answer", [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])),
    ]
    return [
        _retrieved(tr, nm),
        Step("Facts kept", kept, _calls(tr.filter_call)),
        _seeds(tr, nm),
        Step(
            "Personalized PageRank",
            [Section(f"Top nodes (damping {s.damping})", ppr or ["(not run: no fact kept)"])],
            graph=graph_payload(*ppr_graph(tr, names)) if tr.ppr_top else None,
        ),
        _ranked(tr, nm),
        Step("Answer", answer, _calls(tr.call)),
    ]


def _retrieved(tr, nm) -> Step:
    graph = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in tr.graph.items()) or "(none)"
    how = [f"how it was had: {tr.index}"] if getattr(tr, "index", "") else []
    return Step(
        "Facts retrieved",
        [
            Section(
                f"Top {tr.settings.linking_top_k} facts {_fact_scoring(tr)}",
                _fact_lines(tr.facts_retrieved, nm) or ["(the corpus has no triplets)"],
            ),
            Section("Graph", [graph, *how]),
        ],
    )


def _seeds(tr, nm) -> Step:
    phrases = [f"{x.weight:.4f}  {x.node}" for x in tr.seeds if x.kind == "phrase"]
    passages = [f"{x.weight:.4f}  {nm(x.node)}" for x in tr.seeds if x.kind == "passage"]
    seeds = [
        Section("Phrase seeds (fact score / passages the phrase occurs in)", phrases or ["(none)"]),
        Section(f"Passage seeds (dense score x {tr.settings.passage_node_weight}; best shown)", passages or ["(none)"]),
    ]
    if tr.fallback:
        seeds.insert(0, Section("Fallback", [tr.fallback]))
    return Step("Seed nodes", seeds)


def _ranked(tr, nm) -> Step:
    ranked = [
        f"{i}. {p.score:.4f}  {nm(p.chunk_id)}  (dense {p.dense:.3f})"
        + ("  dense retrieval's best, placed first" if getattr(p, "dense_first", False) else "")
        for i, p in enumerate(tr.ranked[:PASSAGES_SHOWN], 1)
    ]
    head = (
        f"Best {min(PASSAGES_SHOWN, len(tr.ranked))} of {len(tr.ranked)}; the first {tr.settings.qa_top_k} are "
        "the context"
    )
    placed = sum(1 for p in tr.ranked if getattr(p, "dense_first", False))
    if getattr(tr.settings, "rank_fusion", 0) and not tr.fallback:
        head += f"; PageRank order fused with the dense order by reciprocal rank (k = {tr.settings.rank_fusion})"
    if placed:
        head += f"; the first {placed} are dense retrieval's best (dense_first), then the PageRank order"
    return Step("Ranked passages", [Section(head, ranked or ["(none)"])])


def show_step(
    result, pos: int, corpus=None, gold: list[str] | None = None, shared: frozenset[str] = frozenset()
) -> None:
    """Step `pos` as the generic view draws it, the PageRank graph large and interactive, each
    passage node opening its text."""
    from components.chunk_names import chunk_names, chunk_texts
    from components.graphs.graph import show_graph
    from components.methods.base import draw_sections_and_calls
    from components.widgets.answer_box import show_answer

    tr = result.trace
    mentioned = list(tr.chunk_ids()) + list(getattr(tr, "chunks", {}) or {})
    all_steps = steps(result, chunk_names(corpus, mentioned) if corpus is not None else None)
    step = all_steps[max(0, min(pos, len(all_steps) - 1))]
    if step.title == "Personalized PageRank" and tr.ppr_top:
        texts = chunk_texts(corpus, [n.node for n in tr.ppr_top if n.kind == "passage"])
        names = {c: name for c, (name, _) in texts.items()}
        nodes, edges, legend = ppr_graph(tr, names or None, texts)
        show_graph(nodes, edges, height=GRAPH_HEIGHT, legend=legend)
    elif step.graph:
        from components.graphs.static import from_payload

        nodes, edges, legend = from_payload(step.graph)
        show_graph(nodes, edges, height=GRAPH_HEIGHT, legend=legend)
    draw_sections_and_calls(step, "hippo_call")
    if step is all_steps[-1]:
        show_answer(result, gold)


def first_stage(result) -> str:
    """HippoRAG 2's first retrieval stage, as it ran."""
    tr = result.trace
    facts = (
        "facts by cosine + BM25" if getattr(getattr(tr, "settings", None), "hybrid_facts", False) else "facts by cosine"
    )
    if getattr(tr, "fallback", ""):
        return f"first stage: {facts}; no fact kept, so dense (cosine) passages"
    memory = "recognition memory skipped" if getattr(tr, "filter_skipped", "") else "an LLM filter"
    return f"first stage: {facts}, {memory}, then Personalized PageRank"
