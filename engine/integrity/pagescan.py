"""Read table rows straight off the pages of a damaged SQLite file.

SQLite reads a table through its b-tree: when an interior page is lost (a truncated file, a page
overwritten with garbage), every row under it becomes unreachable although its leaf page is
intact. This scanner walks every page of the file, parses the table-leaf pages (format:
https://www.sqlite.org/fileformat2.html, sections 1.6 and 2.1) and yields `(rowid, values)` for
each cell whose record it can decode, following overflow chains. Pages on the freelist are
skipped, so rows deleted before the damage do not come back. Which table a row belongs to is
decided by the caller from the shape of its values.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

_LEAF_TABLE = 0x0D


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    v = 0
    for k in range(9):
        if i + k >= len(buf):
            raise ValueError("varint past the end of the page")
        b = buf[i + k]
        if k == 8:
            return (v << 8) | b, i + 9
        v = (v << 7) | (b & 0x7F)
        if b < 0x80:
            return v, i + k + 1
    raise ValueError("bad varint")  # pragma: no cover


def _value(stype: int, data: bytes, i: int):
    sizes = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8, 8: 0, 9: 0}
    if stype in sizes:
        n = sizes[stype]
        raw = data[i : i + n]
        if len(raw) != n:
            raise ValueError("value past the end of the record")
        if stype == 0:
            return None, i
        if stype == 7:
            return struct.unpack(">d", raw)[0], i + n
        if stype in (8, 9):
            return stype - 8, i
        return int.from_bytes(raw, "big", signed=True), i + n
    if stype >= 12:
        n = (stype - 12) // 2
        raw = data[i : i + n]
        if len(raw) != n:
            raise ValueError("value past the end of the record")
        return (bytes(raw) if stype % 2 == 0 else raw.decode("utf-8")), i + n
    raise ValueError(f"reserved serial type {stype}")


def _record(data: bytes) -> tuple:
    hlen, i = _varint(data, 0)
    types = []
    while i < hlen:
        t, i = _varint(data, i)
        types.append(t)
    pos, out = hlen, []
    for t in types:
        v, pos = _value(t, data, pos)
        out.append(v)
    return tuple(out)


class PageFile:
    def __init__(self, path: Path):
        self.raw = Path(path).read_bytes()
        if len(self.raw) < 100 or self.raw[:16] != b"SQLite format 3\x00":
            raise ValueError(f"{path} has no SQLite header")
        size = int.from_bytes(self.raw[16:18], "big")
        self.page_size = 65536 if size == 1 else size
        self.usable = self.page_size - self.raw[20]
        self.pages = len(self.raw) // self.page_size

    def page(self, n: int) -> bytes:
        """Page `n` (1-based), or b'' when the file ends before it."""
        return self.raw[(n - 1) * self.page_size : n * self.page_size] if 1 <= n <= self.pages else b""

    def freelist(self) -> set[int]:
        free: set[int] = set()
        trunk = int.from_bytes(self.raw[32:36], "big")
        while trunk and trunk not in free:
            page = self.page(trunk)
            if len(page) < 8:
                break
            free.add(trunk)
            count = int.from_bytes(page[4:8], "big")
            for k in range(min(count, (self.usable - 8) // 4)):
                free.add(int.from_bytes(page[8 + 4 * k : 12 + 4 * k], "big"))
            trunk = int.from_bytes(page[:4], "big")
        return free

    def _payload(self, page: bytes, i: int) -> tuple[int, bytes]:
        size, i = _varint(page, i)
        rowid, i = _varint(page, i)
        u = self.usable
        x = u - 35
        if size <= x:
            return rowid, page[i : i + size]
        m = ((u - 12) * 32 // 255) - 23
        k = m + ((size - m) % (u - 4))
        local = k if k <= x else m
        data = bytearray(page[i : i + local])
        nxt = int.from_bytes(page[i + local : i + local + 4], "big")
        seen = set()
        while len(data) < size:
            over = self.page(nxt)
            if not over or nxt in seen:
                raise ValueError("overflow chain broken")
            seen.add(nxt)
            data += over[4:u][: size - len(data)]
            nxt = int.from_bytes(over[:4], "big")
        return rowid, bytes(data)

    def rows(self) -> Iterator[tuple[int, int, tuple]]:
        """(page number, rowid, values) of every decodable cell of every table-leaf page."""
        free = self.freelist()
        for n in range(1, self.pages + 1):
            if n in free:
                continue
            page = self.page(n)
            off = 100 if n == 1 else 0
            if page[off] != _LEAF_TABLE:
                continue
            cells = int.from_bytes(page[off + 3 : off + 5], "big")
            for c in range(cells):
                try:
                    ptr = int.from_bytes(page[off + 8 + 2 * c : off + 10 + 2 * c], "big")
                    if not off + 8 <= ptr < self.usable:
                        continue
                    rowid, payload = self._payload(page, ptr)
                    yield n, rowid, _record(payload)
                except (ValueError, UnicodeDecodeError, IndexError):
                    continue
