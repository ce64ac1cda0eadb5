"""KG2RAG's graph steps on graphs small enough to check by hand."""

from __future__ import annotations

from engine.core.types import Triplet
from engine.methods.kg2rag.graph import GraphEdge, Tree, dfs_walk, expand, spanning_trees, weighted_edges
from engine.methods.kg2rag.select import fill_from_seeds, select_trees
from tests._kg2rag_helpers import entity_graph


def E(u, v, chunk, w, tid=0, rel="r"):
    return GraphEdge(u=u, v=v, subject=u, predicate=rel, object=v, triplet_id=tid, chunk_id=chunk, weight=w)


def test_spanning_tree_keeps_the_heaviest_of_parallel_edges():
    edges = [
        E("a", "b", "c_light", 0.4, tid=1, rel="born in"),
        E("a", "b", "c_heavy", 0.9, tid=2, rel="lives in"),
        E("b", "c", "c3", 0.6, tid=3),
    ]
    (tree,) = spanning_trees(edges)
    kept = {(e.triplet_id, e.chunk_id) for e in tree.kept_edges}
    assert kept == {(2, "c_heavy"), (3, "c3")}
    assert [(p.edge.chunk_id, p.reason) for p in tree.pruned_edges] == [("c_light", "parallel")]
    # the lighter edge's chunk does not reach the context through this tree
    assert tree.chunk_ids == ["c_heavy", "c3"]
    assert "a lives in b" in tree.triplet_form and "born in" not in tree.triplet_form


def test_cycle_loses_its_lightest_edge():
    edges = [E("a", "b", "c1", 0.9, 1), E("b", "c", "c2", 0.8, 2), E("a", "c", "c3", 0.1, 3)]
    (tree,) = spanning_trees(edges)
    assert [p.edge.chunk_id for p in tree.pruned_edges] == ["c3"]
    assert tree.pruned_edges[0].reason == "cycle"


def test_two_components_give_two_trees_heaviest_first():
    edges = [E("a", "b", "c1", 0.3, 1), E("b", "c", "c2", 0.2, 2), E("x", "y", "c3", 0.8, 3)]
    trees = spanning_trees(edges)
    assert len(trees) == 2
    assert trees[0].nodes == ["x", "y"] and trees[0].chunk_ids == ["c3"]
    assert trees[1].nodes == ["a", "b", "c"] and trees[1].chunk_ids == ["c1", "c2"]


def test_walk_starts_at_the_heaviest_edge_and_goes_depth_first():
    # a - b (0.5), b - c (0.9, heaviest), c - d (0.6), b - e (0.7)
    edges = [E("a", "b", "ab", 0.5, 1), E("b", "c", "bc", 0.9, 2), E("c", "d", "cd", 0.6, 3), E("b", "e", "be", 0.7, 4)]
    walk = dfs_walk(edges)
    # from b over the heaviest edge to c, down to d, back up to b's next heaviest edge
    assert [e.chunk_id for e in walk] == ["bc", "cd", "be", "ab"]
    (tree,) = spanning_trees(edges)
    assert tree.chunk_ids == ["bc", "cd", "be", "ab"]
    assert tree.triplet_form.splitlines()[0] == "b r c"


def test_a_chunk_stating_several_edges_appears_once_in_the_text_form():
    edges = [E("a", "b", "p1", 0.9, 1), E("b", "c", "p1", 0.9, 2), E("c", "d", "p2", 0.5, 3)]
    (tree,) = spanning_trees(edges)
    assert tree.chunk_ids == ["p1", "p2"]
    assert len(tree.kept_edges) == 3


def _tree(tid, chunks):
    return Tree(tree_id=tid, nodes=[], kept_edges=[], pruned_edges=[], chunk_ids=chunks, triplet_form="")


