"""KG2RAG: seeds, expansion hops, spanning trees, ranking, selected context, answer."""

import streamlit as st

from components.shell import state
from components.shell.method_page import single_method_page
from engine.methods.registry import method_on_page

state.ensure_app()

st.title("🕸️ KG2RAG")
st.caption(
    "Knowledge-graph-guided expansion: seed chunks, expand over the entity graph, keep one maximum "
    "spanning tree per component, rank the trees, answer from the best."
)
single_method_page(method_on_page("kg2rag"), "kg", "kg_step")
