"""Ask (T2RAG): one question, then step through decomposition, rounds and answer."""
import streamlit as st

from components import state
from components.question_input import pick_question
from components.result_view import show_result
from components.run_controls import open_saved, save_and_export
from components.runner import run_methods
from components.safe import engine_errors, esc, html_block
from components.t2rag_view import show_answer_box

state.ensure_app()

st.title("🔺 Ask with T2RAG")
st.caption("Triplet-driven thinking: the question becomes triplets with placeholders, filled round by round "
           "from retrieved propositions and their chunks.")
ss = st.session_state
corpus = None
with engine_errors("Opening the corpus"):
    corpus = state.current_corpus()
if corpus is None:
    st.info("Pick or create a corpus first (Corpora page).")
    st.stop()

opened = open_saved(corpus, "ask_open", ("t2rag",))
if opened is not None:
    ss["ask_result"], ss["ask_round"] = opened, 0

question, q = pick_question(corpus, "ask_q")
if st.button("Ask", type="primary", disabled=not question, key="ask_go"):
    with engine_errors("T2RAG"):
        ss["ask_result"] = run_methods(["t2rag"], corpus, question, q)
        ss["ask_round"] = 0

run = ss.get("ask_result")
result = run.by_method("t2rag") if run is not None else None
if result is not None:
    st.divider()
    html_block(f"<b>Question:</b> {esc(run.question)}")
    show_answer_box(result, run.gold)
    show_result(result, corpus, "ask_round")
    save_and_export(run, corpus, "ask")
