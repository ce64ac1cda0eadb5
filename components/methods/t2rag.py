"""T2RAG's view (the contract: components/methods/base.py): its trace step by step, decomposition,
each round (state before/after, walked propositions, chunks with the matched spans, placeholders
filled and where from, dependency graph), answer; the same as text steps, its evidence chain, and
why an answer is empty or a guess.

Every string from the trace is escaped before any <mark> or link is added (components.shell.safe).
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from components.chunk_names import chunk_names, chunk_texts
from components.contract import PageText
from components.graphs.graph import show_graph
from components.methods import t2rag_graph as tg
from components.methods.t2rag_graph import DEP_LEGEND, QUEUE_COLORS, QUEUES, dependency_graph, state_html
from components.shell.safe import esc, highlight, html_block
from components.shell.state import content_key, sticky_expander
from components.steps import Section, Step, call_tuples, graph_payload, name_of
from components.widgets.answer_box import show_answer
from components.widgets.evidence_chain import Citation, source_badge
from components.widgets.llm_calls import show_call
from components.widgets.stepper import stepper

COLOR = "#3b6ea8"
PAGE = PageText(
    "Ask (T2RAG)",
    "🔺",
    "🔺 Ask with T2RAG",
    "Triplet-driven thinking: the question becomes triplets with placeholders, filled round by round "
    "from retrieved propositions and their chunks.",
)
__all__ = [
    "COLOR",
    "PAGE",
    "DEP_LEGEND",
    "QUEUE_COLORS",
    "caveat",
    "chunk_card",
    "trace_chunk_texts",
    "dependency_graph",
    "evidence_chain",
    "first_stage",
    "show",
    "show_step",
    "step_labels",
    "steps",
]


def step_labels(result) -> list[str]:
    return ["Decompose"] + [f"Round {r.index}" for r in result.trace.rounds] + ["Answer"]


def _anchor(chunk_id: str) -> str:
    return "chunk-" + re.sub(r"[^A-Za-z0-9_-]", "_", chunk_id)


def _chunk_needles(rnd, corpus) -> dict[str, list[str]]:
    """Per chunk: the entities of the question / answer chain it states, and nothing else.

    The chain is the walked propositions that filled a placeholder (their subject and object) and
    the named entities of the triplets still open before the round. Marking every entity of every
    walked proposition marks nearly every name in the chunk, which tells the reader nothing.
    """
    filling = {b.proposition_triplet_id for b in rnd.bindings if b.proposition_triplet_id is not None}
    chain = [
        p.strip()
        for q in ("searchable", "fuzzy")
        for t in getattr(rnd.state_before, q)
        for p in (t.subject, t.object)
        if p and not p.strip().startswith("?")
    ]
    by_tid = {}
    if corpus is not None and filling:
        try:
            by_tid = {t.triplet_id: t for t in corpus.get_triplets(sorted(filling))}
        except Exception:  # a reopened run whose corpus changed: fall back to the bindings only
            by_tid = {}
    out: dict[str, list[str]] = {c.chunk_id: list(chain) for c in rnd.chunks}
    for w in rnd.walked:
        t = by_tid.get(w.triplet_id)
        for cid in w.chunk_ids:
            if t is not None:
                out.setdefault(cid, []).extend([t.subject, t.object])
    return out


def _body(text: str, title: str) -> str:
    """Chunk text without a leading copy of its title (the card's header already names it)."""
    t = (text or "").lstrip()
    return t[len(title) :].lstrip(" :.-\n") if title and t.startswith(title) else t


def chunk_card(chunk_id: str, name: str, body_html: str, shared: bool = False) -> str:
    """One chunk as a card with an anchor that links can scroll to (clear of the page header)."""
    badge = (
        (
            ' <span style="background:#e3ecfa;color:#2b4c7e;border-radius:8px;padding:0 .5em;'
            'font-size:.8em">⇄ used by both methods</span>'
        )
        if shared
        else ""
    )
    return (
        f'<div id="{_anchor(chunk_id)}" style="border-left:3px solid {"#3b6ea8" if shared else "#ccc"};'
        f'padding-left:.6em;margin:.4em 0;scroll-margin-top:5rem"><small><b>{esc(name)}</b></small>{badge}'
        f"<br>{body_html}</div>"
    )


def _show_round(trace, pos: int, corpus, shared: frozenset[str] = frozenset()) -> None:
    rnd = trace.rounds[pos - 1]
    names = chunk_names(
        corpus,
        [c.chunk_id for c in rnd.chunks]
        + [c for w in rnd.walked for c in w.chunk_ids]
        + [c for b in rnd.bindings for c in b.chunk_ids],
    )
    fresh = set(rnd.newly_resolved) | set(rnd.new_searchable)
    c1, c2 = st.columns(2)
    with c1:
        html_block(state_html(rnd.state_before, set(), "Before the round"))
    with c2:
        html_block(state_html(rnd.state_after, fresh, "After the round (🆕 = changed this round)"))

    st.markdown("**Placeholders filled this round**")
    if not rnd.bindings:
        st.caption(rnd.solve_skipped or "none")
    rows = []
    for b in rnd.bindings:
        links = ", ".join(f'<a href="#{_anchor(c)}">{esc(names.get(c, c))}</a>' for c in b.chunk_ids)
        src = f" ← <i>{esc(b.proposition)}</i>" if b.proposition else ""
        note = f" <small>({esc(b.note)})</small>" if b.note else ""
        badge = f" {source_badge(b.source_kind)}" if b.applied_to else ""
        rows.append(
            f"<li><code>{esc(b.placeholder)}</code> = <mark>{esc(b.value)}</mark>{badge}{src}"
            f"{' · from ' + links if links else ''}{note}</li>"
        )
    if rows:
        html_block("<ul>" + "".join(rows) + "</ul>")
    if rnd.unmatched:
        fate = (
            f" · {len(rnd.adopted)} taken into the state as new clues (adopt_proposed, the paper)"
            if getattr(rnd, "adopted", None)
            else " · shown only, not searched with"
        )
        st.caption("Solver triplets matching no open triplet: " + "; ".join(rnd.unmatched) + fate)

    st.markdown(f"**Queries** ({len(rnd.queries)}) and **walked propositions** (pool of {rnd.pool_size})")
    st.dataframe(
        pd.DataFrame([{"#": i, "query": q.text, "kind": q.kind} for i, q in enumerate(rnd.queries)]),
        hide_index=True,
        width="stretch",
    )
    filling = {b.proposition_triplet_id for b in rnd.bindings if b.proposition_triplet_id is not None}
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "order": i,
                    "score": round(w.score, 4),
                    "proposition": w.text,
                    "query": w.query_index,
                    "chunks": ", ".join(names.get(c, c) for c in w.chunk_ids),
                    "new chunks": ", ".join(names.get(c, c) for c in w.new_chunk_ids),
                    "filled a placeholder": "yes" if w.triplet_id in filling else "",
                }
                for i, w in enumerate(rnd.walked, 1)
            ],
            columns=["order", "score", "proposition", "query", "chunks", "new chunks", "filled a placeholder"],
        ),
        hide_index=True,
        width="stretch",
    )

    ranked = tg.fused(rnd.chunks)
    st.markdown(
        f"**Chunks shown to the solver** ({len(rnd.chunks)}); entities of the question's chain "
        "marked, filled values in orange" + (tg.FUSED_NOTE if ranked else "")
    )
    needles = _chunk_needles(rnd, corpus)
    values = [b.value for b in rnd.bindings]
    for c in rnd.chunks:
        body = highlight(_body(c.text, c.title), needles.get(c.chunk_id, []) + values)
        for v in values:  # values get their own colour on top of the plain match
            body = body.replace(f"<mark>{esc(v)}</mark>", f'<mark style="background:#f4a261">{esc(v)}</mark>')
        name = names.get(c.chunk_id, c.chunk_id) + (f" · {tg.ranks_label(c.ranks)}" if ranked else "")
        html_block(chunk_card(c.chunk_id, name, body, c.chunk_id in shared))

    st.markdown(
        "**Placeholder dependency graph** (edges: green resolved, amber searchable, red fuzzy; "
        "orange node = filled this round)"
    )
    src = chunk_texts(corpus, [c for r in trace.rounds[:pos] for b in r.bindings for c in b.chunk_ids[:2]])
    nodes, edges = dependency_graph(trace, pos, src)
    show_graph(nodes, edges, height=320, directed=True, legend=DEP_LEGEND)
    t = rnd.timing
    st.caption(f"engine {t.engine:.3f}s (retrieve {t.retrieve:.3f}s, update {t.update:.3f}s) · solve {t.solve:.3f}s")
    show_call(rnd.solve_call, label="solve")


