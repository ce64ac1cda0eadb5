"""Recall a user would miss (issue 25, items 6 and the recall done-when):

- KG2RAG's seed guard: the graph stage never trades a seed for an expanded chunk less similar to
  the question than that seed;
- recall at the window level beside the document level, when a long document holds the gold;
- gold evidence spans found in a copy of the text whose punctuation was stripped;
- an imported triplet linked to the one window of its passage that states it.
"""

from __future__ import annotations

from engine.core.types import Chunk, Question
from engine.eval.evidence import EvidenceGold, Occurrence, locate_evidence, normalize_span
from engine.eval.metrics import average_metrics, score_question
from engine.eval.report import EvalSummary, MethodSummary, summary_markdown
from engine.methods.kg2rag import KG2RAG, KG2RAGSettings
from engine.methods.kg2rag.graph import spanning_trees
from engine.methods.kg2rag.select import guard_seeds, select_trees
from engine.triplets.files import TripletRow
from engine.triplets.resolve import resolve_rows
from tests._kg2rag_helpers import QUESTION, E, Silent, lone_hub_corpus

# --- the seed guard ------------------------------------------------------------------------


def test_a_seed_more_similar_than_every_expanded_chunk_keeps_its_place():
    # one big tree of expanded chunks (x1..x3, similarity 0.5-0.3) around seed s1 fills k = 4;
    # seed s2 (0.8) is in no selected tree
    tree = spanning_trees(
        [E("a", "b", "s1", 0.9, 1), E("b", "c", "x1", 0.5, 2), E("c", "d", "x2", 0.4, 3), E("d", "e", "x3", 0.3, 4)]
    )
    scores = {"s1": 0.9, "s2": 0.8, "s3": 0.2, "x1": 0.5, "x2": 0.4, "x3": 0.3}
    chosen = select_trees(tree, 4, "skip", scores)
    assert sorted(chosen) == ["s1", "x1", "x2", "x3"]
    kept_chunks, fill, kept = guard_seeds(tree, chosen, [], ["s1", "s2", "s3"], 4, scores)
    # s2 beats every expanded chunk: it replaces the weakest (x3); s3 (0.2) beats none and stays out
    assert kept == ["s2"] and fill == ["s2"] and "x3" not in kept_chunks and len(kept_chunks + fill) == 4
    assert "x3" in tree[0].cut_chunk_ids and "more similar seed" in tree[0].note
    # a context with no expanded chunk is the first stage's own choice: nothing to guard
    assert guard_seeds(tree, ["s1"], [], ["s1", "s2"], 4, scores)[2] == []


def test_the_tuned_method_guards_and_the_paper_preset_does_not():
    corpus, q = lone_hub_corpus(), QUESTION  # the graph stage's expanded chunks fill k on their own
    base = dict(
        k=3, seeds="dense", seed_trees=False, overflow="skip", tree_score="max", keep_seeds=0
    )  # the guard alone
    off = KG2RAG(Silent()).answer(q, corpus, KG2RAGSettings(**base, seed_guard=False))
    on = KG2RAG(Silent()).answer(q, corpus, KG2RAGSettings(**base, seed_guard=True))
    assert [s.chunk_id for s in on.trace.seeds] == ["lone", "hub", "filler"]
    # without the guard the expanded chunks push out the best seed
    assert sorted(off.evidence_chunk_ids) == ["hub", "x0", "x1"]
    # with it, the seeds closer to the question than every expanded chunk keep their place
    assert sorted(on.evidence_chunk_ids) == ["filler", "hub", "lone"] and "seed guard" in on.trace.note
    assert KG2RAGSettings.paper().seed_guard is False and KG2RAGSettings().seed_guard is True


# --- window level beside document level ------------------------------------------------------


def _long_doc_question():
    windows = [
        Chunk(f"doc#{i}", "doc", i, "Long document", text)
        for i, text in enumerate(
            [
                "Alpha paragraph one says the bridge was built in 1890.",
                "Beta paragraph two says the river is long.",
                "Gamma paragraph three says the engineer was Jane Doe.",
            ]
        )
    ]
    q = Question(
        "q1",
        "Who built the bridge?",
        ("Jane Doe",),
        supporting_docs=("doc",),
        evidence=("the bridge was built in 1890", "the engineer was Jane Doe"),
    )
    # each span found once, held whole by one window (chunk range (0, 0): the span on its own)
    occ = lambda i, text: (Occurrence("doc", 0, 10, ((f"doc#{i}", 0, 0),)),)  # noqa: E731
    gold = EvidenceGold("q1", q.evidence, (occ(0, ""), occ(2, "")))
    return windows, q, gold


