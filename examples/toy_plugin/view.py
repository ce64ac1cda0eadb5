"""The front-end half: `steps()` is the one function a view must provide. The app's stepper, the
Compare column, presentation mode and the HTML export all draw from it (components/methods/base.py
fills in the rest)."""

from __future__ import annotations

from components.steps import Section, Step, call_tuples, name_of


def steps(result, names=None) -> list[Step]:
    tr = result.trace
    ranked = [f"{n} words shared  {name_of(names, cid)}" for cid, n in tr.ranked]
    return [
        Step("Rank chunks by shared words", [Section(f"Top {tr.settings.k}", ranked or ["(none)"])]),
        Step(
            "Answer",
            [
                Section("Context as sent", [tr.context or "(empty)"]),
                Section("Answer", [result.answer or "(no answer)"]),
            ],
            call_tuples(tr.call),
        ),
    ]
