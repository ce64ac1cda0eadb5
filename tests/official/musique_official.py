"""MuSiQue's official scoring rules, re-written from metrics/answer.py, metrics/support.py and
evaluate_v1.0.py (https://github.com/StonyBrookNLP/musique @ 8b8d8ce1, Apache-2.0). See README.md.

Answers: SQuAD rules (`compute_exact`, `compute_f1` with its "no tokens on either side" rule, max
over `[answer] + answer_aliases`), no yes/no rule. Support: `SupportMetric` over paragraph `idx`,
with an empty prediction against an empty gold scored F1 = EM = 1. Only `answerable` instances are
scored."""

import collections
import re
import string

_ARTICLE = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s):
    s = "".join(c for c in s.lower() if c not in set(string.punctuation))
    return " ".join(_ARTICLE.sub(" ", s).split())


def get_tokens(s):
    return normalize_answer(s).split() if s else []


def compute_exact(a_gold, a_pred):
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    gold, pred = get_tokens(a_gold), get_tokens(a_pred)
    if not gold or not pred:
        return int(gold == pred)  # "no answer" on a side: 1 when both agree
    same = sum((collections.Counter(gold) & collections.Counter(pred)).values())
    if same == 0:
        return 0
    prec, rec = same / len(pred), same / len(gold)
    return 2 * prec * rec / (prec + rec)


def answer_scores(prediction, ground_truths):
    """What `AnswerMetric` adds for one instance: the best EM and the best F1 over the golds."""
    return {
        "em": int(max(compute_exact(prediction, g) for g in ground_truths)),
        "f1": max(compute_f1(prediction, g) for g in ground_truths),
    }


def support_scores(predicted_idxs, gold_idxs):
    """What `SupportMetric` adds for one instance."""
    pred, gold = {int(i) for i in predicted_idxs}, {int(i) for i in gold_idxs}
    tp = len(pred & gold)
    fp, fn = len(pred) - tp, len(gold) - tp
    prec = tp / (tp + fp) if tp + fp > 0 else 0.0
    rec = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    em = 1.0 if fp + fn == 0 else 0.0
    if not pred and not gold:
        f1, em = 1.0, 1.0
    return {"em": em, "f1": f1, "prec": prec, "recall": rec}


def gold_answers(instance):
    return [instance["answer"]] + instance["answer_aliases"]


def gold_support_idxs(instance):
    return [p["idx"] for p in instance["paragraphs"] if p["is_supporting"]]
