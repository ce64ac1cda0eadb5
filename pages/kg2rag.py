"""KG2RAG: seeds, expansion hops, spanning trees, ranking, selected context, answer."""
import streamlit as st

from components import state
from components.question_input import pick_question
from components.result_view import show_result
from components.run_controls import open_saved, save_and_export
from components.runner import run_methods
from components.safe import engine_errors, esc, html_block
from components.t2rag_view import show_answer_box

state.ensure_app()

st.title("🕸️ KG2RAG")
st.caption("Knowledge-graph-guided expansion: seed chunks, expand over the entity graph, keep one maximum "
           "spanning tree per component, rank the trees, answer from the best.")
ss = st.session_state
corpus = None
with engine_errors("Opening the corpus"):
    corpus = state.current_corpus()
if corpus is None:
    st.info("Pick or create a corpus first (Corpora page).")
    st.stop()

opened = open_saved(corpus, "kg_open", ("kg2rag",))
if opened is not None:
    ss["kg_result"], ss["kg_step"] = opened, 0

question, q = pick_question(corpus, "kg_q")
if st.button("Ask", type="primary", disabled=not question, key="kg_go"):
    with engine_errors("KG2RAG"):
        ss["kg_result"] = run_methods(["kg2rag"], corpus, question, q)
        ss["kg_step"] = 0

run = ss.get("kg_result")
result = run.by_method("kg2rag") if run is not None else None
if result is not None:
    st.divider()
    html_block(f"<b>Question:</b> {esc(run.question)}")
    show_answer_box(result, run.gold)
    show_result(result, corpus, "kg_step")
    save_and_export(run, corpus, "kg")
