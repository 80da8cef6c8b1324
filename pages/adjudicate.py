"""Adjudicate: the disputed documents with every grade and who gave it; an adjudicator sets the final
grade with a note; agreement before and after adjudication with 95% bootstrap intervals."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import stores as db
from labeler_app import adjudicate as adj
from labeler_app.access import Can
from labeler_app.text import inert
from labeler_pages._common import act, actor, flash, guard, show_flash
from labeler_pages._loaders import store

FORM_SLOT, GRADE, NOTE = "_flash_adjudicate", "adjudicate_grade", "adjudicate_note"
st.title("Adjudicate", anchor=False)
s = store()
show_flash()
me = actor()
guard(adj.require_reader, s, me)  # before any cached read: the cache is shared by every session
revision = guard(db.revision, s)


@st.cache_data(show_spinner=False, max_entries=8)
def _disputes(url: str, rev: int, _me) -> list[adj.Dispute]:  # _me: not hashed, one cache for all readers
    return adj.disputes(s, _me)


@st.cache_data(show_spinner=False, max_entries=8)
def _imported_note(url: str, rev: int) -> str:
    return adj.imported_note(db.ratings(s), listed=" (listed on the Golden set page; not adjudicated here)")


@st.cache_data(show_spinner="Resampling questions…", max_entries=8)
def _agreement(url: str, rev: int, _me) -> list[dict]:
    return adj.agreement_view(s, _me).rows()


items = guard(_disputes, s.cache_key, revision, me)
open_items = [d for d in items if d.final is None]
st.caption("A document is disputed when its grades fall on both sides of the relevance line (some ≥ 1, some 0) or "
           "spread by 2 or more. Its final grade replaces the consensus in exports and evaluation.")
imported = guard(_imported_note, s.cache_key, revision)
if imported:
    st.caption(imported)
if not items:
    st.info("No disagreements between annotators to adjudicate: every document judged by several people got "
            "close grades.")
else:
    st.subheader(f"Queue ({len(open_items)} open of {len(items)})", anchor=False)
    only_open = st.toggle("Open only", value=True, key="adjudicate_open_only")
    shown = open_items if only_open else items
    st.dataframe(pd.DataFrame(adj.dispute_rows(shown)), hide_index=True, key="adjudicate_table")
    if me.can(Can.ADJUDICATE) and shown:
        keys = [f"{d.query_id} · {d.doc_id}" for d in shown]

        def _set(drawn: list[adj.Dispute], drawn_keys: list[str]) -> None:  # the queue the form was drawn with
            if (pick := st.session_state["adjudicate_pick"]) not in drawn_keys:  # sent from an older page
                return flash(f"Not saved: {inert(pick)} is not in the queue shown now. Pick it again.", "warning",
                             slot=FORM_SLOT)
            d, grade = drawn[drawn_keys.index(pick)], st.session_state[GRADE]
            if act(adj.set_final_grade, s, me, d.query_id, d.doc_id, grade, st.session_state[NOTE], slot=FORM_SLOT):
                flash(f"Final grade {grade} set for {inert(d.doc_id)} on {inert(d.query_id)}.", "success")
                st.session_state.update({GRADE: None, NOTE: ""})  # a refused form keeps what was typed

        with st.form("adjudicate-form", border=True):
            st.selectbox("Disputed document", keys, key="adjudicate_pick")
            st.radio("Final grade", adj.GRADES, index=None, horizontal=True, key=GRADE)
            st.text_input("Note (why this grade)", key=NOTE)
            st.form_submit_button("Set the final grade", on_click=_set, args=(shown, keys))
        show_flash(FORM_SLOT)
    elif not me.can(Can.ADJUDICATE):
        st.info("Only an adjudicator (an admin) sets final grades; you can read the queue.")

st.subheader("Agreement", anchor=False)
st.caption("Before: the annotators' own grades. After: each adjudicated document counts as agreed at its final "
           "grade. In brackets, the 95% bootstrap interval over resampled questions (500 resamples, fixed seed)."
           + (" Imported grades are not counted." if imported else ""))
st.dataframe(pd.DataFrame(guard(_agreement, s.cache_key, revision, me)), hide_index=True)