def test_a_tree_larger_than_k_is_skipped_and_a_smaller_one_taken():
    big = _tree(0, [f"b{i}" for i in range(12)])
    small = _tree(1, ["s1", "s2", "s3"])
    other = _tree(2, ["s3", "t1"])  # shares s3: only one new chunk
    chosen = select_trees([big, small, other], k=10)
    assert chosen == ["s1", "s2", "s3", "t1"]
    assert not big.selected and "exceed k=10" in big.note
    assert small.selected and other.selected


def test_fill_triggers_below_half_of_k():
    seeds = [f"s{i}" for i in range(10)]
    assert fill_from_seeds(["s1", "x", "y"], seeds, k=10) == ["s0", "s2", "s3", "s4", "s5", "s6", "s7"]
    assert fill_from_seeds(["a", "b", "c", "d", "e"], seeds, k=10) == []
    assert fill_from_seeds([], seeds, k=4) == ["s0", "s1", "s2", "s3"]


def _graph():
    trips = [
        Triplet("Alice", "born in", "Paris", ("seed1",), 0),
        Triplet("Paris", "capital of", "France", ("p2",), 1),
        Triplet("France", "member of", "EU", ("p3",), 2),
        Triplet("The Paris", "twinned with", "Rome", ("p4", "p5"), 3),
    ]
    return entity_graph(trips)


def test_expansion_reaches_neighbours_hop_by_hop_through_normalized_entities():
    g = _graph()
    sims = {"p2": 0.5, "p3": 0.4, "p4": 0.3, "p5": 0.2}
    exp = expand(
        g,
        {"seed1": 0.9},
        {0: ("seed1",)},
        hops=1,
        score_chunks=lambda ids: {i: sims[i] for i in ids},
        expansion_cap=50,
        max_entity_edges=30,
    )
    assert exp.seed_entities == ["alice", "paris"]
    (hop,) = exp.hops
    # "The Paris" normalizes to "paris", so its triplet is one hop away too
    assert [c.chunk_id for c in hop.chunks_added] == ["p2", "p4", "p5"]
    assert hop.entities_reached == ["france", "rome"]
    assert sorted(exp.triplet_ids) == [0, 1, 3]
    two = expand(
        g,
        {"seed1": 0.9},
        {0: ("seed1",)},
        hops=2,
        score_chunks=lambda ids: {i: sims[i] for i in ids},
        expansion_cap=50,
        max_entity_edges=30,
    )
    assert [c.chunk_id for c in two.hops[1].chunks_added] == ["p3"]


def test_caps_cut_hub_edges_and_the_total_and_the_trace_lists_them():
    trips = [Triplet("Seed", "is", "Hub", ("seed",), 0)]
    trips += [Triplet("Hub", "has", f"Leaf{i}", (f"c{i}",), i + 1) for i in range(6)]
    g = entity_graph(trips)
    sims = {f"c{i}": 0.1 * i for i in range(6)}
    exp = expand(
        g,
        {"seed": 1.0},
        {0: ("seed",)},
        hops=1,
        score_chunks=lambda ids: {i: sims[i] for i in ids},
        expansion_cap=2,
        max_entity_edges=4,
    )
    (hop,) = exp.hops
    (cap,) = hop.entity_caps
    assert cap.entity == "hub" and cap.degree == 6 and cap.kept == 4
    assert sorted(cap.cut_triplet_ids) == [1, 2]  # the two least similar leaves
    assert [c.chunk_id for c in hop.chunks_added] == ["c5", "c4"]
    assert [c.chunk_id for c in hop.cut_by_total_cap] == ["c3", "c2"]
    assert set(exp.chunk_scores) == {"seed", "c5", "c4"}


def test_weighted_edges_one_per_stating_chunk_oriented_subject_to_object():
    trips = [Triplet("Paris", "capital of", "France", ("p1", "p2", "far"), 7)]
    g = entity_graph(trips)
    edges = weighted_edges(g, [7], {"p1": 0.8, "p2": 0.3})
    assert [(e.u, e.v, e.chunk_id, e.weight) for e in edges] == [
        ("paris", "france", "p1", 0.8),
        ("paris", "france", "p2", 0.3),
    ]


