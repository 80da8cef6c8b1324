"""Golden set: every question with its labels; filter, edit, delete; health; downloads; upload."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import stores as db
from labeler_app import golden_set as gs
from labeler_app.access import Can
from labeler_app.text import inert
from labeler_pages._common import actor, guard, show_flash
from labeler_pages._edit_question import edit_section
from labeler_pages._health import health_section, progress_section
from labeler_pages._loaders import workspace
from labeler_pages._preview import set_preview_section
from labeler_pages._sources import sources_section
from labeler_pages._upload import upload_section

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

    edit_section(s, me, view, rows)

if gs.sees_others(s, me):  # blind judging: a source's counts say what the consensus rests on
    sources_section(s, me)

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
