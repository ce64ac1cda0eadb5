"""The evidence chain of an answer, read from the trace (never recomputed in the page).

T2RAG: answer ← each placeholder binding (value) ← the proposition it was read from ← the chunk
that states it, with the sentence holding the value marked, and a badge saying how the link was made
(cited: the solver named that evidence and it states the value; guessed: the solver named none and
the engine found the value in a walked proposition; unverified: the named evidence does not state
it). Bindings the state ignored (already bound, in no open triplet) are not in the chain.
KG2RAG: answer ← the selected trees (their triplets in walk order) ← their chunks. Each citation opens its chunk in place (a
<details> element), so it works the same in every view without scrolling the page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from components.safe import esc, highlight


@dataclass
class Citation:
    claim: str  # "?x = Akkadian" or "Tree 1 (5 triplets)"
    support: str = ""  # the proposition / the triplets, as text
    chunk_ids: list[str] = field(default_factory=list)
    needles: list[str] = field(default_factory=list)  # what to mark in the chunk
    kind: str = ""  # a T2RAG binding's source kind (BindingRecord.source_kind): the badge drawn
    binding: bool = False  # a placeholder's value (drawn with its source-kind badge)


#: BindingRecord.source_kind -> (badge label, colour, what it means): one table for every view
SOURCE_KINDS: dict[str, tuple[str, str, str]] = {
    "proposition": ("cited", "#2a9d8f", "the solver named this proposition, and it states the value"),
    "chunk": ("cited", "#2a9d8f", "the solver named this chunk, and it states the value"),
    "guessed": ("guessed", "#b7791f", "the solver named no source: the engine found the value in a walked "
                "proposition"),
    "unverified": ("unverified", "#c0392b", "the source the solver named does not state the value, or names "
                   "nothing it was shown"),
    "": ("no source", "#777", "the solver named no source and no walked proposition states the value"),
}


def source_badge(kind: str) -> str:
    """A small coloured label for a binding's source kind, its meaning in the hover title."""
    label, color, why = SOURCE_KINDS.get(kind or "", SOURCE_KINDS[""])
    return (f'<span class="tl-source tl-source-{esc(label.replace(" ", "-"))}" title="{esc(why)}" '
            f'style="border:1px solid {color};color:{color};border-radius:8px;padding:0 .45em;'
            f'font-size:.78em;white-space:nowrap">{esc(label)}</span>')


def t2rag_chain(trace) -> list[Citation]:
    """One citation per placeholder the state took, in the order bound. A binding the state ignored
    (its placeholder already bound, or in no open triplet) filled nothing, so it is not evidence."""
    out: list[Citation] = []
    seen: set[str] = set()
    for r in trace.rounds:
        for b in r.bindings:
            if b.placeholder in seen or not b.value or not b.applied_to:
                continue
            seen.add(b.placeholder)
            out.append(Citation(f"{b.placeholder} = {b.value}", b.proposition, list(b.chunk_ids), [b.value],
                                b.source_kind or "", binding=True))
    return out


def kg2rag_chain(trace) -> list[Citation]:
    out = []
    for rank, t in enumerate(trace.trees, 1):
        if not t.selected:
            continue
        lines = "; ".join(e.line for e in t.kept_edges) or t.triplet_form
        needles = [x for e in t.kept_edges for x in (e.subject, e.object)]
        out.append(Citation(f"Tree {rank}" + (f" ({len(t.kept_edges)} triplets)" if t.kept_edges else ""),
                            lines, list(t.chunk_ids), needles))
    if trace.fill_chunk_ids:
        out.append(Citation("Seed chunks added as fill", "", list(trace.fill_chunk_ids), []))
    return out


def _t2rag_citations(result) -> list[Citation]:
    # no placeholder filled: the answer came from the chunks retrieved (the trace's evidence)
    return t2rag_chain(result.trace) or ([Citation("Answer read from the retrieved chunks (no placeholder filled)", "",
                                                   list(result.evidence_chunk_ids), [result.answer])]
                                         if result.evidence_chunk_ids and result.answer else [])


def chain_for(result) -> list[Citation]:
    """The answer's citations, by what its trace holds: rounds of bindings (T2RAG) or spanning
    trees (KG2RAG); a trace with neither gives none."""
    tr = result.trace
    if hasattr(tr, "rounds"):
        return _t2rag_citations(result)
    if hasattr(tr, "trees"):
        return kg2rag_chain(tr)
    return []


def _chunk_texts(result, corpus) -> dict[str, tuple[str, str]]:
    """chunk id -> (name, text): the trace's own copies first (T2RAG keeps what the solver saw)."""
    from components.chunk_names import chunk_name, chunk_texts

    out: dict[str, tuple[str, str]] = {}
    for r in getattr(result.trace, "rounds", []) or []:
        for c in r.chunks:
            out.setdefault(c.chunk_id, (c.title, c.text))
    ids = [c for cit in chain_for(result) for c in cit.chunk_ids]
    found = chunk_texts(corpus, ids)
    for cid in ids:
        if cid in found:
            out[cid] = found[cid]
        elif cid in out:
            title, text = out[cid]
            pos = cid.rpartition("#")[2]
            out[cid] = (chunk_name(title, int(pos)) if pos.isdigit() else title, text)
    return out


def _sentence_span(text: str, needles: list[str]) -> str:
    """The sentence of `text` holding the first needle found (the span the citation points at)."""
    for n in needles:
        n = (n or "").strip()
        if len(n) < 2:
            continue
        for s in re.split(r"(?<=[.!?])\s+", text):
            if n.lower() in s.lower():
                return s
    return ""


def chain_html(result, corpus=None) -> str:
    """Numbered citations under an answer; each chunk opens in place with its span marked."""
    cits = chain_for(result)
    if not cits:
        return ""
    texts = _chunk_texts(result, corpus)
    items = []
    for i, c in enumerate(cits, 1):
        refs = []
        for cid in c.chunk_ids:
            name, text = texts.get(cid, (cid, ""))
            span = _sentence_span(text, c.needles)
            body = highlight(text, [span]) if span else highlight(text, c.needles)
            refs.append(f'<details class="tl-cite-chunk"><summary>{esc(name)}</summary>'
                        f'<div style="font-size:.9em;margin:.2em 0 .4em 1em">{body or "<i>(text not in the trace)</i>"}'
                        "</div></details>")
        support = f" ← <i>“{esc(c.support)}”</i>" if c.support else ""
        badge = f" {source_badge(c.kind)}" if c.binding else ""
        items.append(f'<li class="tl-cite"><b>[{i}]</b> {esc(c.claim)}{badge}{support} ← {"".join(refs) or "<i>no chunk</i>"}</li>')
    # a long chain (KG2RAG with many trees) starts folded so the answers stay side by side
    return (f'<details class="tl-chain" style="margin-top:.4em"{" open" if len(cits) <= 3 else ""}><summary><small>'
            f"<b>Evidence chain</b>: {len(cits)} citation{'s' if len(cits) != 1 else ''} from the trace (answer ← "
            "value ← proposition / tree ← chunk; open a chunk to see the sentence)</small></summary>"
            f'<ol style="list-style:none;padding-left:0;margin:.2em 0">{"".join(items)}</ol></details>')
