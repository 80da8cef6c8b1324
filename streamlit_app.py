"""Golden Set Labeler: the Streamlit entry point. Pages are listed here; each is thin wiring over
the app layer (`app/`). Before any page runs, `identify` decides who is acting: the local
annotator, or in team mode (`labeler app --team`) a signed-in user, with the pages their role
may use. In team mode no traceback reaches the browser: it is logged with an id to quote."""
from __future__ import annotations

import streamlit as st

import labeler  # noqa: F401 - sets offline mode before any model library loads
from app.access import Can
from app.accounts import team_mode
from views._auth import identify
from views._common import Keys, guarded
from views._loaders import store

st.set_page_config(page_title="Golden Set Labeler", page_icon=":material/fact_check:", layout="wide")
if team_mode():  # also when started without `labeler app --team`'s flags
    st.set_option("client.showErrorDetails", "none")


actor = st.session_state[Keys.ACTOR] = guarded(identify, store())
pages = [
    st.Page("views/label.py", title="Label", icon=":material/rule:", default=True),
    st.Page("views/corpus.py", title="Corpus", icon=":material/library_books:"),
    st.Page("views/golden_set.py", title="Golden set", icon=":material/checklist:"),
    st.Page("views/evaluate.py", title="Evaluate", icon=":material/query_stats:"),
    st.Page("views/compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    st.Page("views/adjudicate.py", title="Adjudicate", icon=":material/gavel:"),
]
if actor.team and actor.can(Can.MANAGE_USERS):
    pages.append(st.Page("views/team.py", title="Team", icon=":material/group:"))
page = st.navigation(pages)
guarded(page.run)
