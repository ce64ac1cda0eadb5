"""A form for any frozen settings dataclass, with each field's docstring as its help text."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import typing
from functools import cache, lru_cache

import streamlit as st


@cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field (the house style puts one there)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for a, b in zip(body, body[1:]):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


#: What each setting is called on screen (the code name stays in the help text, for the CLI).
LABELS = {
    "k": "Chunks retrieved (k)",
    "rounds": "Rounds at most",
    "include_chunk_text": "Show the solver the chunk text",
    "question_query": "Also search with the question itself",
    "skip_seen_chunks": "Skip chunks already shown",
    "candidate_depth": "Candidate propositions per query",
    "hops": "Expansion hops over the entity graph",
    "expansion_cap": "Most chunks the expansion adds",
    "max_entity_edges": "Most edges followed per entity and hop",
    "max_entity_reads": "Most edges read per entity and hop",
    "reranker": "Reranker model (empty = embedding cosine)",
    "tree_score": "Tree score (cosine ranker)",
    "overflow": "When a tree does not fit",
    "fill": "Seed chunks added after the trees",
    "seed_trees": "Seeds without triplets compete as one-chunk trees",
    "seeds": "First-stage retrieval",
    "candidates": "Candidates before reranking",
    "rrf_k": "Rank-fusion constant (RRF k)",
    "steps": "Reasoning steps at most",
    "prompts": "Prompts (paper = the authors' code)",
    "adopt_proposed": "The solver's new triplets drive the next round",
    "forced_context": "Answer context after a forced stop",
    "answer_prompt": "Answer prompt",
    # HippoRAG 2 (its settings keep the authors' names: the code name is in each help text)
    "linking_top_k": "Facts retrieved, kept and linked (linking top k)",
    "qa_top_k": "Passages the answer step reads (QA top k)",
    "retrieval_top_k": "Passages ranked (retrieval top k)",
    "damping": "PageRank damping",
    "passage_node_weight": "Passage seed weight",
    "synonymy_edge_topk": "Nearest phrases looked at for synonyms",
    "synonymy_edge_sim_threshold": "Synonym edge cosine threshold",
    "recognition_memory": "Recognition memory (the LLM fact filter)",
}


def human_label(name: str) -> str:
    return LABELS.get(name) or name.replace("_", " ").capitalize()


@lru_cache(maxsize=1)
def choices() -> dict[str, tuple[str, ...]]:
    """The allowed values of the settings that are enums in the engine (shown as select boxes)."""
    from engine.methods.kg2rag.rank import TREE_SCORES
    from engine.methods.kg2rag.select import FILL, OVERFLOW
    from engine.methods.kg2rag.trace import ANSWER_PROMPTS, SEED_STAGES
    from engine.methods.t2rag.trace import PROMPT_SETS

    return {
        "tree_score": tuple(TREE_SCORES),
        "overflow": tuple(OVERFLOW),
        "fill": tuple(FILL),
        "seeds": tuple(SEED_STAGES),
        "prompts": tuple(PROMPT_SETS),
        "forced_context": tuple(PROMPT_SETS),
        "answer_prompt": tuple(ANSWER_PROMPTS),
    }


def widget_value(name: str, tp, value):
    """A setting's value as its input widget holds it (a form field's session state)."""
    if tp is bool:
        return bool(value)
    if tp is int:
        return int(value)
    if tp is float:
        return float(value)
    if name in choices() and isinstance(value, str):
        return value if value in choices()[name] else choices()[name][0]
    return "" if value is None else str(value)


def show_in_form(settings, *, key: str) -> None:
    """Put `settings` into the form's fields: a keyed widget ignores a new `value=`, so a loaded
    preset (or a link's settings) is written into each field's session state before the form is
    drawn, and the form then shows, and its Apply applies, what runs."""
    if settings is None or not dataclasses.is_dataclass(settings):
        return
    hints = typing.get_type_hints(type(settings))
    for f in dataclasses.fields(settings):
        if f.init:
            st.session_state[f"{key}_{f.name}"] = widget_value(f.name, hints.get(f.name), getattr(settings, f.name))


def settings_form(name: str, current, *, key: str, disabled: bool = False) -> dict | None:
    """Draw one input per field, each showing the session's setting unless the user has changed it
    since (`show_in_form` puts new settings in); return the new values when the form is submitted."""
    if current is None or not dataclasses.is_dataclass(current):
        st.caption("This method has no settings.")
        return None
    cls = type(current)
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    from engine.methods.presets import has_presets, preset_settings

    paper = has_presets(name)  # a method with presets: each field says where it departs from the paper
    defaults = preset_settings(name, "paper") if paper else cls()
    fields = [f for f in dataclasses.fields(cls) if f.init]
    if not fields:
        st.caption("This method has no settings.")
        return None
    ss = st.session_state
    with st.form(key):
        values = {}
        for f in fields:
            value, tp = getattr(current, f.name), hints.get(f.name)
            default = getattr(defaults, f.name)
            label = human_label(f.name) + (
                f" ({'paper' if paper else 'default'}: {default!r})" if value != default else ""
            )
            help_ = f"{docs.get(f.name, '')} (setting `{f.name}`)".strip()
            wkey = f"{key}_{f.name}"
            if wkey not in ss:  # the field's value lives in session state only: no `value=` to ignore
                ss[wkey] = widget_value(f.name, tp, value)
            if tp is bool:
                values[f.name] = st.checkbox(label, help=help_, key=wkey, disabled=disabled)
            elif tp is int:
                values[f.name] = int(st.number_input(label, step=1, help=help_, key=wkey, disabled=disabled))
            elif tp is float:
                values[f.name] = float(st.number_input(label, help=help_, key=wkey, disabled=disabled, format="%.4f"))
            elif f.name in choices() and isinstance(value, str):
                values[f.name] = st.selectbox(label, list(choices()[f.name]), help=help_, key=wkey, disabled=disabled)
            else:
                values[f.name] = st.text_input(label, help=help_, key=wkey, disabled=disabled)
        if st.form_submit_button("Apply", disabled=disabled, key=f"{key}_apply"):
            return values
    return None