def test_a_component_of_self_loops_only_keeps_its_best_chunk_as_the_reference_does():
    trees = spanning_trees([E("a", "a", "loop_light", 0.4, 3), E("a", "a", "loop", 0.9, 1), E("x", "y", "c2", 0.5, 2)])
    loop = [t for t in trees if t.nodes == ["a"]][0]
    assert loop.kept_edges == [] and loop.kind == "self-loops"
    assert [p.reason for p in loop.pruned_edges] == ["self-loop", "self-loop"]
    # its heaviest self-loop's chunk stands for it, and it can be selected like any tree
    assert loop.chunk_ids == ["loop"] and loop.triplet_form == "a r a" and loop.root == "a"
    assert select_trees(trees, k=10) == ["loop", "c2"] and loop.selected


def test_the_walk_root_is_recorded():
    edges = [E("a", "b", "ab", 0.5, 1), E("b", "c", "bc", 0.9, 2)]
    (tree,) = spanning_trees(edges)
    assert tree.root == "b" and tree.kind == "tree"


def _chain():
    # root b: b-c (0.9), c-d (0.2), d-f (0.1), b-e (0.8), e-g (0.7): walk bc, cd, df, be, eg
    edges = [
        E("b", "c", "bc", 0.9, 1),
        E("c", "d", "cd", 0.2, 2),
        E("d", "f", "df", 0.1, 3),
        E("b", "e", "be", 0.8, 4),
        E("e", "g", "eg", 0.7, 5),
    ]
    (tree,) = spanning_trees(edges)
    assert tree.chunk_ids == ["bc", "cd", "df", "be", "eg"]
    return tree


def test_an_overflowing_tree_is_cut_in_walk_order_and_fills_the_context():
    top, small = _chain(), _tree(1, ["s1"])
    chosen = select_trees([top, small], k=3, overflow="cut")
    assert chosen == ["bc", "cd", "df"]
    assert top.selected and top.cut_chunk_ids == ["be", "eg"] and "kept 3 of its 5" in top.note
    assert not small.selected and "already holds k=3" in small.note


def test_cut_heaviest_keeps_the_heaviest_connected_part_in_walk_order():
    top = _chain()
    chosen = select_trees([top], k=3, overflow="cut-heaviest")
    # grown from b: bc (0.9), be (0.8), eg (0.7); the light c-d-f branch is left out
    assert chosen == ["bc", "be", "eg"] and top.cut_chunk_ids == ["cd", "df"]


def test_room_fill_tops_up_to_k_and_none_never_fills():
    seeds = [f"s{i}" for i in range(10)]
    chosen = ["a", "b", "c", "d", "e", "f"]
    assert fill_from_seeds(chosen, seeds, k=10, rule="half") == []
    assert fill_from_seeds(chosen, seeds, k=10, rule="room") == ["s0", "s1", "s2", "s3"]
    assert fill_from_seeds([], seeds, k=4, rule="none") == []


def test_cut_share_leaves_room_for_the_next_trees_better_chunks():
    top = _chain()  # bc 0.9, be 0.8, eg 0.7, cd 0.2, df 0.1
    second = spanning_trees([E("x", "y", "xy", 0.75, 9), E("y", "z", "yz", 0.3, 10)])[0]
    weights = {e.chunk_id: e.weight for t in (top, second) for e in t.kept_edges}
    chosen = select_trees([top, second], k=4, overflow="cut-share", weights=weights)
    # the top tree keeps only chunks at least as similar as the second tree's best (0.75) ...
    assert top.cut_chunk_ids == ["cd", "df", "eg"] and "0.750" in top.note
    # ... and the second tree, which now fits, comes whole
    assert chosen == ["bc", "be", "xy", "yz"] and second.selected and not second.cut_chunk_ids
    # cut-heaviest lets the top tree take the whole room
    top2, second2 = _chain(), spanning_trees([E("x", "y", "xy", 0.75, 9)])[0]
    assert select_trees([top2, second2], k=4, overflow="cut-heaviest") == ["bc", "cd", "be", "eg"]
    assert not second2.selected
