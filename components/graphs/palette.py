"""Colours for the views: as many distinct tree colours as there are trees, never repeated; the
first twelve from colour-blind-safe palettes."""

from __future__ import annotations

import colorsys

#: The first colours: colour-blind safe (Okabe & Ito's palette, then Paul Tol's "muted" for more),
#: each at least 3:1 against white so a tree's edges read as lines (the paler members, orange,
#: sky blue, teal and olive, darkened at the same hue); no yellow (it vanishes on white), no grey
#: (pruned edges are grey), no black (the seed ring is black). tests/app/test_graph_readability.py.
#: Ordered so that trees next to each other in rank (drawn near each other) get the most different
#: hues: a blue, a green or an orange comes back only four or more places later, darker or lighter.
_BASE = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#332288",
    "#AD6800",
    "#117733",
    "#882255",
    "#2B8CC4",
    "#868630",
    "#AA4499",
    "#3A8F82",
]


def distinct_colors(n: int) -> list[str]:
    """`n` different colours: the hand-picked ones, then hues spaced by the golden angle (each
    new hue lands in the largest gap left so far) at two lightness levels."""
    out = list(_BASE[:n])
    i = 0
    while len(out) < n:
        h = (0.11 + i * 0.618034) % 1.0
        light = 0.42 if i % 2 == 0 else 0.58
        r, g, b = colorsys.hls_to_rgb(h, light, 0.65)
        c = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
        if c not in out:
            out.append(c)
        i += 1
    return out


def contrast_on_white(color: str) -> float:
    """WCAG contrast ratio of `color` against white (1 = invisible, 21 = black)."""
    c = color.lstrip("#")

    def linear(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(c[i : i + 2], 16)) for i in (0, 2, 4))
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def tint(color: str, amount: float = 0.55) -> str:
    """`color` mixed with white (0 = unchanged, 1 = white): for parts that were not selected."""
    c = color.lstrip("#")
    r, g, b = (int(c[i : i + 2], 16) for i in (0, 2, 4))
    mix = [round(v + (255 - v) * amount) for v in (r, g, b)]
    return "#" + "".join(f"{v:02x}" for v in mix)
