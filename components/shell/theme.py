"""Small layout rules for phones, injected once per page (st.html with only a style element adds
no block to the page)."""

from __future__ import annotations

import streamlit as st

#: At phone width Streamlit stacks every column; a row of counts (st.metric) then takes a whole
#: screen. Keep such a row (a container keyed "counts") a compact wrapped grid, three to a line.
MOBILE_CSS = """<style>
@media (max-width: 640px) {
  .st-key-counts div[data-testid="stHorizontalBlock"] {
    flex-direction: row !important; flex-wrap: wrap !important; gap: .4rem .8rem !important; }
  .st-key-counts div[data-testid="stHorizontalBlock"] > div[data-testid="stColumn"] {
    min-width: 28% !important; width: 28% !important; flex: 1 1 28% !important; }
  .st-key-counts [data-testid="stMetricValue"] { font-size: 1.35rem !important; }
}
</style>"""


def apply_theme() -> None:
    st.html(MOBILE_CSS)
