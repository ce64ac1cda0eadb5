"""Evaluation: answer/retrieval metrics (metrics.py), the resumable harness (harness.py, with one
question's run and score in scoring.py and the records on disk in records.py), summaries
(report.py), T2RAG failure labels (failures.py) and robustness probes on corpus copies (probes.py)."""
