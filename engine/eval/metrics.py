"""Answer and retrieval metrics, exactly as SPEC section 4 defines them.

Answer scores follow each dataset's official script: normalize (lowercase, drop punctuation, drop
the articles a/an/the, collapse spaces), then exact match and token F1, the best over the gold
answer and its aliases. HotpotQA (and 2WikiMultihopQA, whose script derives from it) adds one
rule: a `yes`, `no` or `noanswer` on either side only scores when both sides agree. MuSiQue's
script (SQuAD 2.0's functions) has no such rule, and scores an empty answer against an empty gold
as a match. An empty gold is scored as the scripts do, never dropped. EM, F1, precision and
recall are each maximized over the golds on their own, as 2WikiMultihopQA's `update_answer` does
(HotpotQA's script has one gold, so the same). MuSiQue-Full's unanswerable questions
(`answerable` false) are left out of the averages, as its `evaluate_v1.0.py` scores answerable
ones only.

Retrieval scores compare the units a method used as evidence against the gold supporting units.
A unit is a paragraph (the paragraph itself when the dataset names paragraphs - MuSiQue, scored
like its SupportMetric - else its title) or a sentence (`(title, sent_id)`); a chunk covers the
sentences `sent_start .. sent_end-1` of its document, so paragraph-window chunks and
single-sentence chunks are scored on the same gold data. Counts follow the scripts' `update_sp`
(tp, fp, fn over sets; support EM is 1 when fp + fn = 0); 2WikiMultihopQA compares sentence
titles lowercased (`normalize_sp`).

A question whose gold is evidence text (engine/eval/evidence.py) is scored on the spans located in
the corpus: recall = spans covered by the chunks used, precision = chunks used that hold a span.

Averages run over **all** questions: a question that retrieved nothing, or whose method errored,
counts 0 (the KG2RAG script averaged only over the questions it answered, which flatters it).
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.core.types import Chunk, Question
from engine.eval.evidence import EvidenceGold, span_recall

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
    the scripts do); for MuSiQue, whose script reports EM and F1 only, precision/recall come from
    the alias that gave the best F1. A question whose
    gold is empty is scored against "" as the scripts would, not skipped."""
    golds = [str(g) for g in golds if g is not None] or [""]
    scores = [_score_one(prediction or "", g, dataset) for g in golds]
    if dataset not in _SQUAD2:  # 2Wiki's update_answer: each of the four maximized on its own
        return AnswerScore(
            max(s.em for s in scores),
            max(s.f1 for s in scores),
            max(s.precision for s in scores),
            max(s.recall for s in scores),
        )
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
    em: float = 0.0  # the scripts' support EM: exactly the gold units, no more, no less


def _counts(pred: Sequence, gold: Sequence) -> tuple[int, int, int]:
    tp = sum(1 for e in pred if e in gold)
    return tp, len(pred) - tp, sum(1 for e in gold if e not in pred)


def retrieval_score(retrieved: Sequence, gold: Iterable, *, k_units: Sequence | None = None) -> RetrievalScore:
    """Precision / recall / F1 / EM of `retrieved` units against `gold`, counted as the scripts'
    `update_sp` counts them (a list is taken as is, so 2Wiki's lowercased duplicates count).

    `k_units` are the units of the first k chunks (for recall@k); defaults to all retrieved.
    Nothing retrieved scores 0 everywhere (not "undefined"), so it pulls the average down.
    """
    pred = retrieved if isinstance(retrieved, list) else list(dict.fromkeys(retrieved))
    gold = gold if isinstance(gold, list) else list(dict.fromkeys(gold))
    tp, fp, fn = _counts(pred, gold)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    top = list(k_units) if k_units is not None else pred
    tk, _, fk = _counts(top, gold)
    rk = tk / (tk + fk) if tk + fk else 0.0
    return RetrievalScore(p, r, f1, rk, len(pred), len(gold), 1.0 if fp + fn == 0 else 0.0)


def _official(units: Iterable, question: Question, unit: str) -> list:
    # 2Wiki's normalize_sp lowercases titles after the set is taken
    if unit == SENTENCE and question.dataset == "2wiki":
        return [(u[0].lower(), u[1]) for u in units]
    return list(units)


def score_retrieval(chunks: Sequence[Chunk], question: Question, unit: str, k: int) -> RetrievalScore | None:
    """Score the chunks a method used as evidence (in the order used). None when the question
    carries no gold support at this unit, so it cannot be scored at all."""
    gold = gold_units(question, unit)
    if not gold:
        return None
    return retrieval_score(
        _official(_units_for(question, chunks, unit), question, unit),
        _official(sorted(gold, key=repr), question, unit),
        k_units=_official(_units_for(question, chunks[:k], unit), question, unit),
    )


