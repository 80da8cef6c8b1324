"""The Label page's Re-check queue: my grades whose document changed since I gave them, the old and
the new text side by side (words gone struck through in red, new words in green), and what to do:
confirm the grade for the new text, regrade it, or remove a grade whose document is gone."""
from __future__ import annotations

import streamlit as st

from labeler.corpus import Corpus
from labeler_app import label as lb
from labeler_app import recheck as rc
from labeler_app import stores as db
from labeler_app.access import Actor
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._cards import pair_widget
from labeler_pages._common import act, flash, guard, show_flash

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


OPEN = "recheck_open"


def _confirm_unchanged(s: Store, me: Actor, corp: Corpus) -> None:
    message = act(rc.confirm_unchanged_meaning, s, me, corp, guard(db.stale_judgments, s, me.name), slot=SLOT)
    if message:
        flash(message, "success", slot=SLOT)


def _toggle() -> None:
    st.session_state[OPEN] = not st.session_state.get(OPEN)


@st.cache_data(show_spinner=False, max_entries=16)
def _n_unchanged(url: str, revision: int, fingerprint: str, annotator: str, _s: Store, _corp: Corpus) -> int:
    # one read of the judged text per stale grade: done again only after a write or a corpus change
    return len(rc.trivially_edited(_s, _corp, annotator, db.stale_judgments(_s, annotator)))


def recheck_section(s: Store, me: Actor, corp: Corpus, read_only: bool) -> None:
    """One line when I have stale grades (nothing at all otherwise): how many, a button that opens
    their queue, and one that confirms at once those whose document changed only in whitespace,
    punctuation or case. The queue itself shows only when opened: it must not push the candidates
    off the screen."""
    stale = guard(db.stale_judgments, s, me.name)
    if not stale and not st.session_state.get(SLOT):
        st.session_state.pop(OPEN, None)
        return
    with st.container(horizontal=True, vertical_alignment="center", key="recheck-banner", gap="small"):
        st.markdown(f":orange-badge[Re-check] {len(stale)} of your grades rest on text that changed" if stale else
                    ":green-badge[Re-check] nothing left to re-check", width="content")
        if stale:
            st.button("Close the queue" if st.session_state.get(OPEN) else "Open the queue", key="recheck-toggle",
                      on_click=_toggle, type="tertiary", icon=":material/fact_check:")
        unchanged = guard(_n_unchanged, db.database_url(), guard(db.revision, s), corp.fingerprint, me.name, s, corp) \
            if stale else 0
        if unchanged and not read_only:
            st.button(f"Confirm all {unchanged} whose meaning did not change", key="recheck-confirm-unchanged",
                      on_click=_confirm_unchanged, args=(s, me, corp), type="tertiary", icon=":material/done_all:",
                      help="Confirms your grade wherever the document changed only in whitespace, punctuation "
                           "between words or letter case: the same words and numbers in the same order.")
    show_flash(SLOT)
    if stale and st.session_state.get(OPEN):
        _queue(s, me, corp, read_only, stale)


def _queue(s: Store, me: Actor, corp: Corpus, read_only: bool, stale) -> None:
    with st.container(border=True, key="recheck-queue"):
        st.caption("Each document below changed (or went) after you graded it. Confirm your grade if it still "
                   "holds for the new text, or regrade it; until then evaluations count it as stale.")
        for i, item in enumerate(guard(rc.recheck_items, s, corp, me.name, stale)):
            # Its buttons are keyed by the pair they act on, not the place: a second click sent before the
            # first one's answer had reached the browser (the confirmed item gone, the others moved up)
            # confirmed or removed the grade of the item that had moved into that place.
            pair = pair_widget("recheck", s.collection, item.query_id, item.doc_id)
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
                    buttons[0].button("Remove my grade", key=f"{pair}-remove", disabled=read_only,
                                      on_click=_remove, args=(s, me, item.query_id, item.doc_id))
                    continue
                buttons[0].button(f"Still {item.grade}: confirm", key=f"{pair}-confirm", type="primary",
                                  disabled=read_only, on_click=_confirm, args=(s, me, corp, item.query_id, item.doc_id))
                for g in range(4):
                    buttons[g + 1].button(f"{g}", key=f"{pair}-g{g}", help=lb.GRADES[g], disabled=read_only,
                                          on_click=_regrade, args=(s, me, corp, item.query_id, item.doc_id, g))
        if len(stale) > rc.RECHECK_PAGE:
            st.caption(f"{len(stale) - rc.RECHECK_PAGE} more after these.")
