"""Colours for the views: as many distinct tree colours as there are trees, never repeated."""
from __future__ import annotations

import colorsys

#: The first colours, picked by hand to be told apart easily (and from the greys of pruned edges).
_BASE = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
         "#bcbd22", "#393b79", "#637939", "#843c39"]


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


def tint(color: str, amount: float = 0.55) -> str:
    """`color` mixed with white (0 = unchanged, 1 = white): for parts that were not selected."""
    c = color.lstrip("#")
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    mix = [round(v + (255 - v) * amount) for v in (r, g, b)]
    return "#" + "".join(f"{v:02x}" for v in mix)
