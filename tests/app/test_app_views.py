"""View logic without a browser: joint compare steps, chunk names, colours, graph layout."""

from __future__ import annotations

from types import SimpleNamespace as NS

from components.chunk_names import chunk_name, chunk_names
from components.compare.sync import joint_steps
from components.graphs.layout import component_layout
from components.graphs.palette import distinct_colors


def _t2(rounds: int):
    return NS(rounds=[NS(index=i) for i in range(1, rounds + 1)])


def _kg(hops: int):
    return NS(hops=[NS(hop=i) for i in range(1, hops + 1)])


def _labels(rounds: int, hops: int) -> dict[str, list[str]]:
    from components.methods import kg2rag, t2rag

    return {"t2rag": t2rag.step_labels(NS(trace=_t2(rounds))), "kg2rag": kg2rag.step_labels(NS(trace=_kg(hops)))}


def test_joint_steps_put_round_k_beside_hop_k_and_answers_together():
    steps = joint_steps(_labels(3, 1))
    # T2RAG: Decompose, Round 1-3, Answer; KG2RAG: Seeds, Hop 1, graph, ranking, context, Answer
    assert [(s.at["t2rag"], s.at["kg2rag"]) for s in steps] == [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4), (4, 5)]
    assert steps[1].label == "Round 1 ↔ Hop 1" and steps[-1].label == "Answer ↔ Answer"
    long = joint_steps(_labels(6, 1))  # more rounds than KG2RAG stages: KG2RAG holds its context
    assert [s.at["kg2rag"] for s in long][-3:] == [4, 4, 5] and long[-2].at["t2rag"] == 6


def test_joint_steps_move_any_number_of_columns_together():
    labels = {**_labels(2, 1), "toy": ["Facts", "Seeds", "Ranked passages", "Answer"]}
    steps = joint_steps(labels)
    assert steps[0].at == {"t2rag": 0, "kg2rag": 0, "toy": 0}
    assert steps[1].label == "Round 1 ↔ Hop 1 ↔ Seeds"
    assert [s.at["toy"] for s in steps] == [0, 1, 2, 2, 2, 3]  # the shortest holds its last middle step
    assert steps[-1].label == "Answer ↔ Answer ↔ Answer" and steps[-1].at == {"t2rag": 3, "kg2rag": 5, "toy": 3}


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
        for q in comps[i + 1 :]:
            assert p[1] < q[0] or q[1] < p[0] or p[3] < q[2] or q[3] < p[2], (p, q)


def _summary(calls: float, cost):
    a = NS(em=0.5, f1=0.6, retrieval_recall=0.7, recall_at_k=0.7, retrieval_f1=0.5, avg_evidence_chunks=4)
    m = NS(
        method="t2rag",
        answer=a,
        calls_per_q=calls,
        cost_per_q=cost,
        engine_time_per_q=0.2,
        llm_time_per_q=1.5 if calls else 0.0,
    )
    return NS(methods=[m, NS(**{**m.__dict__, "method": "kg2rag"})])


def test_evaluate_charts_only_what_has_data_and_keep_units_apart():
    from components.eval.view import charts

    offline = dict(charts(_summary(0, None)))
    assert set(offline) == {"eval_quality", "eval_time"}  # no empty calls / dollars axes
    online = dict(charts(_summary(3, 0.002)))
    assert set(online) == {"eval_quality", "eval_time", "eval_calls", "eval_cost"}  # seconds and calls apart
    recall = [t for t in online["eval_quality"].data if t.name == "retrieval recall"][0]
    assert recall.marker.color.lower() not in ("red", "#d62728", "#ef553b")


def test_export_file_names_differ_per_run_and_are_safe():
    from components.report.export import export_file_name
    from engine.runs import Run

    r = [NS(method="t2rag"), NS(method="kg2rag")]
    a = export_file_name(Run(question="Where was <b>Ada</b> born?", results=r, corpus="hotpot/qa", created=1.8e9))
    b = export_file_name(Run(question="Where was Ada born?", results=r, corpus="hotpot/qa", created=1.8e9 + 1))
    c = export_file_name(Run(question="Who wrote Evening Star?", results=r[:1], corpus="x", created=1.8e9))
    assert len({a, b, c}) == 3
    assert a.startswith("triplet-lens_hotpot-qa_where-was-b-ada-b-born_comparison_")
    assert "/" not in a + b + c and "<" not in a and "_t2rag_" in c
