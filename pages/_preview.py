"""Quick metric previews (labeler_app.preview): one line on the Label page for the current question, and
the whole set's means on the Golden set page, both from rankings already computed."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from labeler.candidates import Candidate
from labeler_app import preview as pv
from labeler_app import stores as db
from labeler_app.stores import QuestionStatus, Store
from labeler_pages._common import guard
from labeler_pages._loaders import bm25_pooled, dense_status, pooled
from labeler_pages._pages import page_path


def metric_preview(qid: str, status: QuestionStatus, candidates: Sequence[Candidate], systems: Sequence[str]) -> None:
    """How each pooled retriever ranks this question's judgments so far, updated with each grade."""
    grades = pv.golden_grades(status.consensus, status.adjudicated)
    previews = pv.question_preview(qid, grades, candidates, systems)
    if previews:
        st.caption(pv.preview_line(previews), help="Scored by the same metric functions as Evaluate, on the candidates' own rankings (each "
                        "retriever's top 10): no new search. Unjudged documents count as not relevant; \"none\": no relevant "
                        "document in that retriever's top 10.")


PREVIEW_STATE = "set_preview"  # (database revision, rows, note): shown until the next write


def _run_set_preview(s: Store, path: str) -> None:
    building = dense_status(path, wait=False)
    if building is None:
        previews = guard(pv.golden_preview, s, lambda question: pooled(path, question))
        note = ""
    else:  # the dense index is still being built: BM25 alone, said so
        previews = guard(pv.golden_preview, s, lambda question: bm25_pooled(path, question), ("bm25",))
        note = f"Dense is left out: its index is still being built ({building.text})."
    st.session_state[PREVIEW_STATE] = (guard(db.revision, s), pv.preview_rows(previews), note)


def set_preview_section(s: Store, path: str) -> None:
    """The Golden set page's quick preview: dense and BM25 means over the set, from the Label page's
    pooled rankings (each retriever's top 10, cached), with a link to a full Evaluate run."""
    with st.container(border=True, key="set-preview"):
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.markdown(f"**Quick preview** — recall, MRR and nDCG at {pv.PREVIEW_K} of dense and BM25 on the "
                      "answerable judged questions, each beside judged@10, from the candidates' rankings.")
        right.button("Preview dense and BM25", key="set-preview-run", icon=":material/speed:", on_click=_run_set_preview,
                     args=(s, path))
        shown = st.session_state.get(PREVIEW_STATE)
        if shown and shown[0] == guard(db.revision, s):
            if shown[2]:
                st.caption(shown[2])
            if shown[1]:
                st.dataframe(shown[1], hide_index=True, key="set-preview-table")
            else:
                st.caption("No answerable question has a judgment yet.")
        st.page_link(page_path("evaluate"), label="Full evaluation on the Evaluate page: every cutoff, confidence "
                     "intervals, a saved run", icon=":material/query_stats:")
