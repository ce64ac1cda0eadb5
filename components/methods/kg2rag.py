"""KG2RAG's view (the contract: components/methods/base.py): its trace step by step, seeds, each
expansion hop, the weighted graph with spanning-tree edges solid and pruned edges dashed, walk
order, tree ranking, the context as sent, the answer; the same as text steps, its evidence chain
(the selected trees), why an answer is empty, and what its first stage ran."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.chunk_names import chunk_names
from components.contract import PageText
from components.graphs.graph import show_graph
from components.methods.kg2rag_graph import (
    PRUNED_COLORS,
    PRUNED_WHY,
    UNSELECTED_TINT,
    edge_widths,
    plural,
    tree_names,
    weighted_graph,
)
from components.shell.state import content_key, sticky_expander
from components.steps import Section, Step, call_tuples, graph_payload, name_of
from components.widgets.answer_box import show_answer
from components.widgets.evidence_chain import Citation
from components.widgets.llm_calls import show_call
from components.widgets.stepper import stepper

COLOR = "#2a9d8f"
PAGE = PageText(
    "KG2RAG",
    "🕸️",
    "🕸️ KG2RAG",
    "Knowledge-graph-guided expansion: seed chunks, expand over the entity graph, keep one maximum "
    "spanning tree per component, rank the trees, answer from the best.",
)
__all__ = [
    "COLOR",
    "PAGE",
    "PRUNED_COLORS",
    "PRUNED_WHY",
    "UNSELECTED_TINT",
    "caveat",
    "edge_widths",
    "evidence_chain",
    "fair_reference",
    "first_stage",
    "node_chunks",
    "seed_lines",
    "seed_stage_label",
    "show",
    "show_step",
    "step_labels",
    "steps",
    "weighted_graph",
]


def step_labels(result) -> list[str]:
    return (
        ["Seeds"]
        + [f"Hop {h.hop}" for h in result.trace.hops]
        + ["Weighted graph", "Tree ranking", "Selected context", "Answer"]
    )


def _seeds(tr, names: dict[str, str]) -> None:
    hybrid = any(s.fused_score is not None for s in tr.seeds)
    st.markdown(f"**{seed_stage_label(tr)}** (seed k = {tr.settings.k})")
    rows = [
        {"rank": i, "chunk": names.get(s.chunk_id, s.chunk_id), "score": round(s.score, 4), "triplets": s.n_triplets}
        for i, s in enumerate(tr.seeds, 1)
    ]
    columns = ["rank", "chunk", "score", "triplets"]
    if hybrid:  # the fused score ranked them; the cosine is the edge weight the graph uses
        for row, s in zip(rows, tr.seeds):
            row["fused score (RRF)"], row["cosine (edge weight)"] = round(s.fused_score or 0.0, 5), row.pop("score")
        columns = ["rank", "chunk", "fused score (RRF)", "cosine (edge weight)", "triplets"]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, width="stretch")
    st.markdown("**Seed entities** (the first frontier)")
    st.code(", ".join(tr.seed_entities) or "(none)", language=None, wrap_lines=True)
    if tr.note:
        st.warning(tr.note)


def _hop(h, names: dict[str, str]) -> None:
    st.markdown(
        f"**Hop {h.hop}**: expanded from {plural(len(h.frontier), 'entity', 'entities')}, reached "
        f"{len(h.entities_reached)} new, followed {plural(len(h.triplet_ids), 'triplet')}"
    )
    c1, c2 = st.columns(2)
    c1.markdown("Frontier")
    c1.code(", ".join(h.frontier) or "(none)", language=None, wrap_lines=True)
    c2.markdown("Entities reached")
    c2.code(", ".join(h.entities_reached) or "(none)", language=None, wrap_lines=True)
    st.markdown("**Chunks added**")
    st.dataframe(
        pd.DataFrame(
            [{"chunk": names.get(c.chunk_id, c.chunk_id), "score": round(c.score, 4)} for c in h.chunks_added],
            columns=["chunk", "score"],
        ),
        hide_index=True,
        width="stretch",
    )
    if h.entity_caps or h.cut_by_total_cap:
        st.markdown("**Cut by the caps**")
        for c in h.entity_caps:
            st.caption(
                f"hub entity {c.entity}: kept {c.kept} of {plural(c.degree, 'edge')} "
                f"({plural(len(c.cut_triplet_ids) + c.unread, 'triplet')} not followed"
                + (f", {c.unread} of them never read: the read cap" if c.unread else "")
                + ")"
            )
        if h.cut_by_total_cap:
            st.caption(
                "over the expansion cap: " + ", ".join(names.get(c.chunk_id, c.chunk_id) for c in h.cut_by_total_cap)
            )


def _graph(tr, names: dict[str, str], corpus) -> None:
    st.markdown(
        f"**Weighted graph**: {plural(len(tr.nodes), 'entity', 'entities')}, {plural(len(tr.edges), 'edge')}, "
        f"{plural(len(tr.trees), 'component')}, each drawn in its own region. Solid: maximum-spanning-tree "
        "edges numbered in walk order (thicker = heavier); dashed: pruned. Pale trees were not selected. "
        "Click a node or an edge for its triplet and source chunk."
    )
    nodes, edges, legend = weighted_graph(tr, corpus)
    show_graph(nodes, edges, height=600, legend=legend)  # the step's picture: room for a forest's labels
    tnames = tree_names(tr)
    for t in tr.trees:  # rank order
        with sticky_expander(
            f"{tnames[t.tree_id]}{' (selected)' if t.selected else ''}: "
            f"{plural(len(t.kept_edges), 'edge')} in walk order, {len(t.pruned_edges)} pruned, "
            f"{plural(len(t.chunk_ids), 'chunk')}",
            content_key("kgtree", t.tree_id, [e.line for e in t.kept_edges], t.chunk_ids),
        ):
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "walk": i,
                            "triplet": e.line,
                            "chunk": names.get(e.chunk_id, e.chunk_id),
                            "weight": round(e.weight, 4),
                        }
                        for i, e in enumerate(t.kept_edges, 1)
                    ],
                    columns=["walk", "triplet", "chunk", "weight"],
                ),
                hide_index=True,
                width="stretch",
            )
            if t.pruned_edges:
                st.dataframe(
                    pd.DataFrame(
                        [
                            {
                                "pruned": p.edge.line,
                                "reason": p.reason,
                                "chunk": names.get(p.edge.chunk_id, p.edge.chunk_id),
                                "weight": round(p.edge.weight, 4),
                            }
                            for p in t.pruned_edges
                        ]
                    ),
                    hide_index=True,
                    width="stretch",
                )


def _ranking(tr) -> None:
    st.markdown(f"**Ranker:** {tr.ranker or '-'}")
    tnames = tree_names(tr)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "rank": i,
                    "tree": tnames[t.tree_id],
                    "score": None if t.rank_score is None else round(t.rank_score, 4),
                    "selected": "✓" if t.selected else "",
                    "chunks": len(t.chunk_ids),
                    "note": t.note,
                    "triplet form": t.triplet_form,
                }
                for i, t in enumerate(tr.trees, 1)
            ],
            columns=["rank", "tree", "score", "selected", "chunks", "note", "triplet form"],
        ),
        hide_index=True,
        width="stretch",
    )


def _context(tr, names: dict[str, str]) -> None:
    listed = ", ".join(names.get(c, c) for c in tr.tree_chunk_ids) or "none"
    st.markdown(f"**Chunks from selected trees** ({len(tr.tree_chunk_ids)}): {listed}")
    if tr.fill_chunk_ids:
        st.markdown(
            "**Seed chunks added as fill** (trees gave fewer than k/2): "
            + ", ".join(names.get(c, c) for c in tr.fill_chunk_ids)
        )
    st.markdown("**Context exactly as sent**")
    st.code(tr.context or "(empty)", language=None, wrap_lines=True)


def show_step(
    result, pos: int, corpus=None, gold: list[str] | None = None, shared: frozenset[str] = frozenset()
) -> None:
    """Draw step `pos` of the KG2RAG trace (the stepper lives with the caller)."""
    tr = result.trace
    labels = step_labels(result)
    pos = max(0, min(pos, len(labels) - 1))
    name = labels[pos]
    names = chunk_names(corpus, tr.chunk_ids())
    if pos == 0:
        _seeds(tr, names)
    elif name.startswith("Hop "):
        _hop(tr.hops[pos - 1], names)
    elif name == "Weighted graph":
        _graph(tr, names, corpus)
    elif name == "Tree ranking":
        _ranking(tr)
    elif name == "Selected context":
        _context(tr, names)
    else:
        show_answer(result, gold)
        show_call(tr.call, label="answer")
        if tr.timings:
            st.caption("Seconds per step: " + ", ".join(f"{k} {v:.3f}" for k, v in tr.timings.items()))


def show(result, corpus=None, state_key: str = "kg2rag_step", gold: list[str] | None = None) -> None:
    show_step(result, stepper(state_key, step_labels(result)), corpus, gold)


# --- the first stage, as the seed view, the text steps and the Compare column name it ------------


def _hybrid(tr) -> bool:
    return getattr(getattr(tr, "settings", None), "seeds", None) == "hybrid"


def seed_stage_label(tr) -> str:
    """What KG2RAG's first stage ran, in the words of the seed view and the export."""
    if _hybrid(tr):
        return f"seeds: BM25 + dense, reciprocal-rank fusion (top {len(tr.seeds)}, in fused order)"
    return f"seeds: dense, top {len(tr.seeds)} chunks by cosine similarity"


