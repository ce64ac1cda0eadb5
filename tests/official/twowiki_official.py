"""2WikiMultihopQA's official scoring rules, re-written from 2wikimultihop_evaluate_v1.1.py
(https://github.com/Alab-NII/2wikimultihop @ 209e7618, Apache-2.0): `update_answer` (HotpotQA's
answer rules, each of em/f1/prec/recall maximized over the gold answer and its aliases on its own),
`normalize_sp` and `update_sp` (titles lowercased after the set is taken). See README.md."""

from tests.official.hotpot_official import exact_match_score, f1_score


def answer_scores(prediction, golds):
    best = {"em": 0, "f1": 0, "prec": 0, "recall": 0}
    for gold in golds:
        f1, prec, rec = f1_score(prediction, gold)
        best["em"] = max(best["em"], exact_match_score(prediction, gold))
        best["f1"] = max(best["f1"], f1)
        best["prec"] = max(best["prec"], prec)
        best["recall"] = max(best["recall"], rec)
    best["em"] = float(best["em"])
    return best


def _lower_titles(pairs):
    # a list, not a set: two pairs that differ only by case both stay, as in the script
    return [[title.lower(), *rest] for title, *rest in pairs]


def sp_scores(prediction, gold):
    pred = _lower_titles({tuple(x) for x in prediction})
    ref = _lower_titles({tuple(x) for x in gold})
    tp = len([x for x in pred if x in ref])
    fp = len(pred) - tp
    fn = len([x for x in ref if x not in pred])
    prec = tp / (tp + fp) if tp + fp > 0 else 0.0
    rec = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    return {"em": 1.0 if fp + fn == 0 else 0.0, "f1": f1, "prec": prec, "recall": rec}
