"""Test corpora for T2RAG and IRCoT, over the suite's one scripted reasoner (tests/doubles.py,
re-exported here).

`FakeCorpus` offers the Corpus calls T2RAG and IRCoT use (embed, search_propositions,
search_chunks, get_triplets, get_chunks) over a bag-of-words hashing embedder: deterministic and
instant, enough to drive the state machine. Retrieval quality is tested on a real corpus with the
bundled embedder elsewhere.
"""

from __future__ import annotations

from engine.core.types import Chunk
from tests.doubles import HashEmbedder, MemoryCorpus, OfflineLikeReasoner, Q, ScriptedReasoner, Unparseable, hash_embed  # noqa: F401 - hash_embed re-exported  # noqa: F401 - re-exported

# --- corpus -------------------------------------------------------------------------------------


def FakeCorpus(
    chunk_rows: list[tuple[str, str, str]],  # noqa: N802 - a constructor
    triplet_rows: list[tuple[str, str, str, tuple[str, ...]]],
) -> MemoryCorpus:
    """The suite's one in-memory corpus (tests/doubles.py) over the hashing embedder: chunks as
    (chunk_id, title, text), embedded by their text; triplets as (s, p, o, chunk_ids), ids from 1."""
    chunks = [Chunk(cid, cid.split("#")[0], i, title, text) for i, (cid, title, text) in enumerate(chunk_rows)]
    return MemoryCorpus(HashEmbedder(), chunks, triplet_rows, first_tid=1, embed_title=False)


#: A tiny bridge-question corpus: who performed "Me and Bobby McGee", and that person's child
#: (chunk id, title, text); the triplets as (s, p, o, chunk ids)
BOBBY_CHUNKS = [
    ("song#0", "Me and Bobby McGee", "Me and Bobby McGee is a song written and performed by Kris Kristofferson."),
    ("kris#0", "Kris Kristofferson", "Kris Kristofferson is an American singer. His child is Tracy Kristofferson."),
    ("roger#0", "Roger Miller", "Roger Miller recorded Me and Bobby McGee first. His child is Dean Miller."),
    ("janis#0", "Janis Joplin", "Janis Joplin had a posthumous hit with Me and Bobby McGee."),
    ("film#0", "Film A", "Film A is a 1990 film directed by Alice Smith."),
    ("film#1", "Film B", "Film B is a 1994 film directed by Bob Jones."),
    ("alice#0", "Alice Smith", "Alice Smith was born in Canada."),
    ("bob#0", "Bob Jones", "Bob Jones was born in Canada."),
]
BOBBY_TRIPLETS = [
    ("Me and Bobby McGee", "performer", "Kris Kristofferson", ("song#0",)),
    ("Kris Kristofferson", "child", "Tracy Kristofferson", ("kris#0",)),
    ("Kris Kristofferson", "nationality", "American", ("kris#0",)),
    ("Roger Miller", "recorded", "Me and Bobby McGee", ("roger#0",)),
    ("Roger Miller", "child", "Dean Miller", ("roger#0",)),
    ("Janis Joplin", "hit", "Me and Bobby McGee", ("janis#0",)),
    ("Film A", "director", "Alice Smith", ("film#0",)),
    ("Film B", "director", "Bob Jones", ("film#1",)),
    ("Alice Smith", "born in", "Canada", ("alice#0",)),
    ("Bob Jones", "born in", "Canada", ("bob#0",)),
    # stated by two chunks: the walk must cover both
    ("Me and Bobby McGee", "song by", "Kris Kristofferson", ("song#0", "kris#0")),
]


def bobby_mcgee_corpus() -> MemoryCorpus:
    """The Bobby McGee corpus (BOBBY_CHUNKS, BOBBY_TRIPLETS) as a FakeCorpus."""
    return FakeCorpus(BOBBY_CHUNKS, BOBBY_TRIPLETS)


# A two-hop corpus whose first hop no triplet states (issue 42's chunk channel); every name is invented
HIDDEN_HOP_QUESTION = "Who is the mayor of the town Orla Vennick was born in?"

#: (chunk id, title, text); `orla#0` states the first hop, but no triplet was extracted from it
HIDDEN_HOP_CHUNKS = [
    ("orla#0", "Orla Vennick", "Orla Vennick is a sculptor and studio owner. She was born in Brisk Harbor."),
    ("brisk#0", "Brisk Harbor", "Brisk Harbor is a fishing town on the north coast. Its mayor is Tamsin Oakhurst."),
    ("elsmere#0", "Elsmere", "Elsmere is a market town in the hills. Its mayor is Bram Castellan."),
    ("wexley#0", "Wexley", "Wexley is a river town. Its mayor is Ysolde Marrin."),
    ("piet#0", "Piet Morrow", "Piet Morrow is a film director. Morrow was born in Elsmere."),
    ("teodor#0", "Teodor Halm", "Teodor Halm is a painter. He was born in Wexley."),
    ("tamsin#0", "Tamsin Oakhurst", "Tamsin Oakhurst is a local politician. She was born in Wexley."),
    ("bram#0", "Bram Castellan", "Bram Castellan is a sculptor and a mayor. He was born in Dunmore Quay."),
    ("saltlight#0", "Saltlight Studio", "Saltlight Studio is an animation studio based in Dunmore Quay."),
]
#: every chunk's facts but orla#0's (the extractor missed them)
HIDDEN_HOP_TRIPLETS = [
    ("Brisk Harbor", "mayor", "Tamsin Oakhurst", ("brisk#0",)),
    ("Brisk Harbor", "is", "fishing town", ("brisk#0",)),
    ("Elsmere", "mayor", "Bram Castellan", ("elsmere#0",)),
    ("Wexley", "mayor", "Ysolde Marrin", ("wexley#0",)),
    ("Piet Morrow", "born in", "Elsmere", ("piet#0",)),
    ("Teodor Halm", "born in", "Wexley", ("teodor#0",)),
    ("Tamsin Oakhurst", "born in", "Wexley", ("tamsin#0",)),
    ("Bram Castellan", "born in", "Dunmore Quay", ("bram#0",)),
    ("Bram Castellan", "is", "sculptor", ("bram#0",)),
    ("Saltlight Studio", "based in", "Dunmore Quay", ("saltlight#0",)),
]


def hidden_hop_corpus(embedder) -> MemoryCorpus:
    """HIDDEN_HOP_CHUNKS and HIDDEN_HOP_TRIPLETS over `embedder` (the bundled one: real retrieval)."""
    chunks = [Chunk(cid, title, 0, title, text) for cid, title, text in HIDDEN_HOP_CHUNKS]
    return MemoryCorpus(embedder, chunks, HIDDEN_HOP_TRIPLETS)