def _show_decompose(trace) -> None:
    d = trace.decomposition
    if d is None:
        st.info("No decomposition in this trace.")
        return
    if d.failure:
        st.warning(f"Decomposition problem: {d.failure}. The rounds search with the question instead.")
    html_block(state_html(d.state, set(), "Query triplets, classified by their placeholders"))
    nodes, edges = dependency_graph(trace, 0)
    if nodes:
        st.markdown("**Placeholder dependency graph**")
        show_graph(nodes, edges, height=300, directed=True, legend=DEP_LEGEND)
    show_call(d.call, label="decompose")


def _show_answer(result, gold: list[str] | None = None) -> None:
    from engine.methods.t2rag.trace import STOP_REASONS

    tr = result.trace
    st.info(f"Stop reason: **{tr.stop_reason or '-'}** — {STOP_REASONS.get(tr.stop_reason, '')}")
    syn = tr.synthesis
    if syn is not None:
        st.markdown(f"**Synthesis mode:** {syn.mode}")
        if syn.facts:
            st.markdown("**Resolved facts used**")
            st.code("\n".join(syn.facts), language=None, wrap_lines=True)
        if syn.context:
            with sticky_expander("Context sent with the facts", content_key("t2ctx", syn.context)):
                st.code(syn.context, language=None, wrap_lines=True)
    show_answer(result, gold)
    if syn is not None:
        show_call(syn.call, label="answer")


