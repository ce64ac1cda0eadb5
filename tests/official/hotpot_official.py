"""HotpotQA's official scoring rules, re-written from hotpot_evaluate_v1.py
(https://github.com/hotpotqa/hotpot @ 4c0fa5ea, Apache-2.0): `normalize_answer`, `f1_score`,
`exact_match_score`, `update_answer`, `update_sp`. Same order of steps and edge cases; see README.md."""

import re
import string
from collections import Counter

_ARTICLE = re.compile(r"\b(a|an|the)\b")
_YES_NO = ("yes", "no", "noanswer")


def normalize_answer(s):
    # the script's order: lower, drop punctuation, drop articles, fix white space
    s = s.lower()
    s = "".join(c for c in s if c not in set(string.punctuation))
    s = _ARTICLE.sub(" ", s)
    return " ".join(s.split())


def f1_score(prediction, ground_truth):
    """(f1, precision, recall); (0, 0, 0) when a yes/no/noanswer side disagrees or nothing overlaps."""
    p_norm, g_norm = normalize_answer(prediction), normalize_answer(ground_truth)
    if (p_norm in _YES_NO or g_norm in _YES_NO) and p_norm != g_norm:
        return 0, 0, 0
    p_tok, g_tok = p_norm.split(), g_norm.split()
    overlap = sum((Counter(p_tok) & Counter(g_tok)).values())
    if not overlap:
        return 0, 0, 0
    prec, rec = overlap / len(p_tok), overlap / len(g_tok)
    return 2 * prec * rec / (prec + rec), prec, rec


def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def answer_scores(prediction, gold):
    """What `update_answer` adds for one instance (HotpotQA has one gold answer)."""
    f1, prec, rec = f1_score(prediction, gold)
    return {"em": float(exact_match_score(prediction, gold)), "f1": f1, "prec": prec, "recall": rec}


def sp_scores(prediction, gold):
    """What `update_sp` adds for one instance: sets of (title, sent_id), tp/fp/fn counts."""
    pred, ref = {tuple(x) for x in prediction}, {tuple(x) for x in gold}
    tp = len([x for x in pred if x in ref])
    fp = len(pred) - tp
    fn = len([x for x in ref if x not in pred])
    prec = tp / (tp + fp) if tp + fp > 0 else 0.0
    rec = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    return {"em": 1.0 if fp + fn == 0 else 0.0, "f1": f1, "prec": prec, "recall": rec}
