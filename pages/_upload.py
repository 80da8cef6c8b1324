"""The Golden set page's upload box: validate a golden JSONL, preview what importing it would do (new,
identical, conflicting questions), and import it whole, conflicts only as the user chose; or list every bad line."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.corpus import Corpus
from labeler.errors import GoldenFormatError, LabelerError
from labeler_app import golden_set as gs
from labeler_app.access import Actor, Can
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_app.transfer import COUNT_FILE_GRADES, file_grades_line
from labeler_pages._common import flash, said, show_flash

SLOT = "_flash_upload"  # the import's outcome, shown by the upload box
ROUND = "_upload_round"  # how many files this session imported: part of the upload box's key


def upload_section(s: Store, me: Actor, corp: Corpus, path: str) -> None:
    """The "Upload a golden JSONL" section (admins only: the app layer refuses anyone else)."""
    st.subheader("Upload a golden JSONL", anchor=False)
    show_flash(SLOT)
    # A new key once a file is imported: the box empties, so a second click cannot import it again.
    n = st.session_state.setdefault(ROUND, 0)
    uploaded = st.file_uploader("Golden JSONL file", type=["jsonl", "json", "ndjson"], key=f"golden_upload_{n}")
    u1, u2 = st.columns(2)
    keep_scale = u1.checkbox("Keep the file's own grade scale", key="keep_scale",
                             help="For collections graded on another scale (e.g. Cranfield's -1 and 1-4).")
    check_ids = u2.checkbox("Refuse documents missing from the corpus", value=True, key="check_ids")
    if uploaded is None:
        return
    try:
        plan = gs.preview_golden_file(s, me, uploaded, corp, keep_scale=keep_scale, check_doc_ids=check_ids)
    except GoldenFormatError as exc:
        st.error(inert(f"{uploaded.name}: {len(exc.problems)} bad line(s); nothing can be imported."
                       + (f" Hint: {gs.upload_hint(exc.hint)}" if exc.hint else "")))
        st.dataframe(pd.DataFrame([{"line": p.line, "problem": p.reason} for p in exc.problems]),
                     hide_index=True, key="upload_problems")
        return
    except LabelerError as exc:  # e.g. a role that may not import
        st.error(said(exc))
        return
    st.info(inert(f"{uploaded.name}: {plan.line}"), icon=":material/preview:")
    count = COUNT_FILE_GRADES
    if plan.file_grades:
        count = st.checkbox("Count this file's grades in the consensus (only where no person graded a document)",
                            value=COUNT_FILE_GRADES, key=f"upload_count_{n}",
                            help="Untick to keep them apart: shown as this file's, counted nowhere until you count "
                                 "them under Grade sources.")
        st.caption(inert(file_grades_line(plan, count)))
    choice = None
    if plan.conflicts:
        st.dataframe(pd.DataFrame(gs.conflict_rows(plan)), hide_index=True, key="upload_conflicts")
        options = [k for k in gs.CONFLICT_CHOICES if k != "replace" or me.can(Can.EDIT_ANY_QUESTION)]
        choice = st.radio("The conflicting questions", options, index=None, key=f"upload_on_conflict_{n}",
                          format_func=gs.CONFLICT_CHOICES.get)
    waiting = bool(plan.conflicts) and choice is None
    if st.button("Import", key="import-golden", type="primary", disabled=waiting,
                 help="Choose what to do with the conflicting questions first." if waiting else None):
        try:
            summary = gs.import_golden_file(s, me, uploaded, corp, path, keep_scale=keep_scale,
                                            check_doc_ids=check_ids, on_conflict=choice, count_file_grades=count)
        except LabelerError as exc:
            st.error(said(exc))
        else:  # rerun at once, so the health figures and the table above show the import
            flash(inert(summary.line), "success", slot=SLOT)
            st.session_state[ROUND] = n + 1
            st.rerun()