def seed_lines(tr, name) -> list[str]:
    """The seed step as text lines, in rank order with the scores that ranked them: the fused score
    for hybrid seeds (their cosine is the edge weight, not their rank), else the cosine."""
    fused = any(getattr(s, "fused_score", None) is not None for s in tr.seeds)
    return [
        f"{f'fused {s.fused_score:.4f} · cosine {s.score:.3f}' if fused else f'cosine {s.score:.3f}'}  "
        f"{name(s.chunk_id)}, {s.n_triplets} triplets"
        for s in tr.seeds
    ] or ["(none)"]


def first_stage(result) -> str:
    hybrid = _hybrid(result.trace)
    return "first stage: " + ("BM25 + dense, reciprocal-rank fusion" if hybrid else "dense (cosine)")


def fair_reference(result) -> str | None:
    """Hybrid seeds are read beside the Hybrid RAG baseline (the same first stage)."""
    return "hybrid" if _hybrid(result.trace) else None


# --- the same run as text steps (presentation, export) ------------------------------------------


def _tree_lines(tr, nm) -> list[str]:
    out = []
    for rank, t in enumerate(tr.trees, 1):
        out.append(
            f"Tree {rank}: score {t.rank_score if t.rank_score is None else round(t.rank_score, 3)}"
            f"{' SELECTED' if t.selected else ''}{' - ' + t.note if t.note else ''}"
        )
        out += [f"    {i}. {e.line}  [{nm(e.chunk_id)}, w={e.weight:.3f}]" for i, e in enumerate(t.kept_edges, 1)]
        out += [f"    pruned ({p.reason}): {p.edge.line}" for p in t.pruned_edges]
    return out


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """Seeds, each hop, the trees with their ranking (one step: the view's graph and ranking),
    the selected context, the answer (the contract's one required function)."""
    tr = result.trace
    nm = lambda c: name_of(names, c)  # noqa: E731
    out = [
        Step(
            "Seed chunks",
            [
                Section(seed_stage_label(tr), seed_lines(tr, nm)),
                Section("Seed entities", [", ".join(tr.seed_entities) or "(none)"]),
            ],
        )
    ]
    for h in tr.hops:
        out.append(
            Step(
                f"Expansion hop {h.hop}",
                [
                    Section("Expanded from", [", ".join(h.frontier) or "(none)"]),
                    Section("Entities reached", [", ".join(h.entities_reached) or "(none)"]),
                    Section("Chunks added", [f"{c.score:.3f}  {nm(c.chunk_id)}" for c in h.chunks_added] or ["(none)"]),
                    Section(
                        "Cut by caps",
                        [f"{c.entity}: kept {c.kept} of {c.degree} edges" for c in h.entity_caps]
                        + [f"{nm(c.chunk_id)} (over the expansion cap)" for c in h.cut_by_total_cap]
                        or ["(nothing cut)"],
                    ),
                ],
            )
        )
    graph_at = len(out)  # the view's "Weighted graph" step; the ranking after it is drawn here too
    out.append(
        Step(
            "Spanning trees and ranking",
            [
                Section(
                    f"Weighted graph: {len(tr.nodes)} entities, {len(tr.edges)} edges",
                    _tree_lines(tr, nm) or ["(no graph)"],
                ),
                Section("Ranker", [tr.ranker or "(none)"]),
            ],
            graph=graph_payload(*weighted_graph(tr)),
            view_step=graph_at + 1,
        )
    )
    sel = [Section("Chunks from selected trees", [nm(c) for c in tr.tree_chunk_ids] or ["(none)"])]
    if tr.fill_chunk_ids:
        sel.append(Section("Seed chunks added as fill", [nm(c) for c in tr.fill_chunk_ids]))
    sel.append(Section("Context as sent", [tr.context or "(empty)"]))
    if tr.note:
        sel.append(Section("Note", [tr.note]))
    out.append(Step("Selected context", sel, view_step=graph_at + 2))
    out.append(
        Step(
            "Answer",
            [
                Section(
                    "Answer", [result.answer or "(no answer)"] + ([f"error: {result.error}"] if result.error else [])
                )
            ],
            call_tuples(tr.call),
        )
    )
    return out


