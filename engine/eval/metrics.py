"""Answer and retrieval metrics, following each dataset's official evaluation script.

Answers (normalize: lowercase, drop punctuation, drop the articles a/an/the, collapse spaces):

* HotpotQA (`hotpot_evaluate_v1.py`) and 2WikiMultihopQA (`2wikimultihop_evaluate_v1.1.py`, which
  adds aliases): EM and token F1; a `yes`, `no` or `noanswer` on either side scores 0 unless both
  sides agree; EM, F1, precision and recall are each maximized over the gold and its aliases.
  An empty gold answer stays a gold: EM is 1 only for an empty prediction, F1 is 0.
  Questions of any other set (HippoRAG files, PopQA, a user's own) follow these rules too.
* MuSiQue (`metrics/answer.py`): the SQuAD rules with no yes/no rule; when the gold or the
  prediction has no token, F1 and EM are 1 if both have none, else 0. Only answerable questions
  (`answerable`, MuSiQue-Full) are scored, as `evaluate_v1.0.py` does.

Retrieval compares the units a method used as evidence against the gold supporting units, with
the official scripts' set counts (tp, fp, fn; `em` is 1 when fp + fn = 0):

* a paragraph of HotpotQA / 2Wiki is its title; a MuSiQue paragraph is its `idx` in the question's
  20 paragraphs (`SupportMetric`), so two paragraphs sharing a title are told apart, and a chunk
  of a paragraph the question never came with (a pooled corpus) is a wrong prediction;
  MuSiQue scores an empty gold against an empty prediction as F1 = EM = 1;
* a sentence is `(title, sent_id)`; a chunk covers the sentences `sent_start .. sent_end-1` of its
  document; 2Wiki compares titles lowercased (`normalize_sp`).

A question whose gold is evidence text (engine/eval/evidence.py) is scored on the spans located in
the corpus: recall = spans covered by the chunks used, precision = chunks used that hold a span.

recall@k (ours) is the recall of the first k chunks. Averages run over **all** questions: a question
that retrieved nothing, or whose method errored, counts 0 (the KG2RAG script averaged only over the
questions it answered, which flatters it).
"""
from __future__ import annotations

import collections
import functools
import re
import string
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from engine.eval.evidence import EvidenceGold, span_recall
from engine.types import Chunk, Question

#: The two retrieval granularities.
PARAGRAPH = "paragraph"
SENTENCE = "sentence"
UNITS = (PARAGRAPH, SENTENCE)
MUSIQUE = "musique"
TWOWIKI = "2wiki"
HOTPOTQA = "hotpotqa"

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


def _hotpot_one(prediction: str, gold: str) -> AnswerScore:
    pred_n, gold_n = normalize_answer(prediction), normalize_answer(gold)
    em = float(pred_n == gold_n)
    # HotpotQA's rule: yes/no/noanswer never earns partial credit against anything else.
    if (pred_n in _SPECIAL or gold_n in _SPECIAL) and pred_n != gold_n:
        return AnswerScore(em, 0.0, 0.0, 0.0)
    common = collections.Counter(pred_n.split()) & collections.Counter(gold_n.split())
    same = sum(common.values())
    if same == 0:
        return AnswerScore(em, 0.0, 0.0, 0.0)
    p = same / len(pred_n.split())
    r = same / len(gold_n.split())
    return AnswerScore(em, 2 * p * r / (p + r), p, r)


def _musique_one(prediction: str, gold: str) -> AnswerScore:
    pred_t = normalize_answer(prediction).split() if prediction else []
    gold_t = normalize_answer(gold).split() if gold else []
    em = float(normalize_answer(prediction) == normalize_answer(gold))
    if not pred_t or not gold_t:  # "no answer" on either side: 1 if both agree, else 0
        same = float(pred_t == gold_t)
        return AnswerScore(em, same, same, same)
    same = sum((collections.Counter(gold_t) & collections.Counter(pred_t)).values())
    if same == 0:
        return AnswerScore(em, 0.0, 0.0, 0.0)
    p, r = same / len(pred_t), same / len(gold_t)
    return AnswerScore(em, 2 * p * r / (p + r), p, r)


