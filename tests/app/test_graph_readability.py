"""The graphs read well: tree colours told apart (colour-blind-safe palette) and dark enough to see,
KG2RAG edges as wide as their weight, and a T2RAG node click opens the chunk its value came from."""

from __future__ import annotations

from components.graphs.palette import contrast_on_white, distinct_colors, tint

#: Okabe & Ito (2008) and Paul Tol's "muted" scheme, the sources of the first tree colours (the
#: paler members darkened at the same hue; components/graphs/palette.py)
OKABE_ITO_HUES = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")


def test_tree_colours_are_colour_blind_safe_and_visible_as_lines_even_when_unselected():
    from components.methods.kg2rag import UNSELECTED_TINT

    cols = distinct_colors(12)
    assert tuple(cols[:4]) == OKABE_ITO_HUES
    assert all(contrast_on_white(c) >= 3.0 for c in cols), [(c, round(contrast_on_white(c), 2)) for c in cols]
    # an unselected tree is paler, but its line does not fade into the white page
    assert all(contrast_on_white(tint(c, UNSELECTED_TINT)) >= 1.6 for c in cols[:6])


def test_kg2rag_edges_are_as_wide_as_their_weight_over_the_graphs_own_range():
    from components.methods.kg2rag import edge_widths

    width = edge_widths([0.41, 0.47, 0.52])  # cosines sit close together
    assert width(0.41) == 2.5 and width(0.52) == 8.0 and 2.5 < width(0.47) < 8.0
    assert edge_widths([0.5])(0.5) == 8.0  # one weight: the full width, not a division by zero


def test_a_t2rag_graph_click_on_a_filled_placeholder_shows_its_source_chunk():
    from components.methods.t2rag import dependency_graph
    from engine.llm.base import LLMCall
    from engine.methods.t2rag.trace import (
        BindingRecord,
        DecompositionTrace,
        RoundTrace,
        StateSnapshot,
        StateTriplet,
        T2RAGSettings,
        T2RAGTrace,
    )

    t1 = StateTriplet("t1", "Me and Bobby McGee", "performer", "?performer")
    binding = BindingRecord(
        "?performer",
        "Kris Kristofferson",
        source="P1",
        chunk_ids=["song#0"],
        quote="a song performed by Kris Kristofferson",
    )
    trace = T2RAGTrace(
        T2RAGSettings(),
        "scripted",
        "q",
        DecompositionTrace(LLMCall("decompose", "m"), triplets=[t1]),
        rounds=[RoundTrace(1, StateSnapshot(), bindings=[binding])],
    )
    chunks = {"song#0": ("Me and Bobby McGee · chunk 1", "Me and Bobby McGee is a song performed by Kris K.")}
    nodes, edges = dependency_graph(trace, 1, chunks)
    filled = next(n for n in nodes if n.id == "?performer")
    assert "filled in round 1 from P1" in filled.detail
    assert "Source chunk: Me and Bobby McGee · chunk 1\nMe and Bobby McGee is a song" in filled.detail
    assert "Source chunk: Me and Bobby McGee" in edges[0].detail  # the triplet's edge too
    before, _ = dependency_graph(trace, 0, chunks)  # before round 1 nothing was filled: nothing to open
    assert next(n for n in before if n.id == "?performer").detail == ""
