"""The Golden set page's upload box: validate a golden JSONL and import it whole, or list every bad line."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app import golden_set as gs
from app.access import Actor
from labeler.corpus import Corpus
from labeler.errors import GoldenFormatError, LabelerError
from labeler.text import inert
from storage import Store
from views._common import flash, said, show_flash

SLOT = "_flash_upload"  # the import's outcome, shown by the upload box


def upload_section(s: Store, me: Actor, corp: Corpus, path: str) -> None:
    """The "Upload a golden JSONL" section (admins only: the app layer refuses anyone else)."""
    st.subheader("Upload a golden JSONL", anchor=False)
    show_flash(SLOT)
    uploaded = st.file_uploader("Golden JSONL file", type=["jsonl", "json", "ndjson"], key="golden_upload")
    u1, u2 = st.columns(2)
    keep_scale = u1.checkbox("Keep the file's own grade scale", key="keep_scale",
                             help="For collections graded on another scale (e.g. Cranfield's -1 and 1-4).")
    check_ids = u2.checkbox("Refuse documents missing from the corpus", value=True, key="check_ids")
    if uploaded is not None and st.button("Import", key="import-golden", type="primary"):
        try:
            summary = gs.import_golden_file(s, me, uploaded, corp, path, keep_scale=keep_scale,
                                            check_doc_ids=check_ids)
        except GoldenFormatError as exc:
            st.error(inert(f"{uploaded.name}: {len(exc.problems)} bad line(s); nothing was imported."
                           + (f" Hint: {gs.upload_hint(exc.hint)}" if exc.hint else "")))
            st.dataframe(pd.DataFrame([{"line": p.line, "problem": p.reason} for p in exc.problems]),
                         hide_index=True, key="upload_problems")
        except LabelerError as exc:  # e.g. a role that may not import
            st.error(said(exc))
        else:  # rerun at once, so the health figures and the table above show the import
            flash(f"Imported {summary.n_questions} questions ({summary.n_new} new, {summary.n_updated} updated, "
                  f"{summary.n_judgments} judgments, {summary.n_unanswerable} unanswerable).", "success", slot=SLOT)
            st.rerun()
