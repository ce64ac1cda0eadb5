"""Evaluation: answer/retrieval metrics (metrics.py), the resumable harness (harness.py), T2RAG
failure labels (failures.py) and robustness probes on corpus copies (probes.py)."""
