"""The evidence chain of an answer, read from the trace (never recomputed in the page).

Each method's view builds its citations (`evidence_chain(result)`, components/methods/): e.g.
T2RAG's answer ← each placeholder binding (value) ← the proposition it was read from ← the chunk
that states it, with a badge saying how the link was made (cited: the solver named that evidence
and it states the value; guessed: the solver named none and the engine found the value in a walked
proposition; unverified: the named evidence does not state it); KG2RAG's answer ← the selected
trees (their triplets in walk order) ← their chunks. This module draws any chain the same way:
each citation opens its chunk in place (a <details> element), with the sentence holding the value
marked, so it works the same in every view without scrolling the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from components.shell.safe import esc, highlight


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
    "guessed": ("guessed", "#b7791f", "the solver named no source: the engine found the value in a walked proposition"),
    "unverified": (
        "unverified",
        "#c0392b",
        "the source the solver named does not state the value, or names nothing it was shown",
    ),
    "": ("no source", "#777", "the solver named no source and no walked proposition states the value"),
}


def source_badge(kind: str) -> str:
    """A small coloured label for a binding's source kind, its meaning in the hover title."""
    label, color, why = SOURCE_KINDS.get(kind or "", SOURCE_KINDS[""])
    return (
        f'<span class="tl-source tl-source-{esc(label.replace(" ", "-"))}" title="{esc(why)}" '
        f'style="border:1px solid {color};color:{color};border-radius:8px;padding:0 .45em;'
        f'font-size:.78em;white-space:nowrap">{esc(label)}</span>'
    )


def chain_for(result) -> list[Citation]:
    """The answer's citations, from the result's view (a view without a chain gives none)."""
    from components.contract import view_for

    return view_for(result).evidence_chain(result)


def chain_chunk_texts(result, corpus) -> dict[str, tuple[str, str]]:
    """chunk id -> (name, text) of every chunk the chain cites: the corpus's text, else the trace's
    own copy (a view's `trace_chunk_texts`, e.g. what T2RAG's solver saw) when the corpus lacks it."""
    from components.chunk_names import chunk_name, chunk_texts
    from components.contract import view_for

    out: dict[str, tuple[str, str]] = dict(view_for(result).trace_chunk_texts(result))
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
    texts = chain_chunk_texts(result, corpus)
    items = []
    for i, c in enumerate(cits, 1):
        refs = []
        for cid in c.chunk_ids:
            name, text = texts.get(cid, (cid, ""))
            span = _sentence_span(text, c.needles)
            body = highlight(text, [span]) if span else highlight(text, c.needles)
            refs.append(
                f'<details class="tl-cite-chunk"><summary>{esc(name)}</summary>'
                f'<div style="font-size:.9em;margin:.2em 0 .4em 1em">{body or "<i>(text not in the trace)</i>"}'
                "</div></details>"
            )
        support = f" ← <i>“{esc(c.support)}”</i>" if c.support else ""
        badge = f" {source_badge(c.kind)}" if c.binding else ""
        where = "".join(refs) or "<i>no chunk</i>"
        items.append(f'<li class="tl-cite"><b>[{i}]</b> {esc(c.claim)}{badge}{support} ← {where}</li>')
    # a long chain (KG2RAG with many trees) starts folded so the answers stay side by side
    return (
        f'<details class="tl-chain" style="margin-top:.4em"{" open" if len(cits) <= 3 else ""}><summary><small>'
        f"<b>Evidence chain</b>: {len(cits)} citation{'s' if len(cits) != 1 else ''} from the trace (answer ← "
        "value ← proposition / tree ← chunk; open a chunk to see the sentence)</small></summary>"
        f'<ol style="list-style:none;padding-left:0;margin:.2em 0">{"".join(items)}</ol></details>'
    )
