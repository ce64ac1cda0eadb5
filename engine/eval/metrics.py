"""Answer and retrieval metrics, exactly as SPEC section 4 defines them.

Answer scores follow each dataset's official script: normalize (lowercase, drop punctuation, drop
the articles a/an/the, collapse spaces), then exact match and token F1, the best over the gold
answer and its aliases. HotpotQA (and 2WikiMultihopQA, whose script derives from it) adds one
rule: a `yes`, `no` or `noanswer` on either side only scores when both sides agree. MuSiQue's
script (SQuAD 2.0's functions) has no such rule, and scores an empty answer against an empty gold
as a match. An empty gold is scored as the scripts do, never dropped.

Retrieval scores compare the units a method used as evidence against the gold supporting units.
A unit is a paragraph (the paragraph itself when the dataset names paragraphs - MuSiQue, scored
like its SupportMetric - else its title) or a sentence (`(title, sent_id)`); a chunk covers the
sentences `sent_start .. sent_end-1` of its document, so paragraph-window chunks and
single-sentence chunks are scored on the same gold data.

Averages run over **all** questions: a question that retrieved nothing, or whose method errored,
counts 0 (the KG2RAG script averaged only over the questions it answered, which flatters it).
"""
from __future__ import annotations

import collections
import re
import string
from dataclasses import dataclass
from typing import Iterable, Sequence

from engine.types import Chunk, Question

#: The two retrieval granularities.
PARAGRAPH = "paragraph"
SENTENCE = "sentence"
UNITS = (PARAGRAPH, SENTENCE)

_SPECIAL = ("yes", "no", "noanswer")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)



# --- answers -----------------------------------------------------------------------------------

