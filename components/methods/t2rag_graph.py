"""T2RAG's placeholder dependency graph and state lists, shared by its stepper and its text steps
(components/methods/t2rag.py): the queues' colours, the graph after each round, the state as HTML,
and the ranks a round's fused chunks had in each list (`chunk_channel`)."""

from __future__ import annotations

from components.graphs.graph import GEdge, GNode, LegendItem
from components.shell.safe import esc
from engine.methods.t2rag.retrieval import CHANNELS

QUEUE_COLORS = {"resolved": "#2a9d8f", "searchable": "#e9a23b", "fuzzy": "#e76f51"}
QUEUES = ("resolved", "searchable", "fuzzy")
DEP_LEGEND = [
    LegendItem("resolved triplet", QUEUE_COLORS["resolved"], "line"),
    LegendItem("searchable (one placeholder)", QUEUE_COLORS["searchable"], "line"),
    LegendItem("fuzzy (two or more)", QUEUE_COLORS["fuzzy"], "line"),
    LegendItem("open placeholder", "#e76f51"),
    LegendItem("filled placeholder", "#2a9d8f"),
    LegendItem("filled this round", "#f4a261"),
    LegendItem("entity", "#a8c5e6"),
]

#: said of a round's chunks when `chunk_channel` fused them (`fused`)
FUSED_NOTE = (
    "; fused from the proposition walk and the dense and BM25 chunk searches (`chunk_channel`), each "
    "chunk's rank in every list beside its name"
)


def fused(chunks) -> bool:
    """Whether a round's shown chunks were fused by `chunk_channel` (a rank other than the walk's)."""
    return any(set(c.ranks) - {"walk"} for c in chunks)


def ranks_label(ranks: dict[str, int]) -> str:
    """A shown chunk's rank in each list `chunk_channel` fused: "walk #3 · dense #1 · bm25 —"."""
    return " · ".join(f"{name} #{ranks[name]}" if name in ranks else f"{name} —" for name in CHANNELS)


def queue_of(snapshot) -> dict[str, str]:
    out = {}
    for q in QUEUES:
        for t in getattr(snapshot, q):
            out[t.id] = q
    return out


def state_html(snapshot, fresh: set[str], title: str) -> str:
    parts = [f"<b>{esc(title)}</b>"]
    for q in QUEUES:
        items = getattr(snapshot, q)
        parts.append(
            f'<div style="margin-top:.4em"><span style="color:{QUEUE_COLORS[q]};font-weight:600">'
            f"{q} ({len(items)})</span><ul style='margin:.1em 0 .1em 1.2em;padding:0'>"
        )
        for t in items:
            text = esc(f"{t.id}: {t.text()}")
            parts.append(f"<li><mark>{text}</mark> 🆕</li>" if t.id in fresh else f"<li>{text}</li>")
        parts.append("</ul></div>")
    return "".join(parts)


def bindings_until(trace, upto: int) -> dict[str, str]:
    """Placeholder -> value the state took (a binding it ignored filled nothing)."""
    vals: dict[str, str] = {}
    for r in trace.rounds[:upto]:
        for b in r.bindings:
            if b.applied_to:
                vals.setdefault(b.placeholder, b.value)
    return vals


def sources_until(trace, upto: int) -> dict[str, tuple[int, object]]:
    """placeholder -> (round, its first BindingRecord) over the first `upto` rounds."""
    out: dict[str, tuple[int, object]] = {}
    for r in trace.rounds[:upto]:
        for b in r.bindings:
            out.setdefault(b.placeholder, (r.index, b))
    return out


def source_text(rnd: int, b, chunks: dict[str, tuple[str, str]]) -> str:
    """Where a value came from, as the click panel shows it: the round, the solver's named source,
    the sentence stating it and the chunk (its name and text)."""
    lines = [f"{b.placeholder} = {b.value}: filled in round {rnd}" + (f" from {b.source}" if b.source else "")]
    if b.quote:
        lines.append(f"“{b.quote}”")
    for cid in b.chunk_ids[:2]:
        name, text = chunks.get(cid, (cid, ""))
        lines.append(f"Source chunk: {name}" + (f"\n{text}" if text else ""))
    return "\n".join(lines)


def dependency_graph(
    trace, round_pos: int, chunks: dict[str, tuple[str, str]] | None = None
) -> tuple[list[GNode], list[GEdge]]:
    """Placeholders and entities of the decomposition, edges coloured by each triplet's queue after
    round `round_pos` (0 = right after decomposing); placeholders filled in that round stand out.
    A click on a filled placeholder, or on a triplet that holds one, shows the value's source
    chunk (`chunks`: chunk id -> (name, text), components.chunk_names.chunk_texts)."""
    chunks = chunks or {}
    d = trace.decomposition
    if d is None:
        return [], []
    snap = d.state if round_pos == 0 else trace.rounds[round_pos - 1].state_after
    queue = queue_of(snap)
    bound = bindings_until(trace, round_pos)
    fresh = {b.placeholder for b in trace.rounds[round_pos - 1].bindings if b.applied_to} if round_pos else set()
    current = {t.id: t for q in QUEUES for t in getattr(snap, q)}
    sources = sources_until(trace, round_pos)
    nodes: dict[str, GNode] = {}
    edges: list[GEdge] = []

    def node_for(tid: str, i: int, part: str) -> str:
        p = part.strip()
        if p.startswith("?"):
            nid = p if p != "?" else f"{tid}:?{i}"
            if p in bound:
                color = "#f4a261" if p in fresh else "#2a9d8f"
                label, size = f"{p} = {bound[p]}", 20 if p in fresh else 16
            else:
                color, label, size = "#e76f51", p, 16
            detail = source_text(*sources[p], chunks) if p in sources else ""
            nodes.setdefault(nid, GNode(nid, label, title=label, color=color, size=size, detail=detail))
            return nid
        nid = "e:" + p.lower()
        nodes.setdefault(nid, GNode(nid, p, color="#a8c5e6", size=12))
        return nid

    for t in d.triplets:
        a = node_for(t.id, 0, t.subject)
        b = node_for(t.id, 2, t.object)
        q = queue.get(t.id, "resolved")
        now = current.get(t.id)
        title = f"{t.id} [{q}] {now.text() if now else t.text()}"
        filled = [source_text(*sources[p], chunks) for p in t.placeholders if p in sources]
        edges.append(
            GEdge(
                a,
                b,
                label=t.predicate,
                title=title,
                color=QUEUE_COLORS[q],
                width=3 if q == "resolved" else 2,
                detail="\n\n".join([title, *filled]),
            )
        )
    return list(nodes.values()), edges