# --- evidence and caveats -----------------------------------------------------------------------


def evidence_chain(result) -> list[Citation]:
    """answer <- the selected trees (their triplets in walk order) <- their chunks."""
    trace = result.trace
    out = []
    for rank, t in enumerate(trace.trees, 1):
        if not t.selected:
            continue
        lines = "; ".join(e.line for e in t.kept_edges) or t.triplet_form
        needles = [x for e in t.kept_edges for x in (e.subject, e.object)]
        out.append(
            Citation(
                f"Tree {rank}" + (f" ({len(t.kept_edges)} triplets)" if t.kept_edges else ""),
                lines,
                list(t.chunk_ids),
                needles,
            )
        )
    if trace.fill_chunk_ids:
        out.append(Citation("Seed chunks added as fill", "", list(trace.fill_chunk_ids), []))
    return out


def node_chunks(result) -> dict[str, list[str]]:
    """Entity node -> the chunks stating its triplets (the export opens them on a node click)."""
    out: dict[str, list[str]] = {}
    for e in result.trace.edges:
        for n in (e.u, e.v):
            if e.chunk_id not in out.setdefault(n, []):
                out[n].append(e.chunk_id)
    return out


def caveat(result) -> tuple[str, str]:
    """('empty', why) for no answer, said from the seeds and trees; else ('', '')."""
    if (result.answer or "").strip():
        return "", ""
    trace = result.trace
    if trace.note:
        return "empty", trace.note
    if not trace.seeds:
        return "empty", "no chunk matched the question, so there was nothing to expand from"
    n = len(trace.tree_chunk_ids) + len(trace.fill_chunk_ids)
    return "empty", f"the answer step found no answer in the {n} chunks it was given"
