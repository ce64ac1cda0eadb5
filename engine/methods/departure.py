"""One way a run departs from the paper, as the trace records it and the screen lists it.

A leaf of `engine.methods`: the traces hold a list of these, and `engine.methods.presets` (which
knows every method's settings) makes them, so neither imports the other through this type.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Departure:
    """A setting whose value differs from the paper's (`kind="setting"`), one of SPEC's named bug
    fixes of the authors' code, which every preset keeps (`kind="fix"`), engine behaviour every
    preset shares (`kind="engine"`), or what one run could not do as the paper does whatever its
    settings (`kind="run"`: HippoRAG 2's recognition memory under the offline reasoner)."""

    name: str  # the setting's field name, or the fix's short name
    value: str  # what this run used (for a fix: what we do)
    paper: str  # the paper's value (for a fix: what the reference code does)
    reason: str  # one line: why we depart
    kind: str = "setting"
