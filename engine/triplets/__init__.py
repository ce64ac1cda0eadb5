"""Triplets: extraction over a corpus, triplet files in and out, resolution (the filter rules are
engine/core/triplet_rules.py)."""
