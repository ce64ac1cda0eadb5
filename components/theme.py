"""Small layout rules for phones, injected once per page (st.html with only a style element adds
no block to the page)."""
from __future__ import annotations

import streamlit as st

#: At phone width Streamlit stacks every column; a row of counts (st.metric) then takes a whole
#: screen. Keep such rows as a compact wrapped grid, three to a line.
MOBILE_CSS = """<style>
@media (max-width: 640px) {
  div[data-testid="stHorizontalBlock"]:has([data-testid="stMetric"]) {
    flex-direction: row !important; flex-wrap: wrap !important; gap: .4rem .8rem !important; }
  div[data-testid="stHorizontalBlock"]:has([data-testid="stMetric"]) > div[data-testid="stColumn"] {
    min-width: 28% !important; width: 28% !important; flex: 1 1 28% !important; }
  div[data-testid="stMetric"] [data-testid="stMetricValue"] { font-size: 1.35rem !important; }
}
</style>"""


def apply_theme() -> None:
    st.html(MOBILE_CSS)
