"""Golden set: every question with its labels; filter, edit, delete; health; downloads; upload."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler import app_service as svc
from labeler.errors import GoldenFormatError, LabelerError
from pages._common import flash, guard, show_flash, workspace

st.title("Golden set", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)
show_flash()
statuses = s.list_questions()

# ---- health

health = s.health()
st.subheader("Health", anchor=False)
h1, h2, h3, h4 = st.columns(4)
lo, hi = health.target_questions
h1.metric("Questions", health.n_questions, help=f"Target {lo}-{hi}.",
          delta="on target" if health.count_ok else f"target {lo}-{hi}", delta_color="normal" if health.count_ok else "off")
slo, shi = health.target_unanswerable_share
h2.metric("Unanswerable", f"{health.unanswerable_share:.0%}", help=f"Target {slo:.0%}-{shi:.0%} of questions.",
          delta="on target" if health.share_ok else f"target {slo:.0%}-{shi:.0%}",
          delta_color="normal" if health.share_ok else "off")
h3.metric("Without a relevant document", len(health.without_relevant))
disagreements = svc.disagreement_rows(s)
h4.metric("Annotator disagreements", len(disagreements))
for warning in health.warnings():
    st.warning(warning)
if health.per_type:
    with st.expander("Questions per type, disagreements, agreement", expanded=False):
        t1, t2 = st.columns([1, 2])
        t1.dataframe(pd.DataFrame({"query type": [t or "(untyped)" for t in health.per_type],
                                   "questions": list(health.per_type.values())}), hide_index=True)
        if health.without_relevant:
            t1.caption("No relevant document yet: " + ", ".join(health.without_relevant[:30]))
        if disagreements:
            t2.dataframe(pd.DataFrame(disagreements), hide_index=True)
        else:
            t2.caption("No disagreements: every (question, document) judged by several people got one grade.")
        t2.caption(svc.agreement_summary(s))

# ---- table with filters

st.subheader("Questions", anchor=False)
if not statuses:
    st.info("No questions yet. Write some on the Label page, or upload a golden JSONL below.")
else:
    f1, f2, f3 = st.columns([3, 2, 2])
    needle = f1.text_input("Filter by text or id", key="golden_filter")
    types = f2.multiselect("Query type", svc.query_types(statuses), key="golden_types")
    wanted = f3.multiselect("Status", ["done", "unanswerable", "started", "new"], key="golden_status")
    rows = svc.golden_rows(statuses, text=needle, types=types, status_in=wanted)
    st.caption(f"{len(rows)} of {len(statuses)} questions")
    st.dataframe(pd.DataFrame(rows, columns=["query_id", "question", "type", "status", "judged", "relevant",
                                             "labels", "annotators", "updated"]),
                 hide_index=True, key="golden_table",
                 column_config={"question": st.column_config.TextColumn(width="large"),
                                "labels": st.column_config.TextColumn(width="medium")})

    # ---- edit / delete one question
    by_id = {x.question.query_id: x for x in statuses}
    shown_ids = [r["query_id"] for r in rows] or list(by_id)
    with st.container(border=True):
        st.markdown("**Edit or delete a question**")
        chosen = st.selectbox("Question", shown_ids, key="golden_edit_id",
                              format_func=lambda q: svc.question_choice_label(by_id[q]))
        q = by_id[chosen].question

        def _save(query_id: str) -> None:
            try:
                s.edit_question(query_id, text=st.session_state[f"edit_text_{query_id}"],
                                query_type=(st.session_state[f"edit_type_{query_id}"] or "").strip(),
                                notes=st.session_state[f"edit_notes_{query_id}"])
                flash(f"Saved {query_id}.", "success")
            except LabelerError as exc:
                flash(str(exc))

        def _delete(query_id: str) -> None:
            try:
                s.delete_question(query_id)
                flash(f"Deleted {query_id} and its judgments.", "success")
            except LabelerError as exc:
                flash(str(exc))
            st.session_state.pop("confirm_delete", None)

        with st.form(f"edit-{chosen}", border=False):
            st.text_area("Question text", q.text, key=f"edit_text_{chosen}", height=68)
            e1, e2 = st.columns(2)
            e1.text_input("Query type", q.query_type, key=f"edit_type_{chosen}")
            e2.text_input("Notes", q.notes, key=f"edit_notes_{chosen}")
            st.form_submit_button("Save changes", on_click=_save, args=(chosen,))
        if st.session_state.get("confirm_delete") == chosen:
            st.warning(f"Delete **{chosen}** and all {len(by_id[chosen].judgments)} of its judgments? "
                       "This cannot be undone.")
            d1, d2 = st.columns([1, 6])
            d1.button("Yes, delete", key="confirm-delete", type="primary", on_click=_delete, args=(chosen,))
            d2.button("Cancel", key="cancel-delete", on_click=lambda: st.session_state.pop("confirm_delete", None))
        else:
            st.button("Delete…", key="delete-question", icon=":material/delete:",
                      on_click=lambda qid=chosen: st.session_state.update(confirm_delete=qid))

# ---- downloads

st.subheader("Download", anchor=False)
golden = s.export_golden()
files = svc.golden_downloads(golden)
d1, d2, d3 = st.columns(3)
for col, (fmt, label) in zip((d1, d2, d3), (("jsonl", "Golden JSONL"), ("trec", "TREC qrels"), ("beir", "BEIR (zip)"))):
    item = files[fmt]
    if isinstance(item, str):
        col.error(item)
    else:
        data, name, mime = item
        col.download_button(label, data, file_name=name, mime=mime, key=f"download-{fmt}",
                            icon=":material/download:", on_click="ignore", disabled=not golden.queries)

# ---- upload

st.subheader("Upload a golden JSONL", anchor=False)
uploaded = st.file_uploader("Golden JSONL file", type=["jsonl", "json", "ndjson"], key="golden_upload")
u1, u2 = st.columns(2)
keep_scale = u1.checkbox("Keep the file's own grade scale", key="keep_scale",
                         help="For collections graded on another scale (e.g. Cranfield's -1 and 1-4).")
check_ids = u2.checkbox("Refuse documents missing from the corpus", value=True, key="check_ids")
if uploaded is not None and st.button("Import", key="import-golden", type="primary"):
    try:
        summary = svc.import_golden_file(s, uploaded, corp, path, keep_scale=keep_scale, check_doc_ids=check_ids)
    except GoldenFormatError as exc:
        st.error(f"{uploaded.name}: {len(exc.problems)} bad line(s); nothing was imported."
                 + (f" Hint: {exc.hint}" if exc.hint else ""))
        st.dataframe(pd.DataFrame([{"line": p.line, "problem": p.reason} for p in exc.problems]),
                     hide_index=True, key="upload_problems")
    except LabelerError as exc:
        st.error(str(exc))
    else:
        st.success(f"Imported {summary.n_questions} questions ({summary.n_new} new, {summary.n_updated} updated, "
                   f"{summary.n_judgments} judgments, {summary.n_unanswerable} unanswerable).")
        st.button("Show them", key="refresh-after-import")
