"""KG2RAG: seeds, expansion hops, spanning trees, ranking, selected context, answer."""
import streamlit as st

from components import state
from components.method_page import single_method_page

state.ensure_app()

st.title("🕸️ KG2RAG")
st.caption("Knowledge-graph-guided expansion: seed chunks, expand over the entity graph, keep one maximum "
           "spanning tree per component, rank the trees, answer from the best.")
single_method_page("kg2rag", "KG2RAG", "kg", "kg_step")
