"""Golden Set Labeler: the Streamlit entry point. Pages are listed here; each is thin wiring over
the app layer (`app/`). Before any page runs, `identify` decides who is acting: the local
annotator, or in team mode (`labeler app --team`) a signed-in user, with the pages their role
may use. In team mode no traceback reaches the browser: it is logged with an id to quote. After a
server restart an open tab runs the whole page anew and no click is lost unseen (pages/_restart.py)."""
from __future__ import annotations

import streamlit as st

import labeler  # noqa: F401 - sets offline mode before any model library loads
from labeler_app.access import Can
from labeler_app.accounts import team_mode
from labeler_edge._serve import keep_clicks_in_unknown_fragments
from labeler_pages._auth import identify
from labeler_pages._collections import collection_switch
from labeler_pages._common import Keys, guarded
from labeler_pages._loaders import store
from labeler_pages._pages import PAGES
from labeler_pages._restart import rerun_on_reconnect

keep_clicks_in_unknown_fragments()  # started by plain `streamlit run`: from now on (pages/_serve.py)

st.set_page_config(page_title="Golden Set Labeler", page_icon=":material/fact_check:", layout="wide")
if team_mode():  # also when started without `labeler app --team`'s flags
    st.set_option("client.showErrorDetails", "none")
rerun_on_reconnect()  # on every page, signed in or not: a reconnected tab runs the page anew


db = store()  # bound to the current collection (`?set=`), which every page reads from labeler_pages._collections
actor = st.session_state[Keys.ACTOR] = guarded(identify, db)
guarded(collection_switch, db, db.collection)
pages = [st.Page(spec.script, title=spec.title, icon=spec.icon, default=i == 0) for i, spec in enumerate(PAGES)
         if not spec.admin_only or (actor.team and actor.can(Can.MANAGE_USERS))]
page = st.navigation(pages)
guarded(page.run)
