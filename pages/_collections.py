"""The current collection: a UI cursor kept in the URL (`?set=demo`; none for the default one), read
from this one place by every page (labeler_pages._loaders.store binds the store to it), and switched in the
sidebar."""
from __future__ import annotations

import streamlit as st

from labeler.corpus import Corpus
from labeler_app import workspace as ws
from labeler_app.access import Actor

from labeler.ids import id_problem
from labeler_app import stores as db
from labeler_app.stores import DEFAULT_COLLECTION, Store
from labeler_app.text import inert
from labeler_pages._common import Keys, act, flash

PARAM = "set"
KEY = "_collection"


def current_collection(store: Store) -> str:
    """The collection the URL names (remembered for the session, and written back to the URL when a
    page switch dropped it); the default one when the URL names none, or one that does not exist."""
    wanted = st.query_params.get(PARAM)
    if wanted is not None and wanted != st.session_state.get(KEY):
        if id_problem(wanted, "collection name") or not db.collection_exists(store, wanted):
            st.warning(f"There is no collection named {inert(wanted[:40])}; showing {DEFAULT_COLLECTION!r}.")
            del st.query_params[PARAM]  # warned once: the next read this run finds no name
            wanted = DEFAULT_COLLECTION
        st.session_state[KEY] = wanted
    name = st.session_state.get(KEY, DEFAULT_COLLECTION)
    if name == DEFAULT_COLLECTION:
        if PARAM in st.query_params:
            del st.query_params[PARAM]
    elif st.query_params.get(PARAM) != name:
        st.query_params[PARAM] = name
    return name


def switch_collection(name: str) -> None:
    """Make `name` the current collection (from the next run on)."""
    st.session_state[KEY] = name
    st.session_state.pop(Keys.QUESTION, None)  # the Label page's question cursor (and its `?q=`) was the other one's
    st.query_params.pop("q", None)
    if name == DEFAULT_COLLECTION:
        st.query_params.pop(PARAM, None)
    else:
        st.query_params[PARAM] = name


def collection_switch(store: Store, current: str) -> None:
    """The sidebar's collection picker: every collection (the default one even before it exists)."""
    names = db.collection_names(store, current)
    st.session_state["collection_switch"] = current  # the cursor, not the widget's memory, says what is shown
    st.sidebar.selectbox("Collection", names, key="collection_switch",
                         help="A collection is one golden set over one corpus (the demo set is its own).",
                         on_change=lambda: switch_collection(st.session_state["collection_switch"]))


def open_demo(store: Store, me: Actor, corpus: Corpus, path: str) -> None:
    """Load the demo golden set into its own collection and switch to it (a button's callback)."""
    summary = act(ws.load_demo_golden, store, me, corpus, path)
    if summary:
        switch_collection(ws.DEMO_COLLECTION)
        flash(f"Opened the demo golden set in its own collection, {ws.DEMO_COLLECTION!r} ({summary.line}) Your "
              f"own questions stay in {store.collection!r}: switch back with **Collection** in the sidebar.",
              "success")
