"""KG2RAG step 7: pick ranked trees within the chunk budget `k`, then top up from the seeds.

Plain functions over `Tree` records (engine.methods.kg2rag_graph), checked by hand in
tests/test_kg2rag_graph.py. Each tree records whether it was selected, cut or skipped, and why.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the graph module re-exports this one: no import cycle at run time
    from engine.methods.kg2rag_graph import Tree

#: What to do with a tree that does not fit in the room left: `cut` keeps its first chunks in
#: walk order (the text form read from its start), `cut-heaviest` keeps the connected part grown
#: from the walk root heaviest edge first (then in walk order), `skip` passes over it (SPEC 7).
OVERFLOW = ("cut", "cut-heaviest", "skip")
#: When seed chunks top up the context: `half` = only when the trees gave fewer than k/2 chunks
#: (the paper), `room` = whenever room is left under k, `none` = never.
FILL = ("half", "room", "none")


def select_trees(ranked: list["Tree"], k: int, overflow: str = "skip") -> list[str]:
    """Take trees in rank order while the distinct chunks stay within `k`.

    A tree that does not fit is skipped (`skip`; the reference code instead stops at the first
    misfit, so one big top tree leaves the context empty) or cut to the room left (`cut`,
    `cut-heaviest`), which fills the context: the trees after it are not taken. Marks each tree's
    `selected` / `note` / `cut_chunk_ids` and returns the chosen chunk ids in context order.
    """
    if overflow not in OVERFLOW:
        raise ValueError(f"overflow must be one of {', '.join(OVERFLOW)}, got {overflow!r}")
    chosen: list[str] = []
    for t in ranked:
        new = [c for c in t.chunk_ids if c not in chosen]
        room = k - len(chosen)
        if not t.chunk_ids:
            t.note = "no chunk to select"
        elif room <= 0:
            t.note = f"not taken: the context already holds k={k} chunks"
        elif len(new) <= room:
            chosen.extend(new)
            t.selected = True
        elif overflow == "skip":
            t.note = f"skipped: {len(new)} more chunks would exceed k={k} (have {len(chosen)})"
        else:
            keep = new[:room] if overflow == "cut" else _heaviest_part(t, set(chosen), room)
            t.cut_chunk_ids = [c for c in new if c not in keep]
            chosen.extend(keep)
            t.selected = True
            how = "in walk order" if overflow == "cut" else "grown from the walk root, heaviest edge first"
            t.note = f"cut to fit k={k}: kept {len(keep)} of its {len(new)} new chunks ({how})"
    return chosen


def _heaviest_part(t: "Tree", have: set[str], room: int) -> list[str]:
    """`room` new chunks of a connected part of `t`, grown from its root by the heaviest edge
    reachable (Prim's order), returned in the tree's walk order so the text still reads as a walk."""
    adj: dict[str, list] = {}
    for e in t.kept_edges:
        adj.setdefault(e.u, []).append(e)
        adj.setdefault(e.v, []).append(e)
    picked: set[str] = set()
    seen = {t.root}
    heap = [(e.sort_key, id(e), e) for e in adj.get(t.root, [])]
    heapq.heapify(heap)
    while heap and len(picked) < room:
        _, _, e = heapq.heappop(heap)
        nxt = e.v if e.u in seen else e.u
        if nxt in seen and e.u in seen and e.v in seen:
            continue
        seen.add(nxt)
        if e.chunk_id not in have:
            picked.add(e.chunk_id)
        for f in adj.get(nxt, []):
            if not (f.u in seen and f.v in seen):
                heapq.heappush(heap, (f.sort_key, id(f), f))
    return [c for c in t.chunk_ids if c in picked]


def fill_from_seeds(chosen: list[str], seeds_ranked: list[str], k: int, rule: str = "half") -> list[str]:
    """Seed chunks to append after the trees' chunks, best first, up to `k` in all.

    `half` (the paper): only when the trees gave fewer than k/2 chunks; `room`: whenever the
    trees left room; `none`: never."""
    if rule not in FILL:
        raise ValueError(f"fill must be one of {', '.join(FILL)}, got {rule!r}")
    if rule == "none" or (rule == "half" and len(chosen) * 2 >= k):
        return []
    have = set(chosen)
    room = k - len(chosen)
    return [c for c in seeds_ranked if c not in have][:max(0, room)]
