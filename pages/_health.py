"""The Golden set page's health section: counts against the targets, per type, disagreements."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import stores as db
from labeler_app import judging_order as jo
from labeler_app.golden_set import GoldenOverview
from labeler_app.text import inert
from labeler_pages._common import guard
from labeler_pages._loaders import incomplete_judging


def health_section(view: GoldenOverview, s=None, path: str = "") -> None:
    """Question count and unanswerable share against their targets, how many questions are likely
    complete (with the store `s` and corpus `path`), then the details."""
    health = view.health
    st.subheader("Health", anchor=False)
    h1, h2, h3, h4 = st.columns(4)
    lo, hi = health.target_questions
    h1.metric("Questions", health.n_questions, help=f"Target {lo}-{hi}.",
              delta="on target" if health.count_ok else f"target {lo}-{hi}",
              delta_color="normal" if health.count_ok else "off")
    slo, shi = health.target_unanswerable_share
    h2.metric("Unanswerable", f"{health.unanswerable_share:.0%}", help=f"Target {slo:.0%}-{shi:.0%} of questions.",
              delta="on target" if health.share_ok else f"target {slo:.0%}-{shi:.0%}",
              delta_color="normal" if health.share_ok else "off")
    h3.metric("Without a relevant document", len(health.without_relevant))
    h4.metric("Annotator disagreements", view.n_disagreements,
              help="Between people: documents graded differently, plus questions some call unanswerable while "
                   "others graded a document relevant. Imported grades are not counted here, in agreement or on "
                   "the Adjudicate page.")
    if view.n_with_import:
        h4.caption(f"+ {view.n_with_import} with the imported grades (not counted; listed under Disagreements)")
    if s is not None and (ids := [q.query_id for q in guard(db.question_index, s)]):
        st.caption(jo.complete_line(len(ids) - incomplete_judging(s, path, ids), len(ids)))
    for warning in [*health.warnings(), view.stale]:
        if warning:
            st.warning(warning)
    if not health.per_type:
        return
    with st.expander("Questions per type, disagreements, agreement", expanded=False):
        t1, t2 = st.columns([1, 2])
        t1.dataframe(pd.DataFrame({"query type": [t or "(untyped)" for t in health.per_type],
                                   "questions": list(health.per_type.values())}), hide_index=True)
        if health.without_relevant:
            t1.caption("No relevant document yet: " + ", ".join(inert(q) for q in health.without_relevant[:30]))
        if view.disagreements:
            t2.markdown(f"**Between annotators** ({view.n_disagreements}): the Adjudicate page queues those on both "
                        "sides of the relevance line or 2+ grades apart.")
            t2.dataframe(pd.DataFrame(list(view.disagreements)), hide_index=True)
        if view.import_differences:
            t2.markdown(f"**With the imported grades** ({view.n_with_import}): not counted in agreement, not "
                        "adjudicated; the exported grade is the consensus of all grades, the imported one included.")
            t2.dataframe(pd.DataFrame(list(view.import_differences)), hide_index=True)
        if view.unanswerable_disagreements:
            t2.caption("Unanswerable or not: a vote never outweighs a relevant grade; to disagree with one, "
                       "grade that document 0.")
            t2.dataframe(pd.DataFrame(list(view.unanswerable_disagreements)), hide_index=True)
        if not view.disagreements and not view.unanswerable_disagreements and not view.import_differences:
            t2.caption("No disagreements: every (question, document) judged by several people got one grade.")
        t2.caption(view.agreement)


def progress_section(rows: list[dict]) -> None:
    """Per-annotator progress: questions judged, judgments, and the pace over the last hours."""
    if rows:
        with st.expander("Progress per annotator", expanded=False):
            st.dataframe(pd.DataFrame(rows), hide_index=True)
