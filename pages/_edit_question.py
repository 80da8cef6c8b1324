"""The Golden set page's "Edit or delete a question" box: pick one of the listed questions, edit its
text, type and notes in a form drawn for that question, delete it after a confirmation, read its
grade history."""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from labeler_app import golden_set as gs
from labeler_app.access import Actor
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import Keys, act, flash, guard, refresh_label, show_flash, shown_for, shown_label

EDIT_SLOT = "_flash_edit"  # messages of the edit form, shown next to it


def edit_section(s: Store, me: Actor, view: gs.GoldenOverview, rows: Sequence[dict]) -> None:
    """The box, over the questions the table shows (all of them when the filter leaves none)."""
    with st.container(border=True):
        st.markdown("**Edit or delete a question**")
        shown = [r["query_id"] for r in rows] or list(view.choices)
        if st.session_state.get("golden_edit_id") in shown:
            refresh_label("golden_edit_id", lambda qid: view.choices.get(qid, ""))
        chosen = st.selectbox("Question", shown, key="golden_edit_id", format_func=view.choices.get)
        shown_label("golden_edit_id", chosen, view.choices.get(chosen, ""))
        q = view.edits[chosen]

        def _save(qid: str) -> None:  # qid: the question the submitted form was drawn for
            if (picked := st.session_state.get("golden_edit_id")) != qid:  # saved while the page was catching up
                return flash(f"Not saved: that form was {inert(qid)}'s, but {inert(picked)} is picked now. "
                             "Check the text and save again.", "warning", slot=EDIT_SLOT)
            said = act(gs.edit_question, s, me, qid, st.session_state[f"edit_text_{qid}"],
                       st.session_state[f"edit_type_{qid}"], st.session_state[f"edit_notes_{qid}"], slot=EDIT_SLOT)
            if said and said.startswith("Nothing to save") and shown_for("golden_edit_id") < 3:
                said += " If you typed just after picking it, its form was still loading and replaced your text: type it again."
            if said:
                flash(inert(said), "success" if said.startswith("Saved") else "info", slot=EDIT_SLOT)

        def _delete(qid: str) -> None:
            act(gs.delete_question, s, me, qid, success=f"Deleted {inert(qid)} and its judgments.")
            st.session_state.pop(Keys.CONFIRM_DELETE, None)

        show_flash(EDIT_SLOT)
        with st.form(f"edit-{chosen}", border=False):
            st.caption(f"Editing **{inert(chosen)}**")
            st.text_area("Question text", q.text, key=f"edit_text_{chosen}", height=68)
            e1, e2 = st.columns(2)
            e1.text_input("Query type", q.query_type, key=f"edit_type_{chosen}")
            e2.text_input("Notes", q.notes, key=f"edit_notes_{chosen}")
            st.form_submit_button("Save changes", on_click=_save, args=(chosen,))
        if st.session_state.get(Keys.CONFIRM_DELETE) == chosen:
            st.warning(f"Delete **{inert(chosen)}** and all {q.n_judgments} of its judgments? This cannot be undone.")
            d1, d2 = st.columns([1, 6])
            d1.button("Yes, delete", key="confirm-delete", type="primary", on_click=_delete, args=(chosen,))
            d2.button("Cancel", key="cancel-delete", on_click=lambda: st.session_state.pop(Keys.CONFIRM_DELETE, None))
        else:
            st.button("Delete…", key="delete-question", icon=":material/delete:",
                      on_click=lambda qid=chosen: st.session_state.update({Keys.CONFIRM_DELETE: qid}))
        with st.expander("Grade history of this question (replaced grades included)"):
            st.dataframe(pd.DataFrame(guard(gs.grade_history_rows, s, chosen, me)), hide_index=True, key="grade_history")
