"""The offline reasoner: the four jobs by rules, no model (a labelled floor, not T2RAG's reasoner).

`reasoner.py` the jobs, `spans.py` the word lists and named spans, `rules.py` the extraction rules,
`questions/` the question shapes and their query triplets, `match.py` entity and relation matching,
`values.py` a relation's value among facts, `answering.py` the answer step.
"""

from engine.reasoners.offline.reasoner import OfflineReasoner

__all__ = ["OfflineReasoner"]
