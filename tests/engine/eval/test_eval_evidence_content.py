"""Gold evidence quoted with small differences from the corpus (issue 42, item 4): an annotator's
span that differs from the text in punctuation, case and a dropped word is located by content, in
the windows holding at least 80% of its content words within its gold document, and the report
says how many spans were located each way. Before, such spans were all "could not be located" and
their questions' retrieval was left out of the scores.

The corpus is invented: two long documents of plain sentences, chunked into small windows.
"""

from __future__ import annotations

import pytest

from engine.core.chunking import ChunkingSettings
from engine.core.types import Document, Question
from engine.eval.evidence import locate_evidence
from engine.eval.harness import run_eval
from engine.methods.base import Result, Usage
from engine.store import CorpusSettings, Workspace

ORCHARD = [
    "The Velmar orchard was planted by Ilse Marrow in the spring of 1911.",
    "Its first harvest, a small crop of grey apples, was sold in the market at Dunhaven.",
    "Marrow kept bees between the rows, and the honey won a county prize in 1923.",
    "A storm in 1931 felled the oldest trees along the northern wall.",
    "Her nephew, Tobias Marrow, replanted the northern rows with pear trees.",
    "The pears were pressed into a perry that the village inn served every autumn.",
    "In 1950 the orchard passed to the Dunhaven Horticultural Society.",
    "The society opened the orchard to visitors on the first Sunday of each month.",
]
CANAL = [
    "The Quillon canal links the river Aske with the port of Sallow.",
    "Engineers under Rhoda Kettering dug its twelve locks between 1840 and 1846.",
    "Barges carried slate from the Aske quarries down to the harbour.",
    "A railway opened beside the canal in 1872 and took most of the slate trade.",
    "The last commercial barge passed the locks in the winter of 1938.",
    "Volunteers restored the lock gates in the 1990s, and pleasure boats returned.",
]
# as an annotator quoted them: other case and punctuation, and one word dropped ("grey", "twelve")
QUOTES = {
    "q1": "its first harvest -- a small crop of apples -- was sold in the market at dunhaven",
    "q2": "ENGINEERS UNDER RHODA KETTERING DUG ITS LOCKS BETWEEN 1840 AND 1846",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder):
    ws = Workspace(tmp_path_factory.mktemp("ev_content"), embedder=embedder)
    docs = [
        Document("orchard", "Velmar orchard", " ".join(ORCHARD), "orchard.txt"),
        Document("canal", "Quillon canal", " ".join(CANAL), "canal.txt"),
    ]
    questions = [
        Question("q1", "Where was the Velmar orchard's first harvest sold?", ("Dunhaven",), evidence=(QUOTES["q1"],)),
        Question(
            "q2",
            "Who led the engineers of the Quillon canal?",
            ("Rhoda Kettering",),
            supporting_titles=("Quillon canal",),
            evidence=(QUOTES["q2"], "The canal was painted purple by seven hundred giraffes."),
        ),
    ]
    c = ws.create("content", CorpusSettings(ChunkingSettings(max_words=30, overlap_sentences=0)))
    c.add_documents(docs)
    c.add_questions(questions)
    return c


def _holding(corpus, sentence: str) -> set[str]:
    return {c.chunk_id for c in corpus.chunks() if sentence in c.text}


def test_spans_differing_in_punctuation_case_and_a_dropped_word_are_located_by_content(corpus):
    assert len(corpus.chunks()) >= 4  # several windows per document
    report = locate_evidence(corpus, corpus.questions())
    assert (report.n_spans, report.n_exact, report.n_by_content, report.n_unlocated) == (3, 0, 2, 1)
    for qid, sentence in (("q1", ORCHARD[1]), ("q2", CANAL[1])):
        located = report.by_qid[qid].gold_chunk_ids
        assert located and located <= _holding(corpus, sentence), (qid, located)
    msg = report.message()
    assert "2 of 3 span(s)" in msg and "0 by their text, 2 by content" in msg and "could not be located" in msg


def test_the_share_is_a_setting_and_zero_means_the_text_match_only(corpus):
    assert locate_evidence(corpus, corpus.questions(), share=0).n_unlocated == 3
    # a dropped word leaves every content word of the quote in the window: found even at 100%
    assert locate_evidence(corpus, corpus.questions(), share=1.0).n_by_content == 2
    changed = Question("q3", "?", evidence=("Engineers under Rhoda Kettering dug its nine locks in 1840",))
    assert locate_evidence(corpus, [changed], share=1.0).n_by_content == 0  # "nine", "in": not the text's words
    assert locate_evidence(corpus, [changed], share=0.8).n_by_content == 1


class _Retrieves:
    name = "fixed"

    def __init__(self, ids):
        self.ids = ids

    def answer(self, question, corpus, settings=None, on_step=None):
        return Result("fixed", question, "", Usage(), list(self.ids), "complete", reasoner="fake")


def test_eval_scores_the_located_windows_and_prints_the_counts(corpus, tmp_path):
    gold = _holding(corpus, ORCHARD[1]) | _holding(corpus, CANAL[1])
    summary = run_eval(corpus, ["fixed"], None, out_dir=tmp_path / "run", method_factory=lambda n, r: _Retrieves(gold))
    avg = next(iter(summary.methods[0].by_unit.values()))
    assert avg.retrieval_n == 2 and avg.retrieval_recall == 1.0
    assert "2 by content" in summary.markdown()
