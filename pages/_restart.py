"""After a server restart (a deploy, a crash, a replica failover) a click is saved or visibly refused,
never shown as saved when it was not.

An open tab reconnects to the new process on its own, but that process holds none of the page's
session: no fragment, no widget callback, no session state. Three things close the gaps:

1. `rerun_on_reconnect` keeps a fragment with `run_every` on every page. Streamlit's frontend asks for
   a whole-page run when it reconnects only if the last run was a fragment's or the page has an
   auto-rerun fragment; otherwise a tab idle since it loaded kept showing a page the new process
   never drew, and its grade clicks (fragment reruns) went nowhere.
2. `labeler_edge._serve.keep_clicks_in_unknown_fragments` patches Streamlit at start-up: a click in a fragment the session
   does not hold (the page was drawn by an earlier process, or a click came before the reconnect's
   run reached the fragment) reruns the whole page with the click's widget values, where Streamlit
   drops it ("The fragment with id ... does not exist anymore") and the control stays selected.
3. `refuse_unsaved` runs after the grade controls are drawn: in a session's first runs no callback
   can fire (the widgets are not registered yet), so a control may show a grade the page sent but the
   server never wrote (a click in the restart's window, or one the old process died with). Each is
   named as not saved and the page reruns, so every control shows what the database holds.
"""
from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from labeler_app.label import GRADES, CandidateView
from labeler_app.text import inert
from labeler_pages._common import flash

RECONNECT_RERUN_S = 6 * 3600  # the fragment's own reruns: four a day of an empty fragment
REFUSED = "_refused_unsaved"  # the run after a refusal: never a second rerun for the same controls
TOASTS = "_unsaved_toasts"  # the same notes as toasts: seen wherever the page is scrolled to


@st.fragment(run_every=RECONNECT_RERUN_S)
def rerun_on_reconnect() -> None:
    """Draws nothing: its `run_every` makes the frontend run the whole page again after a reconnect."""


def unsaved_note(card: str, doc_id: str, shown: int | None, saved: int | None) -> str:
    """What the page says about a grade click on `card` ("card 3") the server never wrote."""
    click = f"clearing grade {saved}" if shown is None else f"{shown} · {GRADES[shown]}"
    now = "it has no grade from you" if saved is None else f"your saved grade is {saved} · {GRADES[saved]}"
    return (f"Not saved: {click} on {inert(doc_id)} ({card}). The server restarted before it could write "
            f"that click; {now}. Grade it again.")


def refuse_unsaved(cards: Iterable[tuple[str, str, CandidateView]]) -> None:
    """After the grade controls are drawn: name each `(card, widget, view)` whose control shows a grade
    that is not the saved one, then rerun the page so the control shows the saved grade (the card's
    control takes its value from the database before it is drawn, once Streamlit knows the control)."""
    for note in st.session_state.pop(TOASTS, []):
        st.toast(note, icon=":material/error:", duration="long")
    stray = [(card, view, shown) for card, widget, view in cards
             if (shown := st.session_state.get(widget)) != view.grade]
    if st.session_state.pop(REFUSED, False) or not stray:
        return
    notes = [unsaved_note(card, view.doc_id, shown, view.grade) for card, view, shown in stray]
    for note in notes:
        flash(note, "warning")  # at the top of the page, until its next whole-page run
    st.session_state.update({REFUSED: True, TOASTS: notes})
    st.rerun(scope="app")