def answer_score(prediction: str, golds: Sequence[str], dataset: str = "") -> AnswerScore:
    """Best EM, F1, precision and recall over the gold answer and its aliases, by `dataset`'s
    official rules (module docstring). No gold at all is scored as an empty gold answer."""
    prediction = prediction if isinstance(prediction, str) else ""
    golds = [str(g) for g in golds if g is not None] or [""]
    if dataset == MUSIQUE:
        # the official script reports EM and F1 only; precision/recall come from the best-F1 gold
        scores = [_musique_one(prediction, g) for g in golds]
        best = max(scores, key=lambda s: s.f1)
        return AnswerScore(max(s.em for s in scores), best.f1, best.precision, best.recall)
    scores = [_hotpot_one(prediction, g) for g in golds]
    return AnswerScore(max(s.em for s in scores), max(s.f1 for s in scores),
                       max(s.precision for s in scores), max(s.recall for s in scores))


# --- retrieval ---------------------------------------------------------------------------------

def _title_key(title: str) -> str:
    # Titles come from the same dataset on both sides; only stray whitespace differs in practice.
    return " ".join((title or "").split())


def by_paragraph_index(question: Question | None) -> bool:
    """True when paragraph retrieval is scored by MuSiQue paragraph index, not by title."""
    return question is not None and question.dataset == MUSIQUE and bool(question.paragraphs)


@functools.lru_cache(maxsize=4096)
def _idx_of_doc(paragraphs: tuple[tuple[int, str], ...]) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for idx, doc_id in paragraphs:
        out.setdefault(doc_id, []).append(idx)
    return {d: tuple(i) for d, i in out.items()}


def chunk_units(chunk: Chunk, unit: str, question: Question | None = None) -> list:
    """The units one chunk covers: its title (its paragraph `idx` for a MuSiQue question, or
    `("doc", doc_id)` for a paragraph the question did not come with), or each `(title, sent_id)`."""
    title = _title_key(chunk.title)
    if unit == PARAGRAPH:
        if by_paragraph_index(question):
            return list(_idx_of_doc(question.paragraphs).get(chunk.doc_id, ())) or [("doc", chunk.doc_id)]
        return [title]
    if unit != SENTENCE:
        raise ValueError(f"unknown retrieval unit {unit!r}; use one of {UNITS}")
    end = chunk.sent_end if chunk.sent_end > chunk.sent_start else chunk.sent_start + 1
    return [(title, i) for i in range(chunk.sent_start, end)]


def _official_form(units: Iterable, unit: str, question: Question | None) -> list:
    # 2Wiki's normalize_sp lowercases titles after the set is taken: keep its (rare) duplicates
    if unit == SENTENCE and question is not None and question.dataset == TWOWIKI:
        return [(u[0].lower(), u[1]) for u in units]
    return list(units)


def retrieved_units(chunks: Iterable[Chunk], unit: str, question: Question | None = None) -> list:
    """Units in the order the chunks were used, each once. Pass the question to score it by its
    dataset's rules (MuSiQue paragraph index, 2Wiki lowercase titles); without it, titles."""
    seen: dict = {}
    for c in chunks:
        for u in chunk_units(c, unit, question):
            seen.setdefault(u, None)
    return _official_form(seen, unit, question)


def gold_units(question: Question, unit: str) -> set:
    """Gold supporting units; paragraphs fall back to the titles of the supporting facts; MuSiQue
    paragraphs are the supporting `idx`. Compare with `retrieved_units(..., question)`."""
    return set(_gold_list(question, unit))


def _gold_list(question: Question, unit: str) -> list:
    # as the official scripts count them (2Wiki: lowercased after the set is taken)
    if unit == SENTENCE:
        facts = dict.fromkeys((_title_key(t), int(i)) for t, i in question.supporting_facts)
        return _official_form(facts, unit, question)
    if by_paragraph_index(question):
        return list(dict.fromkeys(question.supporting_idx))
    titles = question.supporting_titles or tuple(t for t, _ in question.supporting_facts)
    return list(dict.fromkeys(_title_key(t) for t in titles))


def has_gold(question: Question, unit: str) -> bool:
    """Whether retrieval at `unit` can be scored: gold exists, or (MuSiQue) the question came with
    its paragraphs, so an empty gold is a real one that the official script scores."""
    return bool(_gold_list(question, unit)) or (unit == PARAGRAPH and by_paragraph_index(question))


