"""One set of triplet rules for every source (issue 13): a triplet an LLM extraction drops, an
imported file drops too, for the same reason. Before, imports and extraction each had a
placeholder list and the two disagreed ("entity", "no", "..." passed one and not the other)."""

from __future__ import annotations

import json

import pytest

from engine.core.triplet_rules import PLACEHOLDER_PARTS, filter_reason, filter_triplets
from engine.triplets.files import read_triplet_bytes

TEXT = "Alien is a 1979 film directed by Ridley Scott. Scott was born in South Shields."


@pytest.mark.parametrize("placeholder", sorted(p for p in PLACEHOLDER_PARTS if p))
def test_a_placeholder_part_is_dropped_by_extraction_and_by_import_alike(placeholder):
    triplet = ("Alien", "directed by", placeholder)
    assert filter_reason(*triplet) == f"placeholder object {placeholder!r}"
    assert filter_triplets([triplet, ("Alien", "directed by", "Ridley Scott")], TEXT) == [
        ("Alien", "directed by", "Ridley Scott")
    ]
    rows = [
        {"subject": "Alien", "predicate": "directed by", "object": placeholder, "chunk_id": "0123456789abcdef#0"},
        {"subject": "Alien", "predicate": "directed by", "object": "Ridley Scott", "chunk_id": "0123456789abcdef#0"},
    ]
    tf = read_triplet_bytes("t.jsonl", "\n".join(json.dumps(r) for r in rows).encode())
    assert [(r.subject, r.predicate, r.object) for r in tf.rows] == [("Alien", "directed by", "Ridley Scott")]
    assert tf.skipped == 1 and "placeholder object" in tf.errors[0]


def test_the_same_entity_on_both_sides_is_dropped_by_both():
    for triplet in (("Ridley Scott", "is", "ridley scott"), ("The Beatles", "is", "Beatles")):
        assert filter_reason(*triplet) == "subject equals object"
        assert filter_triplets([triplet], "The Beatles is Beatles. Ridley Scott is ridley scott.") == []


def test_extraction_also_requires_the_relation_or_object_in_the_chunk():
    assert filter_triplets([("Ridley Scott", "born in", "South Shields")], TEXT)
    assert not filter_triplets([("Ridley Scott", "nationality", "English")], TEXT)  # invented: not in the text
