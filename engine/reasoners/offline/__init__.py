"""The offline reasoner: the four jobs by rules, no model (a labelled floor, not T2RAG's reasoner).

`reasoner.py` the jobs, `patterns.py` the extraction rules and spans, `questions.py` the question
shapes and their query triplets, `match.py` entity and relation matching.
"""

from engine.reasoners.offline.reasoner import OfflineReasoner

__all__ = ["OfflineReasoner"]