def show_step(
    result, pos: int, corpus=None, gold: list[str] | None = None, shared: frozenset[str] = frozenset()
) -> None:
    """Draw step `pos` of the T2RAG trace (the stepper lives with the caller); `shared` chunks
    (used by the other methods too, on Compare) are marked."""
    tr = result.trace
    last = len(step_labels(result)) - 1
    pos = max(0, min(pos, last))
    if pos == 0:
        _show_decompose(tr)
    elif pos == last:
        _show_answer(result, gold)
    else:
        _show_round(tr, pos, corpus, shared)


def show(result, corpus=None, state_key: str = "ask_step", gold: list[str] | None = None) -> None:
    """The T2RAG stepper for one result (a fresh run or a reopened trace)."""
    show_step(result, stepper(state_key, step_labels(result)), corpus, gold)


# --- the same run as text steps (presentation, export) ------------------------------------------


def _state_lines(snap) -> list[str]:
    if snap is None:
        return []
    out = [f"[{name}] {t.id}: {t.text()}" for name in QUEUES for t in getattr(snap, name)]
    return out or ["(empty)"]


def _state_section(heading: str, snap) -> Section:
    return Section(heading, _state_lines(snap), dict(QUEUE_COLORS))


def _round_step(tr, pos: int, r, names: dict[str, str] | None) -> Step:
    nm = lambda c: name_of(names, c)  # noqa: E731
    secs = [
        Section("Queries", [f"{q.text}  ({q.kind})" for q in r.queries] or ["(none)"]),
        Section(
            f"Walked propositions (pool of {r.pool_size})",
            [f"{w.score:.3f}  {w.text}  [{', '.join(nm(c) for c in w.chunk_ids)}]" for w in r.walked] or ["(none)"],
        ),
        Section("Chunks shown to the solver", [f"{nm(c.chunk_id)}: {c.text}" for c in r.chunks] or ["(none)"]),
    ]
    fills = [
        f"{b.placeholder} = {b.value}"
        + (f"  <- {b.proposition}" if b.proposition else "")
        + (f"  [{', '.join(nm(c) for c in b.chunk_ids)}]" if b.chunk_ids else "")
        for b in r.bindings
    ]
    secs.append(Section("Placeholders filled", fills or ["(none this round)"]))
    secs.append(_state_section("State after the round", r.state_after))
    if r.solve_skipped:
        secs.append(Section("Solve skipped", [r.solve_skipped]))
    return Step(
        f"Round {r.index}",
        secs,
        call_tuples(r.solve_call),
        graph_payload(*dependency_graph(tr, pos), DEP_LEGEND, directed=True),
    )


