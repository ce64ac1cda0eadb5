"""Evaluation: answer/retrieval metrics (metrics.py), the resumable harness (harness.py, with one
question's run and score in scoring.py and the records on disk in records.py), summaries
(report.py), failure labels for methods whose trace reports its pipeline (failures.py) and
robustness probes on corpus copies (probes.py)."""