def normalize_answer(s: str) -> str:
    """SQuAD normalization: lowercase, no punctuation, no articles, single spaces."""
    s = (s or "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


@dataclass(frozen=True)
class AnswerScore:
    em: float = 0.0
    f1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0


#: Datasets scored with SQuAD 2.0's functions (MuSiQue's metrics/answer.py): no yes/no rule.
_SQUAD2 = ("musique",)


def _score_one(prediction: str, gold: str, dataset: str = "") -> AnswerScore:
    pred_n, gold_n = normalize_answer(prediction), normalize_answer(gold)
    em = float(pred_n == gold_n)
    pred_toks, gold_toks = pred_n.split(), gold_n.split()
    if dataset in _SQUAD2:
        if not pred_toks or not gold_toks:  # "no answer" agrees only with "no answer"
            v = float(pred_toks == gold_toks)
            return AnswerScore(em, v, v, v)
    elif (pred_n in _SPECIAL or gold_n in _SPECIAL) and pred_n != gold_n:
        # HotpotQA's rule: yes/no/noanswer never earns partial credit against anything else.
        return AnswerScore(em, 0.0, 0.0, 0.0)
    common = collections.Counter(pred_toks) & collections.Counter(gold_toks)
    same = sum(common.values())
    if same == 0:
        return AnswerScore(em, 0.0, 0.0, 0.0)
    p = same / len(pred_toks)
    r = same / len(gold_toks)
    return AnswerScore(em, 2 * p * r / (p + r), p, r)


def answer_score(prediction: str, golds: Sequence[str], dataset: str = "") -> AnswerScore:
    """Best EM and best F1 over the gold answer and its aliases (each maximized on its own, as
    the scripts do); precision/recall come from the alias that gave the best F1. A question whose
    gold is empty is scored against "" as the scripts would, not skipped."""
    golds = [str(g) for g in golds if g is not None] or [""]
    scores = [_score_one(prediction or "", g, dataset) for g in golds]
    best = max(scores, key=lambda s: (s.f1, s.em))
    return AnswerScore(max(s.em for s in scores), best.f1, best.precision, best.recall)


# --- retrieval ---------------------------------------------------------------------------------

def _title_key(title: str) -> str:
    # Titles come from the same dataset on both sides; only stray whitespace differs in practice.
    return " ".join((title or "").split())


def chunk_units(chunk: Chunk, unit: str, by_doc: bool = False) -> list:
    """The units one chunk covers: its paragraph (the document itself with `by_doc`, for a
    question whose gold names paragraphs; else its title), or each `(title, sent_id)` it spans."""
    title = _title_key(chunk.title)
    if unit == PARAGRAPH:
        return [chunk.doc_id] if by_doc else [title]
    if unit != SENTENCE:
        raise ValueError(f"unknown retrieval unit {unit!r}; use one of {UNITS}")
    end = chunk.sent_end if chunk.sent_end > chunk.sent_start else chunk.sent_start + 1
    return [(title, i) for i in range(chunk.sent_start, end)]


def retrieved_units(chunks: Iterable[Chunk], unit: str, by_doc: bool = False) -> list:
    """Units in the order the chunks were used, each once."""
    seen: dict = {}
    for c in chunks:
        for u in chunk_units(c, unit, by_doc):
            seen.setdefault(u, None)
    return list(seen)


def gold_units(question: Question, unit: str) -> set:
    """Gold supporting units; paragraphs are the gold paragraphs themselves when the dataset
    names them (doc ids), else titles (falling back to the titles of the supporting facts)."""
    if unit == SENTENCE:
        return {(_title_key(t), int(i)) for t, i in question.supporting_facts}
    if question.supporting_docs:
        return set(question.supporting_docs)
    titles = set(question.supporting_titles) or {t for t, _ in question.supporting_facts}
    return {_title_key(t) for t in titles}


def by_paragraph(question: Question) -> bool:
    """Whether `question`'s paragraph gold names paragraphs (doc ids) rather than titles."""
    return bool(question.supporting_docs)


def _units_for(question: Question, chunks: Sequence[Chunk], unit: str) -> list:
    return retrieved_units(chunks, unit, by_paragraph(question))


@dataclass(frozen=True)
class RetrievalScore:
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    recall_at_k: float = 0.0
    n_retrieved: int = 0  # units retrieved
    n_gold: int = 0


def retrieval_score(retrieved: Sequence, gold: set, *, k_units: Sequence | None = None) -> RetrievalScore:
    """Set precision / recall / F1 of `retrieved` units against `gold`.

    `k_units` are the units of the first k chunks (for recall@k); defaults to all retrieved.
    Nothing retrieved scores 0 everywhere (not "undefined"), so it pulls the average down.
    """
    got = set(retrieved)
    top = set(k_units) if k_units is not None else got
    hit = len(got & gold)
    p = hit / len(got) if got else 0.0
    r = hit / len(gold) if gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    rk = len(top & gold) / len(gold) if gold else 0.0
    return RetrievalScore(p, r, f1, rk, len(got), len(gold))


def score_retrieval(chunks: Sequence[Chunk], question: Question, unit: str, k: int) -> RetrievalScore | None:
    """Score the chunks a method used as evidence (in the order used). None when the question
    carries no gold support at this unit, so it cannot be scored at all."""
    gold = gold_units(question, unit)
    if not gold:
        return None
    return retrieval_score(_units_for(question, chunks, unit), gold,
                           k_units=_units_for(question, chunks[:k], unit))


# --- per question and averages -----------------------------------------------------------------

@dataclass(frozen=True)
class QuestionMetrics:
    """Everything scored for one question. `paragraph`/`sentence` are None when the question has
    no gold support at that unit (a user's own questions); both are zero-filled on errors."""

    em: float = 0.0
    f1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    paragraph: RetrievalScore | None = None
    sentence: RetrievalScore | None = None
    n_evidence_chunks: int = 0


def score_question(prediction: str, question: Question, chunks: Sequence[Chunk], k: int = 5) -> QuestionMetrics:
    a = answer_score(prediction, question.answers, question.dataset)
    return QuestionMetrics(
        em=a.em, f1=a.f1, precision=a.precision, recall=a.recall,
        paragraph=score_retrieval(chunks, question, PARAGRAPH, k),
        sentence=score_retrieval(chunks, question, SENTENCE, k),
        n_evidence_chunks=len(chunks),
    )


def failed_question_metrics(question: Question) -> QuestionMetrics:
    """What an errored question scores: zero everywhere it could have been scored."""
    zero = lambda unit: RetrievalScore(n_gold=len(gold_units(question, unit))) if gold_units(question, unit) else None  # noqa: E731
    return QuestionMetrics(paragraph=zero(PARAGRAPH), sentence=zero(SENTENCE))


@dataclass(frozen=True)
class AverageMetrics:
    n: int = 0
    em: float = 0.0
    f1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    retrieval_unit: str = PARAGRAPH
    retrieval_n: int = 0  # questions with gold support at that unit
    retrieval_precision: float | None = None
    retrieval_recall: float | None = None
    retrieval_f1: float | None = None
    recall_at_k: float | None = None
    avg_evidence_chunks: float = 0.0


def average_metrics(items: Sequence[QuestionMetrics | None], unit: str = PARAGRAPH) -> AverageMetrics:
    """Average over every question; `None` (no record: the method errored or never ran on it)
    counts as a zero. Retrieval averages over the questions that have gold support at `unit`;
    None when none has."""
    n = len(items)
    if n == 0:
        return AverageMetrics(retrieval_unit=unit)
    qs = [m or QuestionMetrics() for m in items]
    mean = lambda xs: sum(xs) / n  # noqa: E731  -- always over ALL questions
    ret = [getattr(m, unit) for m in qs]
    scored = [r for r in ret if r is not None]
    # A missing record cannot say whether it had gold support; it counts as a zero for retrieval
    # too whenever the other questions are scored at this unit.
    missing = sum(1 for m in items if m is None)
    rn = len(scored) + missing if scored else 0

    def rmean(attr: str) -> float | None:
        return sum(getattr(r, attr) for r in scored) / rn if rn else None

    return AverageMetrics(
        n=n, em=mean([m.em for m in qs]), f1=mean([m.f1 for m in qs]),
        precision=mean([m.precision for m in qs]), recall=mean([m.recall for m in qs]),
        retrieval_unit=unit, retrieval_n=rn,
        retrieval_precision=rmean("precision"), retrieval_recall=rmean("recall"),
        retrieval_f1=rmean("f1"), recall_at_k=rmean("recall_at_k"),
        avg_evidence_chunks=mean([m.n_evidence_chunks for m in qs]),
    )
