"""A registered method's own page (T2RAG at /ask, KG2RAG at /kg2rag, a plug-in's at its `page`):
app.py registers this file once per method page and names the one being shown."""

import streamlit as st

from components.screens.method_page import method_page
from components.shell import state

state.ensure_app()
method_page(st.session_state["nav_page"])
