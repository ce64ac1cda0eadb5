"""Ask (T2RAG): one question, then step through decomposition, rounds and answer."""
import streamlit as st

from components import state
from components.method_page import single_method_page

state.ensure_app()

st.title("🔺 Ask with T2RAG")
st.caption("Triplet-driven thinking: the question becomes triplets with placeholders, filled round by round "
           "from retrieved propositions and their chunks.")
single_method_page("t2rag", "T2RAG", "ask", "ask_round")
