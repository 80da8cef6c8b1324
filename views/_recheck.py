"""The Label page's Re-check queue: my grades whose document changed since I gave them, the old and
the new text side by side (words gone struck through in red, new words in green), and what to do:
confirm the grade for the new text, regrade it, or remove a grade whose document is gone."""
from __future__ import annotations

import streamlit as st

from app import label as lb
from app import recheck as rc
from app.access import Actor
from labeler.corpus import Corpus
from labeler.text import inert
from storage import Store
from views._common import act, flash, guard, show_flash

SLOT = "recheck_flash"


def _confirm(s: Store, me: Actor, corp: Corpus, query_id: str, doc_id: str) -> None:
    message = act(rc.confirm, s, me, corp, query_id, doc_id, slot=SLOT)
    if message:
        flash(inert(message), "success", slot=SLOT)


def _regrade(s: Store, me: Actor, corp: Corpus, query_id: str, doc_id: str, grade: int) -> None:
    if act(lb.grade, s, me, query_id, doc_id, grade, corp, slot=SLOT):
        flash(f"Regraded {inert(doc_id)} on {inert(query_id)}: {grade} ({lb.GRADES[grade]}) for its current text.",
              "success", slot=SLOT)


def _remove(s: Store, me: Actor, query_id: str, doc_id: str) -> None:
    message = act(rc.remove, s, me, query_id, doc_id, slot=SLOT)
    if message:
        flash(inert(message), "success", slot=SLOT)


def recheck_section(s: Store, me: Actor, corp: Corpus, read_only: bool) -> None:
    """The queue, when I have stale grades (nothing at all otherwise)."""
    stale = guard(s.stale_judgments, annotator=me.name)
    if not stale and not st.session_state.get(SLOT):
        return
    with st.expander(f"Re-check: {len(stale)} of your grades rest on text that changed", expanded=bool(stale)):
        show_flash(SLOT)
        if not stale:
            st.caption("Nothing left to re-check.")
            return
        st.caption("Each document below changed (or went) after you graded it. Confirm your grade if it still "
                   "holds for the new text, or regrade it; until then evaluations count it as stale.")
        for i, item in enumerate(guard(rc.recheck_items, s, corp, me.name, stale)):
            with st.container(border=True, key=f"recheck-{i}"):
                st.markdown(f"**{item.heading}**  \n{inert(item.question)}")
                old, new = st.columns(2)
                old.caption("When you judged it")
                old.markdown(item.old_markup if item.old_known else "_(the text you judged was not kept: it was "
                             "graded before corpus versions were recorded)_")
                new.caption("Now")
                new.markdown(item.new_markup or "_(no longer in the corpus)_")
                buttons = st.columns([2, 1, 1, 1, 1, 3])
                if item.reason == "deleted":
                    buttons[0].button("Remove my grade", key=f"recheck-{i}-remove", disabled=read_only,
                                      on_click=_remove, args=(s, me, item.query_id, item.doc_id))
                    continue
                buttons[0].button(f"Still {item.grade}: confirm", key=f"recheck-{i}-confirm", type="primary",
                                  disabled=read_only, on_click=_confirm, args=(s, me, corp, item.query_id, item.doc_id))
                for g in range(4):
                    buttons[g + 1].button(f"{g}", key=f"recheck-{i}-g{g}", help=lb.GRADES[g], disabled=read_only,
                                          on_click=_regrade, args=(s, me, corp, item.query_id, item.doc_id, g))
        if len(stale) > rc.RECHECK_PAGE:
            st.caption(f"{len(stale) - rc.RECHECK_PAGE} more after these.")
