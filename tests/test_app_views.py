"""View logic without a browser: joint compare steps, chunk names, colours, graph layout."""
from __future__ import annotations

from types import SimpleNamespace as NS

from components.chunk_names import chunk_name, chunk_names
from components.compare_sync import joint_steps
from components.graph_layout import component_layout
from components.palette import distinct_colors


def _t2(rounds: int):
    return NS(rounds=[NS(index=i) for i in range(1, rounds + 1)])


def _kg(hops: int):
    return NS(hops=[NS(hop=i) for i in range(1, hops + 1)])


def test_joint_steps_put_round_k_beside_hop_k_and_answers_together():
    steps = joint_steps(_t2(3), _kg(1))
    # T2RAG: Decompose, Round 1-3, Answer; KG2RAG: Seeds, Hop 1, graph, ranking, context, Answer
    assert [(s.t2rag, s.kg2rag) for s in steps] == [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4), (4, 5)]
    assert steps[1].label == "Round 1 ↔ Hop 1" and steps[-1].label == "Answer ↔ Answer"
    long = joint_steps(_t2(6), _kg(1))  # more rounds than KG2RAG stages: KG2RAG holds its context
    assert [s.kg2rag for s in long][-3:] == [4, 4, 5] and long[-2].t2rag == 6


def test_chunks_are_named_by_title_and_number():
    class Corpus:
        def get_chunks(self, ids):
            return [NS(chunk_id=i, title="Lilu (mythology)", position=1) for i in ids if i.startswith("ab")]

    names = chunk_names(Corpus(), ["ab12#1", "ffee0011aa#3"])
    assert names["ab12#1"] == "Lilu (mythology) · chunk 2" == chunk_name("Lilu (mythology)", 1)
    assert names["ffee0011aa#3"] == "ffee0011… · chunk 4"  # gone from the corpus: still no bare hash


def test_tree_colours_never_repeat():
    for n in (1, 8, 15, 40):
        cols = distinct_colors(n)
        assert len(cols) == n == len(set(cols))


def test_components_get_separate_regions():
    pos = component_layout(list("abcdefg"), [("a", "b"), ("b", "c"), ("d", "e"), ("f", "f")])

    def box(ns):
        xs, ys = [pos[n][0] for n in ns], [pos[n][1] for n in ns]
        return min(xs), max(xs), min(ys), max(ys)

    comps = [box("abc"), box("de"), box("f"), box("g")]
    for i, p in enumerate(comps):  # no two components' bounding boxes overlap
        for q in comps[i + 1:]:
            assert p[1] < q[0] or q[1] < p[0] or p[3] < q[2] or q[3] < p[2], (p, q)
