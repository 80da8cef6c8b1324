"""Evaluate: run a retrieval config against the golden set, see metrics with 95% CIs, per type,
abstention, the worst questions. Every run is saved with its config (compare them on Compare runs)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import evaluate as ev
from labeler_app import judging_order as jo
from labeler_app.text import inert
from labeler_pages._common import HOLES_PARAM, Keys, actor, guard, score_columns
from labeler_pages._config_form import pipeline_section
from labeler_pages._eval_results import abstention_section, metrics_section, results_heading
from labeler_pages._loaders import incomplete_judging, run_corpus, run_holes, saved_runs, workspace
from labeler_pages._pages import page_path
from labeler_pages._systems import endpoint_section, upload_section

st.title("Evaluate", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)

stale_policy = st.segmented_control(
    "Stale labels", ["include", "exclude", "fail"], default="include", key="stale_policy",
    help="Judgments whose document is missing from the corpus or was edited since: score them (and say how "
         "many), leave them out, or refuse to score.") or "include"
system_kind = st.segmented_control("Score", ["Built-in pipeline", "HTTP endpoint", "Run file"],
                                   default="Built-in pipeline", key="system_kind") or "Built-in pipeline"
if system_kind == "HTTP endpoint":
    endpoint_section(s, actor(), corp, path, stale_policy)
elif system_kind == "Run file":
    upload_section(s, actor(), corp, path, stale_policy)
if system_kind == "Built-in pipeline":
    pipeline_section(s, actor(), corp, path, stale_policy)

saved = saved_runs(s)
if not saved:
    st.info("No runs yet. Choose a config above and press **Run evaluation**: every run is saved with its config.")
    st.stop()

ids = [r.run_id for r in saved]
labels = {r.run_id: ev.run_label(r) for r in saved}
if st.session_state.get(Keys.EVAL_RUN) not in ids:
    st.session_state[Keys.EVAL_RUN] = ids[0]
results_heading()
v1, v2 = st.columns([3, 1])
run_id = v1.selectbox("Run", ids, key=Keys.EVAL_RUN, format_func=labels.get)
cutoff = v2.selectbox("Cutoff", ev.CUTOFFS, index=ev.CUTOFFS.index(ev.DEFAULT_CUTOFF), key="eval_cutoff")
just = st.session_state.pop(Keys.JUST_RUN, None)  # computed on this rerun: shown as is, not read back
view = just if just is not None and just.record.run_id == run_id else guard(ev.load_run, s, run_id)
report = view.report
st.caption(view.caption)
scored = [r.query_id for r in report.scored()]
for warning in (view.stale_warning, view.failed_warning, ev.coverage_warning(report, cutoff),
                jo.incomplete_note(incomplete_judging(s, path, scored), len(scored))):
    if warning:
        st.warning(inert(warning))
if rows := view.missing_rows:
    with st.expander(f"Stale judgments per question ({len(rows)} questions)"):
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="stale_table")

metrics_section(report, cutoff)
types = ev.per_type_rows(report, cutoff)
if types:
    st.markdown(f"**Per query type** (@{cutoff})")
    t1, t2 = st.columns([1, 1])
    t1.dataframe(frame := pd.DataFrame(types), hide_index=True, key="per_type_table",
                 column_config=score_columns(frame))
    t2.bar_chart(pd.DataFrame(types), x="query_type", y=[f"ndcg@{cutoff}", f"recall@{cutoff}"], stack=False, height=260)

if report.abstention is not None:
    abstention_section(report, view.record.config)

st.markdown("**Worst questions** (retrieved documents with their grades, and the rank of the first relevant one)")
metric = st.selectbox("By metric", ev.headline_measures(cutoff), index=3, key="worst_metric")
for row in guard(ev.worst_questions, report, metric, 10, run_corpus(view.record.corpus_path, path, corp)):
    with st.expander(row["title"]):
        st.dataframe(frame := pd.DataFrame(row["retrieved"]), hide_index=True, column_config=score_columns(frame))

holes = run_holes(s, run_id)
if holes.n_holes:
    st.markdown("**Judge the holes**: the documents of this run's top 10 that nobody has judged count as not "
                "relevant. Judging them makes its numbers firmer.")
    st.page_link(page_path("label"), label=f"Judge the holes: {holes.text}", icon=":material/rule:",
                 query_params={HOLES_PARAM: str(run_id), Keys.QUESTION: holes.first_question()})
    st.page_link(page_path("judges"), label="Grade the holes with a machine judge", icon=":material/smart_toy:",
                 query_params={"run": str(run_id)})

st.subheader("History", anchor=False)
st.dataframe(frame := pd.DataFrame(ev.history_rows(saved)), hide_index=True, key="history_table",
             column_config=score_columns(frame))
