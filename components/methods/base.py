"""Drawing any method's result in the app through its view (components/contract.py): the whole
result with its stepper (`show`), one step (`show_step`, Compare moves several columns with one
control), and the generic drawing of a plain-text step. A view module's own `show` / `show_step`
hooks are used when it has them."""

from __future__ import annotations

from components.contract import View, traced, view_for
from components.steps import Section, Step


def show_step(
    result, pos: int, corpus=None, gold: list[str] | None = None, shared: frozenset[str] = frozenset()
) -> None:
    """Step `pos` of `result`: its view's own `show_step`, else the text step drawn."""
    view = view_for(result)
    own = view._own("show_step")
    if own and traced(result):
        own(result, pos, corpus, gold, shared)
        return
    from components.chunk_names import chunk_names

    steps = view.steps(result, chunk_names(corpus, view.chunk_ids(result)))
    step = steps[max(0, min(pos, len(steps) - 1))]
    draw_step(step, result, gold, last=step is steps[-1])


def show(result, corpus=None, state_key: str = "ask_step", gold: list[str] | None = None) -> None:
    """The whole result with a stepper under `state_key`: its view's own `show`, else one text step
    at a time."""
    view: View = view_for(result)
    own = view._own("show")
    if own:
        own(result, corpus, state_key, gold)
        return
    from components.widgets.stepper import stepper

    show_step(result, stepper(state_key, view.step_labels(result)), corpus, gold)


def draw_step(step: Step, result, gold: list[str] | None = None, *, last: bool = False) -> None:
    """One plain-text step drawn in the app: its graph, its sections, its LLM calls; the last step
    also draws the answer box (the generic `show_step`)."""

    if step.graph:
        from components.graphs.graph import show_graph
        from components.graphs.static import from_payload

        nodes, edges, legend = from_payload(step.graph)
        show_graph(nodes, edges, height=360, directed=step.graph.get("directed", False), legend=legend)
    draw_sections_and_calls(step, "vcall")
    if last:
        from components.widgets.answer_box import show_answer

        show_answer(result, gold)


def draw_sections_and_calls(step: Step, key: str) -> None:
    """A step's text sections (coloured lines where tagged) and its LLM calls, each call in its own
    expander (`key` keeps the expanders of two places apart); the app's step view and presentation
    mode both draw a step's body with it."""
    import streamlit as st

    from components.shell.safe import esc, html_block
    from components.shell.state import content_key, sticky_expander

    for sec in step.sections:
        st.markdown(f"**{esc(sec.heading)}**")
        if sec.tags:
            html_block(tagged_lines_html(sec))
        else:
            st.code("\n".join(sec.lines), language=None, wrap_lines=True)
    for summary, prompt, reply in step.calls:
        with sticky_expander(f"LLM call: {summary}", content_key(key, summary, prompt, reply)):
            st.code(prompt or "(no prompt)", language=None, wrap_lines=True)
            st.code(reply or "(empty)", language=None, wrap_lines=True)


def tagged_lines_html(sec: Section) -> str:
    """A section's lines, each starting with a `[tag] ` of `sec.tags` drawn in that tag's colour."""
    from components.shell.safe import esc

    out = []
    for line in sec.lines:
        tag = line[1 : line.index("]")] if line.startswith("[") and "]" in line else ""
        color = sec.tags.get(tag, "#333")
        out.append(f'<div style="color:{esc(color)};font-family:monospace">{esc(line)}</div>')
    return "".join(out)
