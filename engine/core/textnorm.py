"""Entity normalization shared by the entity graph, KG2RAG's expansion and the offline reasoner.

Two surface forms are the same entity when they agree after lower-casing, Unicode folding,
dropping punctuation and leading articles, and collapsing spaces: "The Beatles" == "beatles".
(The KG2RAG reference code compared raw strings against document titles only.)
"""

from __future__ import annotations

import re
import unicodedata

_ARTICLES = re.compile(r"^(the|a|an)\s+")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)


def normalize_entity(text: str) -> str:
    s = unicodedata.normalize("NFKD", text.translate(_ZERO_WIDTH))
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    s = _PUNCT.sub(" ", s)
    s = _SPACES.sub(" ", s).strip()
    s = _ARTICLES.sub("", s)
    return s


def shorten(text: str, limit: int) -> str:
    """`text` on one line in at most `limit` characters: cut at the last word boundary that fits,
    with "…", never inside a word (a name cut to "Saxby-Junna w" reads as a typo on screen)."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    head = text[: max(1, limit - 1)]
    cut = head.rfind(" ")
    if cut >= limit // 2:  # a word boundary not too far back; else one long word is cut
        head = head[:cut]
    return head.rstrip(" ,;:-–—") + "…"
