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
from views._collections import collection_switch
from views._common import Keys, guarded
from views._loaders import store
from views._pages import PAGES

st.set_page_config(page_title="Golden Set Labeler", page_icon=":material/fact_check:", layout="wide")
if team_mode():  # also when started without `labeler app --team`'s flags
    st.set_option("client.showErrorDetails", "none")


db = store()  # bound to the current collection (`?set=`), which every page reads from views._collections
actor = st.session_state[Keys.ACTOR] = guarded(identify, db)
guarded(collection_switch, db, db.collection)
pages = [st.Page(spec.script, title=spec.title, icon=spec.icon, default=i == 0) for i, spec in enumerate(PAGES)
         if not spec.admin_only or (actor.team and actor.can(Can.MANAGE_USERS))]
page = st.navigation(pages)
guarded(page.run)
