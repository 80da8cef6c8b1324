"""Corpus: what is open (documents, chunks, model, index), open another one, browse documents."""
from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from app import corpus as cp
from app import recheck as rc
from app import workspace as ws
from labeler.paths import SAMPLE_CORPUS
from labeler.text import inert
from app.access import Can
from app.corpus_files import corpus_roots
from views._common import act, actor, flash, guard, show_flash
from views._loaders import workspace

PENDING = "corpus_pending"

st.title("Corpus", anchor=False)
s, path, corp, ret = workspace()
me = actor()
show_flash()
info = cp.corpus_summary(ret)

c1, c2, c3, c4 = st.columns([1, 1, 3, 1])
c1.metric("Documents", f"{info.documents:,}")
c2.metric("Chunks", f"{info.chunks:,}")
c3.metric("Model", info.model)
c4.metric("Index", info.index)
st.caption(cp.source_line(info, me))
env_corpus = os.environ.get(ws.CORPUS_ENV)
if env_corpus and me.can(Can.OPEN_CORPUS) and ws.normalize_corpus_path(env_corpus) != path:
    st.info(f"`{ws.CORPUS_ENV}` names {env_corpus}, but this database's golden set is written against the corpus "
            "above, so that one stays open. Hint: open the other one below to switch.")

n_questions = len(guard(s.question_index))
if ws.demo_offer(path, n_questions) and me.can(Can.IMPORT_GOLDEN):
    st.info("The sample corpus has a 62-question demo golden set.")
    if st.button("Load the demo golden set", key="corpus-load-demo"):
        summary = guard(ws.load_demo_golden, s, me, corp, path)
        st.success(f"Loaded {summary.n_questions} questions with {summary.n_judgments} judgments.")
        n_questions = summary.n_questions  # the database was empty: these are all of them

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
            st.markdown(f"**{inert(doc.title or doc.doc_id)}** · `{doc.doc_id}`", unsafe_allow_html=True)
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
                st.markdown(f"**{kind}** ({len(ids)}): " + ", ".join(f"`{inert(i)}`" for i in ids[:200])
                            + (" …" if len(ids) > 200 else ""))

st.subheader("Open another corpus", anchor=False)
if not me.can(Can.OPEN_CORPUS):
    st.caption("Only an admin can open another corpus: it changes what everyone on this server works on.")
    st.stop()
if n_questions:
    st.caption(f"The golden set has {n_questions} questions written against the open corpus; their document ids "
               "must exist in the new one for their labels to count.")


def _confirm(new_path: str, new_corpus) -> None:
    if act(ws.use_corpus, s, me, new_path, new_corpus):
        flash(f"Opened {new_path}: {len(new_corpus):,} documents.", "success")
    st.session_state.pop(PENDING, None)


if pending := st.session_state.get(PENDING):  # (path, corpus) checked and loaded, waiting for a yes
    st.warning(cp.switch_preview(s, *pending).text)
    y, n = st.columns([1, 6])
    y.button("Yes, open it", key="confirm-open", type="primary", on_click=_confirm, args=pending)
    n.button("Cancel", key="cancel-open", on_click=lambda: st.session_state.pop(PENDING, None))
    st.stop()
sample_tab, path_tab, upload_tab = st.tabs(["Sample corpus", "Path on the server", "Upload"])
with sample_tab:
    st.caption(f"The bundled handbook corpus ({SAMPLE_CORPUS}).")
    if st.button("Open the sample corpus", key="open-sample", disabled=ws.is_sample_corpus(path)):
        st.session_state[PENDING] = guard(cp.open_sample, me)
        st.rerun()
with path_tab:
    roots = ", ".join(f"`{r}`" for r in corpus_roots())
    new = st.text_input("File or folder under a corpus root", key="open_path", help=f"Corpus roots: {roots} "
                        "(set LABELER_CORPUS_ROOTS to change them).",
                        placeholder="corpus.jsonl, a CSV, a BEIR folder, or a folder of .txt/.md files")
    if st.button("Open", key="open-path"):
        if not new.strip():
            st.warning("Type the path of a file or folder under a corpus root first.")
            st.stop()
        st.session_state[PENDING] = guard(cp.open_server_path, me, new.strip())
        st.rerun()
with upload_tab:
    up = st.file_uploader("JSONL, CSV, or a zip of .txt/.md files", type=["jsonl", "json", "ndjson", "csv", "zip"],
                          key="corpus_upload")
    if up is not None and st.button("Check and open", key="open-upload"):
        st.session_state[PENDING] = guard(cp.upload_corpus, me, up.name, up.getvalue())
        st.rerun()
