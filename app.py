"""Triplet Lens: `streamlit run app.py`. Sets up state and navigation; each page lives in pages/."""

from __future__ import annotations

import streamlit as st

from components.screens.method_page import method_page_entries
from components.shell import link
from components.shell.sidebar import sidebar
from components.shell.state import init_state, show_flash
from components.shell.theme import apply_theme
from components.shell.warmup import start_warmup

st.set_page_config(page_title="Triplet Lens", page_icon="🔺", layout="wide")
init_state()
apply_theme()
# the first page view of a server process loads the model and this corpus's indexes in the background
start_warmup(st.session_state.get("corpus"))

PAGES = [
    st.Page("pages/corpora.py", title="Corpora", icon="📚", url_path="corpora", default=True),
    *method_page_entries(),  # each registered method with a `page`: pages/method.py at its URL path
    st.Page("pages/compare.py", title="Compare", icon="⚖️", url_path="compare"),
    st.Page("pages/evaluate.py", title="Evaluate", icon="📊", url_path="evaluate"),
    st.Page("pages/settings.py", title="Settings", icon="⚙️", url_path="settings"),
]
PRESENT = st.Page("pages/present.py", title="Presentation", icon="🎬", url_path="present")

link.restore()  # once per session: a link's question, methods, settings, step, presentation mode


def run_page(nav) -> None:
    try:
        nav.run()
    except BaseException as exc:  # also after st.stop(); not on a rerun or a page switch: the next
        if type(exc).__name__ != "RerunException":  # run names its own view (a switch's parameters stay)
            link.write_url(nav.url_path)
        raise
    link.write_url(nav.url_path)  # the address bar names what is on screen: reload and links keep it


if st.session_state["present"]:
    # presentation mode: one page, no navigation, no sidebar controls
    run_page(st.navigation([PRESENT], position="hidden"))
else:
    nav = st.navigation(PAGES)
    back = st.session_state.pop("present_return", None)
    if back and back != nav.url_path:  # leaving presentation mode: back where the user was
        st.switch_page(next((p for p in PAGES if p.url_path == back), PAGES[0]))
    st.session_state["present_from"] = nav.url_path
    st.session_state["nav_page"] = nav.url_path  # which method page pages/method.py draws
    st.session_state["cmp_verdict_slot"] = None  # a place on the page lives for one run only
    link.arm_autorun(nav.url_path)  # a linked question runs once, on the page the link names
    link.seed_picker(nav.url_path)  # the page's question box shows the session's question
    sidebar()
    show_flash()
    run_page(nav)
