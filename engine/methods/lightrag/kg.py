"""The corpus's chunks and triplets as LightRAG's custom knowledge graph (`ainsert_custom_kg`).

LightRAG's own indexing asks an LLM to extract entities (name, type, description) and relations
(source, target, keywords, description, strength) from every chunk, then merges them: one node per
entity name, one undirected edge per entity pair, the descriptions of every mention joined, and
every chunk that mentions it listed in `source_id` (separated by `<SEP>`). Here the corpus's stored
triplets stand in for that extraction, so every method reads the same triplets:

* a **chunk** is the text the corpus embeds (its title, then its text), under its chunk id;
* an **entity** is a triplet subject or object, named as LightRAG names entities
  (`normalize_entity_name`); its description is the facts it takes part in, each written
  "subject predicate object" (at most `DESCRIPTION_FACTS`: LightRAG would have an LLM summarize a
  longer list, and building the graph must not call one); its type is LightRAG's "UNKNOWN";
* a **relation** joins the two entities of one or more triplets (either direction): its keywords are
  their predicates, its description their facts, its weight the number of chunks stating them;
* `source_id`: the custom-KG call takes one chunk per entity and relation, so the payload names the
  first, and `sources` keeps every chunk for the storage to write back (storage.py).

Pure functions over `CorpusView` reads: nothing here touches LightRAG's storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.core.types import Chunk, Triplet
from engine.methods.common import format_context

#: Facts kept in an entity's or a relation's description, in corpus order.
DESCRIPTION_FACTS = 8
#: LightRAG's type for an entity its extraction gave no type (the corpus's triplets have none).
ENTITY_TYPE = "UNKNOWN"


@dataclass
class CustomKG:
    """What `ainsert_custom_kg` takes, and what the storage writes back after it."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    relationships: list[dict[str, Any]] = field(default_factory=list)
    #: entity name -> every chunk id (ours) stating a fact about it, in corpus order
    entity_sources: dict[str, list[str]] = field(default_factory=dict)
    #: (source, target) as in `relationships` -> every chunk id (ours) stating it
    relation_sources: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # why triplets were left out -> how many

    def payload(self) -> dict[str, Any]:
        return {"chunks": self.chunks, "entities": self.entities, "relationships": self.relationships}


def chunk_content(chunk: Chunk) -> str:
    """A chunk as LightRAG stores and embeds it: the text the corpus embedded for it."""
    return format_context([chunk])


def custom_kg(chunks: list[Chunk], triplets: list[Triplet], normalize: Any) -> CustomKG:
    """The payload for `chunks` and `triplets`; `normalize` is LightRAG's `normalize_entity_name`
    (a name it normalizes to nothing, such as "12", is left out, as its extraction would)."""
    kg = CustomKG()
    for c in chunks:
        kg.chunks.append(
            {
                "content": chunk_content(c),
                "source_id": c.chunk_id,
                "chunk_order_index": c.position,
                "file_path": c.title or c.doc_id,
            }
        )
    g = _group(triplets, {c.chunk_id for c in chunks}, normalize, kg.skipped)
    for name, sources in g.ent_sources.items():
        kg.entity_sources[name] = list(sources)
        kg.entities.append(
            {
                "entity_name": name,
                "entity_type": ENTITY_TYPE,
                "description": _describe(list(g.facts[name])),
                "source_id": next(iter(sources)),
            }
        )
    for pair, sources in g.rel_sources.items():
        kg.relation_sources[pair] = list(sources)
        kg.relationships.append(
            {
                "src_id": pair[0],
                "tgt_id": pair[1],
                "description": _describe(list(g.rel_facts[pair])),
                "keywords": ", ".join(g.rel_keywords.get(pair, {})),
                "weight": float(len(sources)),
                "source_id": next(iter(sources)),
            }
        )
    return kg


@dataclass
class _Groups:
    """Triplets grouped by entity and by entity pair; ordered sets (dicts), as a hub entity has
    thousands of facts."""

    ent_sources: dict[str, dict[str, None]] = field(default_factory=dict)
    rel_sources: dict[tuple[str, str], dict[str, None]] = field(default_factory=dict)
    facts: dict[str, dict[str, None]] = field(default_factory=dict)
    rel_facts: dict[tuple[str, str], dict[str, None]] = field(default_factory=dict)
    rel_keywords: dict[tuple[str, str], dict[str, None]] = field(default_factory=dict)


def _group(triplets: list[Triplet], known: set[str], normalize: Any, skipped: dict[str, int]) -> _Groups:
    g = _Groups()
    for t in triplets:
        cids = [c for c in t.chunk_ids if c in known]
        s, o = _name(normalize, t.subject), _name(normalize, t.object)
        why = (
            "no chunk of the corpus states it"
            if not cids
            else "an entity LightRAG's naming leaves empty"
            if not s or not o
            else "subject and object name the same entity"
            if s == o
            else ""
        )
        if why:
            _count(skipped, why)
            continue
        fact = t.proposition
        for name in (s, o):
            g.ent_sources.setdefault(name, {}).update(dict.fromkeys(cids))
            g.facts.setdefault(name, {})[fact] = None
        pair = (o, s) if (o, s) in g.rel_sources else (s, o)  # one undirected edge per pair
        g.rel_sources.setdefault(pair, {}).update(dict.fromkeys(cids))
        g.rel_facts.setdefault(pair, {})[fact] = None
        if t.predicate.strip():
            g.rel_keywords.setdefault(pair, {})[t.predicate.strip()] = None
    return g


def _name(normalize: Any, text: str) -> str:
    try:
        return str(normalize(text) or "").strip()
    except (ValueError, TypeError):
        return ""


def _describe(facts: list[str]) -> str:
    shown = facts[:DESCRIPTION_FACTS]
    more = len(facts) - len(shown)
    return "; ".join(shown) + (f"; and {more} more facts" if more > 0 else "")


def _count(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1
