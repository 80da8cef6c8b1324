"""The Golden set page's grade sources: each consensus-only file's grades, listed apart with their
counts and whether they count in the consensus; admins (in team mode) switch that per source."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.errors import LabelerError
from labeler_app import grade_sources as src
from labeler_app.access import Actor, Can
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import flash, guard, said, show_flash

SLOT = "_flash_sources"


def sources_section(s: Store, me: Actor) -> None:
    """The "Grade sources" section (nothing when no consensus-only file was imported)."""
    rows = guard(src.source_rows, s)
    if not rows:
        return
    st.subheader("Grade sources", anchor=False)
    st.caption("Grades imported from consensus-only files, each file its own source. A counted source's grade "
               "counts only for a document no person graded, never over a person's grade; a source kept apart "
               "counts nowhere (not in the consensus, the status, the export's relevance, nor any metric).")
    show_flash(SLOT)
    st.dataframe(pd.DataFrame(rows, columns=src.SOURCE_COLUMNS), hide_index=True, key="grade_sources")
    if not me.can(Can.COUNT_FILE_GRADES):
        return
    c1, c2 = st.columns([3, 2])
    name = c1.selectbox("Source", [r["source"] for r in rows], key="source_pick")
    counted = next(r["counted"] for r in rows if r["source"] == name) == src.counted_word(True)
    label = "Keep its grades apart" if counted else "Count its grades in the consensus"
    if c2.button(label, key="source_switch"):
        try:
            line = src.set_source_counted(s, me, name, not counted)
        except LabelerError as exc:
            st.error(said(exc))
        else:
            flash(inert(line), "success", slot=SLOT)
            st.rerun()
