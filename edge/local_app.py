"""The local server (`labeler app` runs this file): the app of streamlit_app.py as Streamlit's ASGI
`st.App`, with the route through which a grade key is saved ahead of the page's rerun
(pages/_grade_route.py). Everything else is plain `streamlit run streamlit_app.py`."""
from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit import config

from labeler_pages._grade_route import routes

app = st.App(str(Path(__file__).with_name("streamlit_app.py")), routes=routes(config.get_option("server.baseUrlPath")))