@dataclass(frozen=True)
class RetrievalScore:
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    recall_at_k: float = 0.0
    n_retrieved: int = 0  # units retrieved
    n_gold: int = 0
    em: float = 0.0  # the official scripts' support EM: exactly the gold units, no more, no less


def _counts(pred: Sequence, gold: Collection) -> tuple[int, int, int]:
    tp = sum(1 for e in pred if e in gold)
    return tp, len(pred) - tp, sum(1 for e in gold if e not in pred)


def retrieval_score(retrieved: Sequence, gold: Collection, *, k_units: Sequence | None = None,
                    empty_is_perfect: bool = False) -> RetrievalScore:
    """Precision / recall / F1 / EM of `retrieved` units against `gold`, counted as hotpot's
    `update_sp` counts them. `k_units` are the units of the first k chunks (recall@k); defaults to
    all retrieved. Nothing retrieved scores 0 (not "undefined"), so it pulls the average down;
    `empty_is_perfect` is MuSiQue's rule for an empty gold met by an empty prediction."""
    pred = retrieved if isinstance(retrieved, list) else list(dict.fromkeys(retrieved))
    gold = list(gold)
    tp, fp, fn = _counts(pred, gold)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    em = 1.0 if fp + fn == 0 else 0.0
    if empty_is_perfect and not pred and not gold:
        f1, em = 1.0, 1.0
    top = list(k_units) if k_units is not None else pred
    tk, _, fk = _counts(top, gold)
    rk = tk / (tk + fk) if tk + fk else 0.0
    return RetrievalScore(p, r, f1, rk, len(pred), len(gold), em)


def score_retrieval(chunks: Sequence[Chunk], question: Question, unit: str, k: int) -> RetrievalScore | None:
    """Score the chunks a method used as evidence (in the order used). None when the question
    carries no gold support at this unit, so it cannot be scored at all."""
    if not has_gold(question, unit):
        return None
    return retrieval_score(retrieved_units(chunks, unit, question), _gold_list(question, unit),
                           k_units=retrieved_units(chunks[:k], unit, question),
                           empty_is_perfect=question.dataset == MUSIQUE)


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
    no gold support at that unit (a user's own questions); both are zero-filled on errors."""

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


def score_question(prediction: str, question: Question, chunks: Sequence[Chunk], k: int = 5,
                   evidence: EvidenceGold | None = None) -> QuestionMetrics:
    """`evidence`: the question's located evidence spans (evidence.locate_evidence); they score
    retrieval at any unit where the question has no other gold."""
    a = answer_score(prediction, question.answers, question.dataset)

    def ret(unit: str) -> RetrievalScore | None:
        if evidence is not None and not has_gold(question, unit):
            return evidence_score(evidence, chunks, k)
        return score_retrieval(chunks, question, unit, k)
    return QuestionMetrics(
        em=a.em, f1=a.f1, precision=a.precision, recall=a.recall,
        paragraph=ret(PARAGRAPH), sentence=ret(SENTENCE),
        n_evidence_chunks=len(chunks), scored=question.answerable,
    )


def failed_question_metrics(question: Question, evidence: EvidenceGold | None = None) -> QuestionMetrics:
    """What an errored question scores: zero everywhere it could have been scored."""
    def zero(unit: str) -> RetrievalScore | None:
        if has_gold(question, unit):
            return RetrievalScore(n_gold=len(_gold_list(question, unit)))
        if evidence is not None and evidence.n_located:
            return RetrievalScore(n_gold=evidence.n_located)
        return None
    return QuestionMetrics(paragraph=zero(PARAGRAPH), sentence=zero(SENTENCE), scored=question.answerable)


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
        n=n, em=mean([m.em for m in qs]), f1=mean([m.f1 for m in qs]),
        precision=mean([m.precision for m in qs]), recall=mean([m.recall for m in qs]),
        retrieval_unit=unit, retrieval_n=rn,
        retrieval_precision=rmean("precision"), retrieval_recall=rmean("recall"),
        retrieval_f1=rmean("f1"), recall_at_k=rmean("recall_at_k"),
        avg_evidence_chunks=mean([m.n_evidence_chunks for m in qs]),
        retrieval_em=rmean("em"), unscored=unscored,
    )