def steps(result, names: dict[str, str] | None = None) -> list[Step]:
    """Decomposition, one step per round, the answer (the contract's one required function)."""
    from engine.methods.t2rag.trace import STOP_REASONS

    tr = result.trace
    out: list[Step] = []
    d = tr.decomposition
    if d is not None:
        secs = [_state_section("Query triplets", d.state)] + ([Section("Note", [d.failure])] if d.failure else [])
        out.append(
            Step(
                "Decompose the question",
                secs,
                call_tuples(d.call),
                graph_payload(*dependency_graph(tr, 0), DEP_LEGEND, directed=True),
            )
        )
    out += [_round_step(tr, pos, r, names) for pos, r in enumerate(tr.rounds, 1)]
    fin = [Section("Stop reason", [f"{tr.stop_reason}: {STOP_REASONS.get(tr.stop_reason, '')}".strip(": ")])]
    syn = tr.synthesis
    if syn is not None:
        fin.append(Section(f"Synthesis ({syn.mode})", syn.facts or ["(no resolved facts)"]))
    error = [f"error: {result.error}"] if result.error else []
    fin.append(Section("Answer", [result.answer or "(no answer)"] + error))
    out.append(Step("Answer", fin, call_tuples(syn.call if syn else None)))
    return out


# --- evidence, caveats, facts of a fair comparison ----------------------------------------------


def evidence_chain(result) -> list[Citation]:
    """One citation per placeholder the state took, in the order bound. A binding the state ignored
    (its placeholder already bound, or in no open triplet) filled nothing, so it is not evidence.
    No placeholder filled: the answer came from the chunks retrieved (the trace's evidence)."""
    out: list[Citation] = []
    seen: set[str] = set()
    for r in result.trace.rounds:
        for b in r.bindings:
            if b.placeholder in seen or not b.value or not b.applied_to:
                continue
            seen.add(b.placeholder)
            out.append(
                Citation(
                    f"{b.placeholder} = {b.value}",
                    b.proposition,
                    list(b.chunk_ids),
                    [b.value],
                    b.source_kind or "",
                    binding=True,
                )
            )
    if out or not (result.evidence_chunk_ids and result.answer):
        return out
    return [
        Citation(
            "Answer read from the retrieved chunks (no placeholder filled)",
            "",
            list(result.evidence_chunk_ids),
            [result.answer],
        )
    ]


def trace_chunk_texts(result) -> dict[str, tuple[str, str]]:
    """chunk id -> (title, text) as the solver saw them (the trace keeps its own copies)."""
    out: dict[str, tuple[str, str]] = {}
    for r in result.trace.rounds:
        for c in r.chunks:
            out.setdefault(c.chunk_id, (c.title, c.text))
    return out


def _why(trace) -> str:
    from engine.methods.t2rag.trace import STOP_REASONS

    stop = STOP_REASONS.get(trace.stop_reason, trace.stop_reason or "")
    parsed = trace.synthesis.call.parsed if trace.synthesis and trace.synthesis.call else None
    if isinstance(parsed, dict) and parsed.get("why"):
        return str(parsed["why"]) + (f" ({stop})" if stop else "")
    open_ = _open_placeholders(trace)
    if open_:
        filled = "was" if len(open_) == 1 else "were"
        return f"{', '.join(open_)} {filled} never filled" + (f" ({stop})" if stop else "")
    return f"the synthesis was forced ({stop})" if stop else "the synthesis was forced"


def _open_placeholders(trace) -> list[str]:
    """The placeholders still open when T2RAG stopped (its last state), e.g. ['?answer']."""
    snap = trace.rounds[-1].state_after if trace.rounds else getattr(trace.decomposition, "state", None)
    seen: dict[str, None] = {}
    for t in (snap.searchable + snap.fuzzy) if snap is not None else []:
        for p in t.placeholders:
            seen.setdefault(p, None)
    return list(seen)


def caveat(result) -> tuple[str, str]:
    """('guess', why) for an answer synthesized with placeholders still open, ('empty', why) for no
    answer, else ('', '')."""
    trace = result.trace
    empty = not (result.answer or "").strip()
    if trace.synthesis is None:
        return ("empty", result.stop_reason or "T2RAG returned no answer") if empty else ("", "")
    forced = trace.synthesis.mode == "forced"
    if empty:
        return "empty", _why(trace) if forced else "the answer step returned nothing"
    return ("guess", _why(trace)) if forced else ("", "")


def first_stage(result) -> str:
    return "first stage: dense search over propositions (the question's triplets)"
