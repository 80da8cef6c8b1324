"""The Label page's work-queue controls: "Next for me" beside the question picker, and the claim bar
("Yours until …", Give it back) above the cards. Wiring over labeler_app.label's queue use cases."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from labeler.corpus import Corpus
from labeler_app import label as lb
from labeler_app.access import Actor
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import Keys, act, flash, guard


def _next_for_me(s: Store, me: Actor, corp: Corpus | None, given_back: str | None = None) -> None:
    doc_ids = [d.doc_id for d in corp.documents] if corp else ()  # likely complete questions come last
    qid = act(lb.next_for_me, s, me, given_back, doc_ids)  # act: True when no question wants a judge, False after an error
    gave = f"Gave {inert(given_back)} back to the queue" if given_back else ""
    if isinstance(qid, str):
        st.session_state.update({Keys.QUESTION: qid, Keys.FOCUS: 0})
        if gave:
            flash(f"{gave}; here is {inert(qid)}.", "success")
    elif qid:
        flash(f"{gave}. No other question needs a judge right now." if gave else
              "No question needs another judge right now: every one has its overlap or is yours already.", "info")


def next_for_me_button(s: Store, me: Actor, corp: Corpus | None) -> Callable[[Any], None]:
    """The picker's extra column: the "Next for me" button."""
    def button(column: Any) -> None:
        column.button("Next for me", key="next-for-me", on_click=_next_for_me, args=(s, me, corp),
                      icon=":material/assignment_ind:", width="stretch",
                      help="Next question for me: claims (for 30 minutes, renewed while you grade) a question that "
                           "still needs judges and that you have not judged, the one with most judges first.")
    return button


def claim_bar(s: Store, me: Actor, corp: Corpus | None, qid: str) -> None:
    """"Yours until …" and Give it back, while `me` holds a claim on the question."""
    if not (held := guard(lb.claim_note, s, me, qid)):
        return
    with st.container(horizontal=True, vertical_alignment="center", key="claim-bar"):
        st.caption(held)
        st.button("Give it back", key="give-back", on_click=_next_for_me, args=(s, me, corp, qid), icon=":material/undo:",
                  help="Release your claim and take the next question that needs a judge (you are offered this one "
                       "again only when nothing else needs you).")
