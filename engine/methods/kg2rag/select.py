"""KG2RAG step 7: pick ranked trees within the chunk budget `k`, then top up from the seeds.

Plain functions over `Tree` records (engine.methods.kg2rag.graph), checked by hand in
tests/engine/methods/test_kg2rag_graph.py. Each tree records whether it was selected, cut or skipped, and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the graph module re-exports this one: no import cycle at run time
    from engine.methods.kg2rag.graph import Tree

#: What to do with a tree that does not fit in the room left: `cut` keeps its first chunks in
#: walk order (the text form read from its start), `cut-heaviest` keeps its heaviest chunks with
#: the tree paths linking them to the walk root (then in walk order), `skip` passes over it (SPEC 7).
#: `cut-share` cuts like `cut-heaviest` but keeps only chunks at least as similar to the question
#: as the best chunk of the next tree still to come, and leaves the rest of the room to the trees
#: after it (a big top tree must not push out a second tree's far better chunk with its weakest ones).
OVERFLOW = ("cut", "cut-heaviest", "cut-share", "skip")
#: When seed chunks top up the context: `half` = only when the trees gave fewer than k/2 chunks
#: (SPEC step 7), `room` = whenever room is left under k, `none` = never; `rerank` = the authors'
#: distractor script: under k//2 chunks, every remaining candidate (seed or expanded) ranked against
#: the question (`fill_reranked`).
FILL = ("half", "room", "none", "rerank")


def select_trees(
    ranked: list[Tree], k: int, overflow: str = "skip", weights: dict[str, float] | None = None
) -> list[str]:
    """Take trees in rank order while the distinct chunks stay within `k`.

    A tree that does not fit is skipped (`skip`; the reference code instead stops at the first
    misfit, so one big top tree leaves the context empty) or cut to the room left (`cut`,
    `cut-heaviest`), which fills the context: the trees after it are not taken. Marks each tree's
    `selected` / `note` / `cut_chunk_ids` and returns the chosen chunk ids in context order.
    `weights` (chunk -> similarity to the question) are needed by `cut-share` only.
    """
    if overflow not in OVERFLOW:
        raise ValueError(f"overflow must be one of {', '.join(OVERFLOW)}, got {overflow!r}")
    chosen: list[str] = []
    weights = weights or {}
    for i, t in enumerate(ranked):
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
            floor = float("-inf")
            if overflow == "cut-share":
                have = set(chosen)
                floor = next(
                    (
                        max(weights.get(c, float("-inf")) for c in u.chunk_ids if c not in have)
                        for u in ranked[i + 1 :]
                        if any(c not in have for c in u.chunk_ids)
                    ),
                    floor,
                )
            keep = new[:room] if overflow == "cut" else _heaviest_part(t, set(chosen), room, floor)
            t.cut_chunk_ids = [c for c in new if c not in keep]
            chosen.extend(keep)
            t.selected = True
            how = (
                "in walk order"
                if overflow == "cut"
                else "its heaviest chunks with their paths to the walk root"
                + (f", none below the next tree's best similarity {floor:.3f}" if floor > float("-inf") else "")
            )
            t.note = f"cut to fit k={k}: kept {len(keep)} of its {len(new)} new chunks ({how})"
    return chosen


def _heaviest_part(t: Tree, have: set[str], room: int, floor: float = float("-inf")) -> list[str]:
    """At most `room` new chunks forming a connected part of `t` around its walk root: the tree's
    chunks heaviest first, each with the tree path that links it to the root (a chunk whose path
    does not fit is passed over). Returned in the tree's walk order, so the text still reads as a
    walk; the part is a subtree, so every kept fact stays linked to the others. Chunks lighter than
    `floor` are not sought (a path may still pass through one); the heaviest is always kept."""
    if not t.kept_edges:  # a self-loop component or a seed alone: its one chunk
        return [c for c in t.chunk_ids if c not in have][:room]
    parent: dict[str, tuple[str, Any]] = {}  # node -> (parent node, edge to it), from the root
    stack = [t.root]
    seen = {t.root}
    adj: dict[str, list[Any]] = {}
    for e in t.kept_edges:
        adj.setdefault(e.u, []).append(e)
        adj.setdefault(e.v, []).append(e)
    while stack:
        node = stack.pop()
        for e in adj.get(node, []):
            nxt = e.v if e.u == node else e.u
            if nxt not in seen:
                seen.add(nxt)
                parent[nxt] = (node, e)
                stack.append(nxt)

    def path(e) -> list[str]:  # chunks from the root down to edge e, e included
        far = e.v if e.v in parent and parent[e.v][1] is e else e.u
        out = []
        while far in parent:
            node, edge = parent[far]
            out.append(edge.chunk_id)
            far = node
        return out

    picked: set[str] = set()
    for e in sorted(t.kept_edges, key=lambda e: e.sort_key):
        if picked and e.weight < floor:
            break
        if e.chunk_id in picked or e.chunk_id in have:
            continue
        need = {c for c in path(e) if c not in have} - picked
        if len(picked) + len(need) <= room:
            picked |= need
        if len(picked) >= room:
            break
    return [c for c in t.chunk_ids if c in picked]


def fill_from_seeds(chosen: list[str], seeds_ranked: list[str], k: int, rule: str = "half") -> list[str]:
    """Seed chunks to append after the trees' chunks, best first, up to `k` in all.

    `half` (the paper): only when the trees gave fewer than k/2 chunks; `room`: whenever the
    trees left room; `none`: never."""
    if rule not in FILL or rule == "rerank":
        raise ValueError(f"fill must be one of {', '.join(f for f in FILL if f != 'rerank')}, got {rule!r}")
    if rule == "none" or (rule == "half" and len(chosen) * 2 >= k):
        return []
    have = set(chosen)
    room = k - len(chosen)
    return [c for c in seeds_ranked if c not in have][: max(0, room)]


def fill_reranked(chosen: list[str], candidates: list[tuple[str, float]], k: int) -> list[str]:
    """The authors' fill (`GraphFilterPostProcessor`, kg_post_processor.py ~422-431): when the trees
    gave fewer than k//2 chunks, every remaining candidate (seeds and expanded chunks alike),
    scored against the question, best first, up to `k` in all. Ties keep candidate order.

    Their loop ranks the remaining candidates but reads each rank position back from the unfiltered
    candidate list, so it adds the wrong chunks (or none) once a tree chunk precedes them; here a
    position names the candidate it ranks (the fix named in engine/methods/presets.py FIXES)."""
    if len(chosen) >= k // 2:
        return []
    have = set(chosen)
    rest = [(c, sc) for c, sc in dict(candidates).items() if c not in have]
    order = sorted(range(len(rest)), key=lambda i: -rest[i][1])
    return [rest[i][0] for i in order][: max(0, k - len(chosen))]


def guard_seeds(
    ranked: list[Tree], chosen: list[str], fill: list[str], seeds_ranked: list[str], k: int, scores: dict[str, float]
) -> tuple[list[str], list[str], list[str]]:
    """Selection never drops a seed chunk more similar to the question than every chunk the
    expansion brought into the context (`seed_guard`): such a seed, the best first-stage one first,
    takes the place of the least similar expanded chunk (or free room under `k`), until no left-out
    seed beats every expanded chunk still in. Why: the expansion's chunks earn their place by the
    graph, but a seed that is closer to the question than all of them is evidence the first stage
    already had; trading it for a weaker neighbour is what made the graph stage cost recall.
    Returns (tree chunks, fill chunks with the kept seeds appended, the seeds kept this way) and
    notes each evicted chunk on its tree."""
    seed_set = set(seeds_ranked)
    chosen, fill, kept = list(chosen), list(fill), []
    low = float("-inf")
    while True:
        added = [c for c in chosen if c not in seed_set]
        if not added:
            break
        floor = max(scores.get(c, low) for c in added)
        have = set(chosen) | set(fill)
        best = next((s for s in seeds_ranked if s not in have and scores.get(s, low) > floor), None)
        if best is None:
            break
        if len(have) >= k:
            worst = min(added, key=lambda c: (scores.get(c, low), c))
            chosen.remove(worst)
            for t in ranked:
                if t.selected and worst in t.chunk_ids:
                    t.cut_chunk_ids.append(worst)
                    t.note = (t.note + "; " if t.note else "") + f"{worst} gave its place to a more similar seed"
        fill.append(best)
        kept.append(best)
    return chosen, fill, kept


def keep_top_seeds(
    ranked: list[Tree],
    chosen: list[str],
    fill: list[str],
    seeds_ranked: list[str],
    n: int,
    k: int,
    scores: dict[str, float],
) -> tuple[list[str], list[str], list[str]]:
    """The first `n` seeds (first-stage order) are never left out (`keep_seeds`): each one missing
    from the trees' chunks and the fill is appended to the fill, taking the place of the least
    similar expanded chunk (a chunk that is not a seed) when the context holds `k` already; with no
    expanded chunk left, of the fill's lowest-ranked seed beyond the first `n`. Returns (tree
    chunks, fill chunks, the seeds kept this way) and notes each evicted chunk on its tree."""
    top = seeds_ranked[: min(n, k)]
    protected, seed_rank = set(top), {c: i for i, c in enumerate(seeds_ranked)}
    chosen, fill, kept = list(chosen), list(fill), []
    low = float("-inf")
    for seed in top:
        if seed in chosen or seed in fill:
            continue
        if len(chosen) + len(fill) >= k:
            added = [c for c in chosen if c not in seed_rank]
            if added:
                worst = min(added, key=lambda c: (scores.get(c, low), c))
                chosen.remove(worst)
                for t in ranked:
                    if t.selected and worst in t.chunk_ids:
                        t.cut_chunk_ids.append(worst)
                        t.note = (t.note + "; " if t.note else "") + f"{worst} gave its place to a first-stage seed"
            else:
                spare = [c for c in chosen + fill if c not in protected]
                if not spare:
                    break
                worst = max(spare, key=lambda c: seed_rank.get(c, len(seed_rank)))
                (chosen if worst in chosen else fill).remove(worst)
        fill.append(seed)
        kept.append(seed)
    return chosen, fill, kept
