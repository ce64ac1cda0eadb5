"""`corpus check` and `corpus check --repair` on the files themselves.

`inspect` never stops at the first unreadable part: it opens the database and each index file on
its own and names every damage it finds. `repair` rebuilds what is derived (the index files, from
the vectors stored in SQLite) and, when SQLite itself is damaged, salvages every row SQLite can
still read into a new corpus and reports what was lost; the damaged original is never overwritten.
"""

from engine.integrity.checks import inspect, inspect_database, inspect_index, inspect_milvus
from engine.integrity.findings import INDEXES, TABLES, Finding, RepairReport
from engine.integrity.repair import repair

__all__ = [
    "INDEXES",
    "TABLES",
    "Finding",
    "RepairReport",
    "inspect",
    "inspect_database",
    "inspect_index",
    "inspect_milvus",
    "repair",
]