def evidence_score(gold: EvidenceGold, chunks: Sequence[Chunk], k: int) -> RetrievalScore | None:
    """Retrieval against evidence spans located in the chunks; None when no span was located."""
    ids = list(dict.fromkeys(c.chunk_id for c in chunks))
    hit, n = span_recall(gold, ids)
    if not n:
        return None
    gold_ids = gold.gold_chunk_ids
    p = sum(1 for c in ids if c in gold_ids) / len(ids) if ids else 0.0
    r = hit / n
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    rk = span_recall(gold, ids[:k])[0] / n
    return RetrievalScore(p, r, f1, rk, len(ids), n, 1.0 if p == r == 1.0 else 0.0)


# --- per question and averages -----------------------------------------------------------------


@dataclass(frozen=True)
class QuestionMetrics:
    """Everything scored for one question. `paragraph`/`sentence` are None when the question has
    no gold support at that unit (a user's own questions); both are zero-filled when the method
    failed before it retrieved anything (an error after retrieval scores what was retrieved)."""

    em: float = 0.0
    f1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    paragraph: RetrievalScore | None = None
    sentence: RetrievalScore | None = None
    n_evidence_chunks: int = 0
    #: False for a question the official script does not score (MuSiQue-Full unanswerable ones):
    #: averages leave it out
    scored: bool = True
    #: window (chunk) level, beside the document level: the question's evidence spans located in
    #: the windows (engine/eval/evidence.py), when it has both document gold and evidence spans. A
    #: long document split into many windows is "retrieved" by any one of them at document level
    window: RetrievalScore | None = None


def score_question(
    prediction: str, question: Question, chunks: Sequence[Chunk], k: int = 5, evidence: EvidenceGold | None = None
) -> QuestionMetrics:
    """`evidence`: the question's located evidence spans (evidence.locate_evidence); they score
    retrieval at any unit where the question has no other gold."""
    a = answer_score(prediction, question.answers, question.dataset)

    def ret(unit: str) -> RetrievalScore | None:
        if evidence is not None and not gold_units(question, unit):
            return evidence_score(evidence, chunks, k)
        return score_retrieval(chunks, question, unit, k)

    return QuestionMetrics(
        em=a.em,
        f1=a.f1,
        precision=a.precision,
        recall=a.recall,
        paragraph=ret(PARAGRAPH),
        sentence=ret(SENTENCE),
        n_evidence_chunks=len(chunks),
        scored=question.answerable,
        window=evidence_score(evidence, chunks, k)
        if evidence is not None and gold_units(question, PARAGRAPH)
        else None,
    )


def failed_question_metrics(question: Question, evidence: EvidenceGold | None = None) -> QuestionMetrics:
    """What an errored question scores: zero everywhere it could have been scored."""

    def zero(unit: str) -> RetrievalScore | None:
        if gold_units(question, unit):
            return RetrievalScore(n_gold=len(gold_units(question, unit)))
        if evidence is not None and evidence.n_located:
            return RetrievalScore(n_gold=evidence.n_located)
        return None

    window = (
        RetrievalScore(n_gold=evidence.n_located)
        if evidence is not None and evidence.n_located and gold_units(question, PARAGRAPH)
        else None
    )
    return QuestionMetrics(
        paragraph=zero(PARAGRAPH), sentence=zero(SENTENCE), scored=question.answerable, window=window
    )


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
    retrieval_em: float | None = None
    unscored: int = 0  # questions the official script does not score (left out of every average)
    #: recall and recall@k at the window level (QuestionMetrics.window), over the questions that
    #: have it; None when none has
    window_recall: float | None = None
    window_recall_at_k: float | None = None


def average_metrics(items: Sequence[QuestionMetrics | None], unit: str = PARAGRAPH) -> AverageMetrics:
    """Average over every question; `None` (no record: the method errored or never ran on it)
    counts as a zero. Retrieval averages over the questions that have gold support at `unit`;
    None when none has. Questions marked `scored=False` are left out, as the official script does."""
    unscored = sum(1 for m in items if m is not None and not m.scored)
    items = [m for m in items if m is None or m.scored]
    n = len(items)
    if n == 0:
        return AverageMetrics(retrieval_unit=unit, unscored=unscored)
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
        n=n,
        em=mean([m.em for m in qs]),
        f1=mean([m.f1 for m in qs]),
        precision=mean([m.precision for m in qs]),
        recall=mean([m.recall for m in qs]),
        retrieval_unit=unit,
        retrieval_n=rn,
        retrieval_precision=rmean("precision"),
        retrieval_recall=rmean("recall"),
        retrieval_f1=rmean("f1"),
        recall_at_k=rmean("recall_at_k"),
        avg_evidence_chunks=mean([m.n_evidence_chunks for m in qs]),
        retrieval_em=rmean("em"),
        unscored=unscored,
        **_window_means([m.window for m in qs], missing),
    )


def _window_means(windows: Sequence[RetrievalScore | None], missing: int) -> dict[str, float | None]:
    """Window-level recall averages: over the questions scored at window level (and the missing
    ones, as zeros, when any is)."""
    got = [w for w in windows if w is not None]
    n = len(got) + missing if got else 0
    if not n:
        return {"window_recall": None, "window_recall_at_k": None}
    return {
        "window_recall": sum(w.recall for w in got) / n,
        "window_recall_at_k": sum(w.recall_at_k for w in got) / n,
    }
