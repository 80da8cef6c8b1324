"""Golden set: every question with its labels; filter, edit, delete; health; downloads; upload."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import stores as db
from labeler_app import golden_set as gs
from labeler_app.access import Can
from labeler_app.text import inert
from labeler_pages._common import Keys, act, actor, flash, guard, refresh_label, show_flash, shown_for, shown_label
from labeler_pages._health import health_section, progress_section
from labeler_pages._loaders import workspace
from labeler_pages._preview import set_preview_section
from labeler_pages._upload import upload_section

EDIT_SLOT = "_flash_edit"  # messages of the edit form, shown next to it
st.title("Golden set", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)
show_flash()
me = actor()
revision = guard(db.revision, s)  # changes with every write: the caches below recompute only then


@st.cache_data(show_spinner=False, max_entries=8)
def _overview(url: str, rev: int) -> gs.GoldenOverview:
    return gs.overview(s)


@st.cache_data(show_spinner="Preparing the downloads…", max_entries=8)
def _downloads(url: str, rev: int, who):
    return gs.golden_downloads(s, who)


view = guard(gs.for_actor, guard(_overview, s.cache_key, revision), s, me)
if not gs.sees_others(s, me):
    st.info(gs.BLIND_NOTE)
health_section(view, s, path)
progress_section(guard(gs.progress_rows, s))
if view.rows and gs.sees_others(s, me):  # blind judging: the consensus it scores stays hidden
    set_preview_section(s, path)

st.subheader("Questions", anchor=False)
if not view.rows:
    st.info("No questions yet. Write some on the Label page, or upload a golden JSONL below.")
else:
    f1, f2, f3 = st.columns([3, 2, 2])
    needle = f1.text_input("Filter by text or id", key="golden_filter")
    types = f2.multiselect("Query type", view.query_types, key="golden_types")
    wanted = f3.multiselect("Status", gs.STATUS_CHOICES, key="golden_status")
    rows = gs.filter_rows(view.rows, text=needle, types=types, status_in=wanted)
    st.caption(f"{len(rows)} of {len(view.rows)} questions")
    st.dataframe(pd.DataFrame(rows, columns=gs.COLUMNS), hide_index=True, key="golden_table",
                 column_config={"question": st.column_config.TextColumn(width="large"),
                                "labels": st.column_config.TextColumn(width="medium")})

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

st.subheader("Download", anchor=False)
files = guard(_downloads, s.cache_key, revision, me) if view.rows and gs.sees_others(s, me) else {}
for col, (fmt, label) in zip(st.columns(len(gs.DOWNLOADS)), gs.DOWNLOADS):
    item = files.get(fmt, ("", "", ""))
    if isinstance(item, str):
        col.error(inert(item))
    else:
        col.download_button(label, item[0], file_name=item[1] or "golden", mime=item[2] or None, key=f"download-{fmt}",
                            icon=":material/download:", on_click="ignore", disabled=not view.rows)

if me.can(Can.IMPORT_GOLDEN):
    upload_section(s, me, corp, path)
