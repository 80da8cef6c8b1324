"""Corpus: what is open (documents, chunks, model, index), open another one, browse documents."""
from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from labeler_app import stores as db
from labeler_app import corpus as cp
from labeler_app import recheck as rc
from labeler_app import workspace as ws
from labeler_app.access import Can
from labeler_app.text import inert, inert_code
from labeler_pages._collections import open_demo
from labeler_pages._common import actor, guard, show_flash
from labeler_pages._loaders import retriever, workspace
from labeler_pages._open_corpus import just_opened, open_section

st.title("Corpus", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)
me = actor()
show_flash()
summary = st.empty()  # the counts need the built index


def summary_section() -> None:
    """Build (or load) the open corpus's index where the script is, then show its documents, chunks,
    model and index at the top of the page."""
    info = cp.corpus_summary(retriever(path))
    with summary.container():
        c1, c2, c3, c4 = st.columns([1, 1, 3, 1])
        c1.metric("Documents", f"{info.documents:,}")
        c2.metric("Chunks", f"{info.chunks:,}")
        c3.metric("Model", info.model)
        c4.metric("Index", info.index)
        st.caption(cp.source_line(info, me))


if build_here := just_opened():  # "Yes, open it" is at the bottom: the build's progress shows there
    summary.info("Building the index of the corpus just opened: its progress shows under **Open another corpus**.")
else:
    summary_section()
env_corpus = os.environ.get(ws.CORPUS_ENV)
if env_corpus and me.can(Can.OPEN_CORPUS) and ws.normalize_corpus_path(env_corpus) != path:
    st.info(f"`{ws.CORPUS_ENV}` names {inert(env_corpus)}, but this database's golden set is written against the corpus "
            "above, so that one stays open. Hint: open the other one below to switch.")

n_questions = len(guard(db.question_index, s))
if ws.demo_offer(path, s.collection) and me.can(Can.IMPORT_GOLDEN):
    st.info(f"The sample corpus has a 62-question demo golden set; it opens in its own collection, "
            f"{ws.DEMO_COLLECTION!r}, beside this one.")
    st.button("Open the demo golden set", key="corpus-load-demo", on_click=lambda: open_demo(s, me, corp, path))

st.subheader("Documents", anchor=False)
b1, b2 = st.columns([5, 1], vertical_alignment="bottom")
query = b1.text_input("Search by keyword or document id", key="browse_query", placeholder="e.g. expenses")
browse = cp.browse_documents(corp, query, page=b2.number_input("Page", 1, key="browse_page"))
st.caption(browse.caption + f" · page {browse.page} of {browse.pages}")
st.dataframe(pd.DataFrame(rows := browse.rows), hide_index=True, key="browse_table")
if rows:
    doc_id = st.selectbox("Read a document", [r["doc_id"] for r in rows], index=None, key="browse_doc",
                          placeholder="pick one of the documents above")
    if doc_id:
        doc = corp.get(doc_id)
        with st.container(border=True, key="browse-doc"):
            st.markdown(f"**{inert(doc.title or doc.doc_id)}** · {inert_code(doc.doc_id)}")
            st.text(doc.text)

versions = guard(rc.version_rows, s)
if versions:
    st.subheader("Versions", anchor=False)
    st.caption("Each time the corpus's content changed, a new version was recorded with what changed. Grades "
               "given before an edit or deletion are stale until re-checked on the Label page.")
    st.dataframe(pd.DataFrame(versions), hide_index=True, key="versions_table")
    changed = [v["version"] for v in versions if v["added"] or v["deleted"] or v["edited"]]
    if changed and (pick := st.selectbox("What changed in version", changed, index=None, key="version_pick")):
        for kind, ids in guard(rc.version_diff, s, pick).items():
            if ids:
                st.markdown(f"**{kind}** ({len(ids)}): " + ", ".join(inert_code(i) for i in ids[:200])
                            + (" …" if len(ids) > 200 else ""))

open_section(s, me, path, n_questions, build=summary_section if build_here else None)