def test_window_recall_is_reported_beside_document_recall():
    windows, q, gold = _long_doc_question()
    m = score_question("Jane Doe", q, [windows[0], windows[1]], k=1, evidence=gold)
    # any window of the document makes document recall 1; only one of the two gold windows is in
    assert m.paragraph.recall == 1.0 and m.window.recall == 0.5 and m.window.recall_at_k == 0.5
    from engine.core import serde

    assert serde.from_dict(type(m), serde.to_dict(m)) == m  # the eval records keep it (jsonl round trip)
    avg = average_metrics([m])
    assert avg.retrieval_recall == 1.0 and avg.window_recall == 0.5
    method = MethodSummary(
        method="semantic", n_questions=1, n_done=1, n_errors=0, answer=avg, retrieval_unit="paragraph", by_unit={}, k=1
    )
    table = summary_markdown(EvalSummary(out_dir="", corpus="c", reasoner="r", n_questions=1, methods=[method]))
    assert "window R" in table and "| 0.500 |" in table


def test_no_window_column_without_evidence_spans():
    windows, q, _ = _long_doc_question()
    m = score_question("Jane Doe", q, windows, k=1)
    assert m.window is None and average_metrics([m]).window_recall is None


# --- locating spans in punctuation-stripped text ----------------------------------------------


def test_spans_are_found_in_text_whose_punctuation_was_stripped():
    assert normalize_span("Kubrick's U.S. debut cost $1,000.") == normalize_span("Kubricks US debut cost 1000")

    class Stripped:
        def __init__(self):
            self.text = "Kubricks first US film cost 1000 dollars It was wellknown"
            self.chunk = Chunk("d#0", "d", 0, "D", self.text)

        def documents(self):
            from types import SimpleNamespace

            return [SimpleNamespace(doc_id="d")]

        def get_document(self, doc_id):
            from types import SimpleNamespace

            return SimpleNamespace(text=self.text)

        def chunks(self, doc_id=None):
            return [self.chunk]

    q = Question("q", "?", evidence=("Kubrick's first U.S. film cost 1,000 dollars.", "It was well-known"))
    report = locate_evidence(Stripped(), [q])
    assert report.n_unlocated == 0 and report.by_qid["q"].gold_chunk_ids == {"d#0"}


# --- triplets of a passage inside a long document --------------------------------------------


def test_a_passage_triplet_links_to_the_one_window_that_states_it():
    # a long document joined from passages; its windows overlap by a sentence
    w = [
        Chunk(
            "L#0",
            "L",
            0,
            "Joined",
            "Ada Lovelace wrote the first program for the Analytical Engine of Babbage. "
            "She was the daughter of Lord Byron and Anne Milbanke in London.",
        ),
        Chunk(
            "L#1",
            "L",
            1,
            "Joined",
            "She was the daughter of Lord Byron and Anne Milbanke in London. "
            "Ada Lovelace died in 1852 and Lord Byron was a poet of renown.",
        ),
    ]
    passage = (
        "Ada Lovelace\nAda Lovelace wrote the first program for the Analytical Engine of Babbage. She was the "
        "daughter of Lord Byron and Anne Milbanke in London. Ada Lovelace died in 1852 and Lord Byron was a "
        "poet of renown."
    )
    rows = [
        TripletRow("Ada Lovelace", "daughter of", "Lord Byron", passage, "passage"),
        TripletRow("Ada Lovelace", "died in", "1852", passage, "passage"),
        TripletRow("Ada Lovelace", "wrote program for", "Analytical Engine", passage, "passage"),
    ]
    links, unresolved = resolve_rows(rows, w)
    assert unresolved == 0
    # one window each: both windows name "Ada Lovelace" and "Lord Byron", the first holds "daughter"
    assert [(cid, o) for cid, s, p, o in links] == [
        ("L#0", "Lord Byron"),
        ("L#1", "1852"),
        ("L#0", "Analytical Engine"),
    ]
