"""Golden Set Labeler: the Streamlit entry point. Pages are listed here; each is thin wiring over
the app layer (`app/`)."""
from __future__ import annotations

import streamlit as st

import labeler  # noqa: F401 - sets offline mode before any model library loads
from pages._common import Keys

st.set_page_config(page_title="Golden Set Labeler", page_icon=":material/fact_check:", layout="wide")

pages = [
    st.Page("pages/label.py", title="Label", icon=":material/rule:", default=True),
    st.Page("pages/corpus.py", title="Corpus", icon=":material/library_books:"),
    st.Page("pages/golden_set.py", title="Golden set", icon=":material/checklist:"),
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/query_stats:"),
    st.Page("pages/compare.py", title="Compare runs", icon=":material/compare_arrows:"),
]
page = st.navigation(pages)

with st.sidebar:
    # Bound to the URL (?annotator=...): it survives a reload and page switches, unlike session state.
    st.text_input("Annotator", key=Keys.ANNOTATOR, bind="query-params", placeholder="your name",
                  help="Every grade you give is saved under this name.")

page.run()
