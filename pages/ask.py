"""Ask (T2RAG): one question, then step through decomposition, rounds and answer."""

import streamlit as st

from components.shell import state
from components.shell.method_page import single_method_page
from engine.methods.registry import method_on_page

state.ensure_app()

st.title("🔺 Ask with T2RAG")
st.caption(
    "Triplet-driven thinking: the question becomes triplets with placeholders, filled round by round "
    "from retrieved propositions and their chunks."
)
single_method_page(method_on_page("ask"), "ask", "ask_round")
