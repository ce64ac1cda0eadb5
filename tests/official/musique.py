"""MuSiQue's official scoring (metrics/answer.py with SQuAD 2.0's functions; metrics/support.py),
restated; see README.md."""

import collections

from tests.official.hotpot import normalize_answer  # the same SQuAD normalization


def get_tokens(s):
    if not s:
        return []
    return normalize_answer(s).split()


def compute_exact(a_gold, a_pred):
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    gold_toks = get_tokens(a_gold)
    pred_toks = get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    return max(metric_fn(prediction, ground_truth) for ground_truth in ground_truths)


def answer_metric(predicted_answer, ground_truth_answers):
    """(EM, F1) of one question, as AnswerMetric.__call__ accumulates them."""
    em = metric_max_over_ground_truths(compute_exact, predicted_answer, ground_truth_answers)
    f1 = metric_max_over_ground_truths(compute_f1, predicted_answer, ground_truth_answers)
    return int(em), f1


def support_f1(predicted_idxs, gold_idxs):
    """Set precision/recall/F1 over paragraph indices (SupportMetric)."""
    predicted, gold = set(predicted_idxs), set(gold_idxs)
    same = len(predicted & gold)
    if not same:
        return 0.0
    p, r = same / len(predicted), same / len(gold)
    return 2 * p * r / (p + r)
